// (n) Hand-off latency: how long a waiter that is already blocked on a key waits once its holder
// lets go, from the release leaving the holder's client to the grant reaching the waiter's.
// Holdfast: a LOCK.ACQUIRE waiting in the server's queue and the holder's LOCK.RELEASE, on one
// server, and over PostgreSQL with both clients on one node or on two (docs/scale-out.md,
// "Waiting across nodes"). PostgreSQL advisory locks: a session blocked in pg_advisory_lock and
// the holder's pg_advisory_unlock. One hand-off at a time, so each figure is the latency of a
// hand-off alone, not the wait in a queue that (b) measures.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace holdfast::bench {

struct HandoffResult {
  std::string target;
  std::string path;        // where the holder and the waiter are, e.g. "node 1 → node 2"
  std::vector<double> us;  // each hand-off's latency, in the order measured
  std::string failure;     // non-empty: the measurement stopped there

  // The q-quantile (0..1) of `us`, 0 when empty.
  double quantile(double q) const;
};

// How long a waiter's request is given to reach its queue before the release is sent: a node
// over PostgreSQL registers the wait and makes a first attempt first. Generous on a busy host.
inline constexpr int kHandoffSettleMs = 30;

// `count` hand-offs of one key between a holder on RESP port `holder_port` and a waiter on
// `waiter_port` (Holdfast's LOCK.ACQUIRE / LOCK.RELEASE).
HandoffResult resp_handoffs(std::uint16_t holder_port, std::uint16_t waiter_port, int count,
                            std::string target, std::string path);

// `count` hand-offs of one advisory lock between two sessions of the PostgreSQL at `conninfo`.
HandoffResult advisory_handoffs(const std::string& conninfo, int count, std::string target);

// The report's table of (n); nothing when it did not run.
void handoff_table(std::ostream& out, const std::vector<HandoffResult>& results);

}  // namespace holdfast::bench
