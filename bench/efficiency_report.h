// The report's efficiency part: the pairs of (g), taken with a client that sleeps as client
// libraries do, and the quiet server of (h), each checked against its goal (throughput at least
// the peer's at every connection count, server CPU per pair at most the peer's, an idle server
// under 1 % of a core, a lightly loaded one cheaper than the peer).
#pragma once

#include <ostream>
#include <string>

#include "suite.h"

namespace holdfast::bench {

// The peer a Holdfast target is measured against ("" for a peer): its own durability in Redis
// for the embedded server (Redis without persistence for --fsync horizon, which syncs no
// operation), PostgreSQL for nodes over it.
std::string peer_of(const std::string& target);

// The goals table of (g) and (h); nothing when neither ran.
void efficiency_goals_table(std::ostream& out, const SuiteResults& results);

// (h)'s figures per target.
void idle_table(std::ostream& out, const SuiteResults& results);

}  // namespace holdfast::bench
