// The two capacity workloads, which measure a server holding very many locks rather than a
// stream of operations:
//   (d) memory per held lock: RSS of the server before and after loading N holds with a
//       one-hour TTL (pipelined try-acquires over a few connections), divided by N;
//   (e) restart time (Holdfast only): load N holds, kill -9, start again on the same data
//       folder and time until it answers PING; then check that sampled holds survived.
#pragma once

#include <cstdint>
#include <string>

#include "target.h"
#include "targets/holdfast_target.h"

namespace holdfast::bench {

struct LoadResult {
  std::uint64_t granted = 0;
  std::uint64_t busy = 0;
  std::uint64_t errors = 0;
  double seconds = 0;
  std::string first_error;
};

// The lease of holds loaded only to fill a server: longer than any run.
inline constexpr std::uint32_t kHourMs = 3'600'000;

// Try-acquires locks [first_lock, first_lock + count) with `ttl_ms`, `depth` requests in
// flight on each of `connections` connections. Throws std::runtime_error if a connection
// cannot be opened.
LoadResult load_holds(Target& target, std::uint64_t first_lock, std::uint64_t count,
                      std::uint32_t ttl_ms, int connections = 4, int depth = 64);

struct MemoryResult {
  std::string target;
  std::uint64_t holds = 0;  // requested
  LoadResult load;
  std::int64_t rss_before = 0, rss_after = 0;
  double bytes_per_hold = 0;
  bool failed = false;
  std::string failure;
};

// REQUIRES: `target` freshly started (nothing held). RSS is read `settle_ms` after the server
// went quiet, so that background work a load started (Redis rehashes its dictionary
// incrementally) has finished.
MemoryResult measure_memory(Target& target, std::uint64_t holds, int settle_ms = 1000);

struct RestartResult {
  std::string target;
  std::uint64_t holds = 0;
  LoadResult load;
  double empty_restart_ms = 0;  // the same server restarted with nothing held: the fixed cost
  double restart_ms = 0;
  std::uint64_t sampled = 0, still_held = 0;
  // --fsync horizon: how long after the restart the server granted nothing new (INFO's
  // recovering_until_ms), against the longest lease it had answered. -1: not that mode.
  double quarantine_ms = -1;
  double longest_lease_ms = 0;
  bool failed = false;
  std::string failure;
};

// REQUIRES: `target` freshly started (nothing held).
RestartResult measure_restart(HoldfastTarget& target, std::uint64_t holds);

}  // namespace holdfast::bench
