// ClusterRows: what the nodes of one cluster share besides the holds, each as one statement:
//
//  - holdfast_nodes: a node registers at start and heartbeats its row (database clock), which
//    also keeps when its unbroken contact with the database began; the session holds of a
//    node are freed by a live node only as the rule of schema_liveness.cc allows
//    (HoldRows::free_dead_sessions), and its row is forgotten under the same rule. A node
//    that finds its own row gone (it was presumed dead, e.g. cut off for longer than the
//    grace while other nodes were not) writes it again and says so: its session holds
//    granted before the grace were freed meanwhile.
//  - holdfast_rule_set: the one lock rule set; every change draws a new version from
//    holdfast_rule_versions and notifies 'holdfast_rules', so nodes reload their compiled copy.
//  - holdfast_rate: acquire attempts per member user per minute; a rolling hour is the last 60
//    minutes (the embedded limiter's window, shared by every node).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "service/postgres/pg_pool.h"

namespace holdfast::pg {

inline constexpr char kRulesChannel[] = "holdfast_rules";

struct StoredRuleSet {
  std::string name;
  std::string toml;
  std::int64_t version = 0;
};

// The outcome of pushing a rule set.
struct RulePut {
  bool stored = false;    // false: another name is installed (RULESET_CONFLICT)
  bool replaced = false;  // a set of the same name was replaced
  std::int64_t version = 0;
  std::string installed_name;  // when !stored
};

struct RateDecision {
  bool allowed = true;
  Millis retry_after_ms = 0;  // when not allowed
};

class ClusterRows {
 public:
  explicit ClusterRows(PgPool& pool) : pool_(pool) {}
  static std::vector<Statement> statements();

  Result<std::int64_t> register_node(std::string_view name);
  // True when the row had to be written again (the node had been presumed dead). A gap over
  // gap_ms since the last heartbeat begins the node's contact again.
  Result<bool> heartbeat(std::int64_t node_id, std::string_view name, Millis gap_ms);
  Status forget_node(std::int64_t node_id);
  // Rows of nodes whose session holds the rule lets `judge` free (schema_liveness.cc).
  Status forget_dead_nodes(std::int64_t judge, Millis grace_ms, Millis gap_ms);

  Result<std::optional<StoredRuleSet>> rule_set();
  // 0 when none is installed.
  Result<std::int64_t> rule_set_version();
  Result<RulePut> put_rule_set(std::string_view name, std::string_view toml);
  // False when no set of that name is installed.
  Result<bool> delete_rule_set(std::string_view name);

  // Counts one acquire attempt for `user` if fewer than `cap` were made in the rolling hour.
  // Two attempts racing on different connections may both see room for one: the cap can be
  // passed by the number of such simultaneous attempts, never more.
  Result<RateDecision> consume_attempt(std::string_view user, std::int64_t cap);
  Status trim_rate_windows();

 private:
  PgPool& pool_;
};

}  // namespace holdfast::pg
