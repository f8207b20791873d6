// One torture run against one backend: start the real server (embedded, or a node over a
// throw-away PostgreSQL), put the contended load on it, and inject faults one after another
// for the configured time, each kind at least once, with a calm moment of load between them.
// After each fault every key must be granted again within its lease plus a bound; at the end
// the History is checked and the Report printed. A client that vanished while holding comes
// back after the key was granted again, as a holder paused past its lease would, and writes
// with its old token: the fenced resource must refuse it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "torture/fault_kind.h"

namespace holdfast::torture {

struct TortureOptions {
  std::string backend = "embedded";  // or "postgres", or "failover"
  std::int64_t seconds = 20;
  int workers = 6;
  int keys = 3;
  std::int64_t ttl_ms = 800;
  // A key must be granted again within ttl_ms + bound_ms of a fault's end (the disk retry is
  // every second; a restarted node needs a moment to reconnect).
  std::int64_t bound_ms = 2500;
  unsigned seed = 1;
  // The embedded server's --fsync. "never" may lose answered grants to kill -9: a way to see
  // the checks catch what they are for.
  std::string fsync = "always";
  std::vector<FaultKind> faults;  // empty: every kind the backend supports
  // clock-jump moves the monotonic clock too, which no real clock step does (a negative
  // control: the embedded server's leases then follow the jump).
  bool clock_monotonic_too = false;

  // The failover backend (failover_run.h).
  std::string setup = "both";  // "multi-host", "proxy" or both, one after the other
  std::int64_t session_grace_ms = 10'000;
  std::int64_t statement_deadline_ms = 3'000;
  std::int64_t promote_after_ms = 0;        // primary-kill9: 0 means the grace plus 2 s
  std::int64_t promotion_bound_ms = 2'000;  // every node grants again within this of a promotion
                                            // (0: measured only, as ctest runs it)
  bool async_replication = false;           // negative control: the standby is asynchronous
  // Negative control: right after each promotion the program frees session holds by the rule
  // of nodes before schema version 8 (a node's heartbeat older than the grace), as an older node
  // would.
  bool legacy_sweep = false;
};

enum class Outcome { kPassed, kFailed, kSkipped };

// Prints progress and the summary on `out`; a backend that cannot run here (no PostgreSQL)
// is skipped with the reason.
Outcome run_torture(const TortureOptions& options, std::ostream& out);

}  // namespace holdfast::torture
