#include "service/postgres/cluster_rows.h"

#include "service/postgres/schema.h"

namespace holdfast::pg {
namespace {

// $1 name.
const std::string kRegister = kWithNow + R"sql(
INSERT INTO holdfast_nodes (name, started_at, heartbeat_at, contact_since)
SELECT $1, now.ms, now.ms, now.ms FROM now
RETURNING id)sql";

// $1 id, $2 name, $3 gap. xmax = 0 marks a row that was inserted, not updated. The node's
// contact with the database begins again after a gap over $3 since its last heartbeat
// (schema_liveness.cc: a judge's verdicts count only its unbroken contact).
const std::string kHeartbeat = kWithNow + R"sql(
INSERT INTO holdfast_nodes AS n (id, name, started_at, heartbeat_at, contact_since)
SELECT $1::bigint, $2, now.ms, now.ms, now.ms FROM now
ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at,
  contact_since = CASE WHEN EXCLUDED.heartbeat_at - n.heartbeat_at <= $3::bigint
                       THEN coalesce(n.contact_since, n.heartbeat_at)
                       ELSE EXCLUDED.heartbeat_at END
RETURNING (n.xmax = 0))sql";

// $1 judge, $2 grace, $3 gap: the rows of nodes whose session holds the rule would free
// (schema_liveness.cc). Holds granted within the grace stay without their row, so the row
// may go first (pg_housekeeper.cc says why it does).
const std::string kForgetDead = kWithNow + R"sql(
DELETE FROM holdfast_nodes n USING now
 WHERE holdfast_session_lapsed(n.id, NULL, holdfast_judge_since($1::bigint, now.ms, $3::bigint),
                               now.ms, $2::bigint))sql";

// $1 name, $2 toml. Replaces only a set of the same name; no row back means a conflict.
const std::string kPutRules = R"sql(
WITH put AS (
  INSERT INTO holdfast_rule_set AS r (id, name, toml, version)
  VALUES (1, $1, $2, nextval('holdfast_rule_versions'))
  ON CONFLICT (id) DO UPDATE SET toml = EXCLUDED.toml, version = EXCLUDED.version
  WHERE r.name = EXCLUDED.name
  RETURNING (r.xmax <> 0) AS replaced, r.version)
SELECT put.replaced, put.version, pg_notify('holdfast_rules', put.version::text) FROM put)sql";

// $1 name.
const std::string kDeleteRules = R"sql(
WITH gone AS (DELETE FROM holdfast_rule_set WHERE id = 1 AND name = $1 RETURNING version)
SELECT pg_notify('holdfast_rules', '0') FROM gone)sql";

// $1 user, $2 cap. The window is the current minute and the 59 before it.
const std::string kConsume = kWithNow + R"sql(,
win AS (SELECT coalesce(sum(r.attempts), 0) AS total, min(r.minute) AS oldest
          FROM holdfast_rate r, now
         WHERE r.user_id = $1 AND r.minute > now.ms / 60000 - 60),
bump AS (INSERT INTO holdfast_rate AS r (user_id, minute, attempts)
         SELECT $1, now.ms / 60000, 1 FROM now, win WHERE win.total < $2::bigint
         ON CONFLICT (user_id, minute) DO UPDATE SET attempts = r.attempts + 1
         RETURNING 1)
SELECT EXISTS (SELECT 1 FROM bump), win.oldest, now.ms FROM win, now)sql";

const std::string kTrimRate = kWithNow + R"sql(
DELETE FROM holdfast_rate r USING now WHERE r.minute <= now.ms / 60000 - 60)sql";

}  // namespace

std::vector<Statement> ClusterRows::statements() {
  return {
      {"hf_node_register", kRegister},
      {"hf_node_heartbeat", kHeartbeat},
      {"hf_node_forget", "DELETE FROM holdfast_nodes WHERE id = $1::bigint"},
      {"hf_nodes_forget_dead", kForgetDead},
      reading("hf_rules_get", "SELECT name, toml, version FROM holdfast_rule_set WHERE id = 1"),
      reading("hf_rules_version", "SELECT coalesce(max(version), 0) FROM holdfast_rule_set"),
      {"hf_rules_put", kPutRules},
      reading("hf_rules_name", "SELECT name FROM holdfast_rule_set WHERE id = 1"),
      {"hf_rules_delete", kDeleteRules},
      {"hf_rate_consume", kConsume},
      {"hf_rate_trim", kTrimRate},
  };
}

Result<std::int64_t> ClusterRows::register_node(std::string_view name) {
  auto rows = pool_.run("hf_node_register", Params().text(name));
  if (!rows.ok()) return std::move(rows).error();
  return rows->number(0, 0);
}

Result<bool> ClusterRows::heartbeat(std::int64_t node_id, std::string_view name, Millis gap_ms) {
  auto rows = pool_.run("hf_node_heartbeat", Params().number(node_id).text(name).number(gap_ms));
  if (!rows.ok()) return std::move(rows).error();
  return rows->boolean(0, 0);
}

Status ClusterRows::forget_node(std::int64_t node_id) {
  auto rows = pool_.run("hf_node_forget", Params().number(node_id));
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

Status ClusterRows::forget_dead_nodes(std::int64_t judge, Millis grace_ms, Millis gap_ms) {
  auto rows =
      pool_.run("hf_nodes_forget_dead", Params().number(judge).number(grace_ms).number(gap_ms));
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

Result<std::optional<StoredRuleSet>> ClusterRows::rule_set() {
  auto rows = pool_.run("hf_rules_get", Params());
  if (!rows.ok()) return std::move(rows).error();
  if (rows->empty()) return std::optional<StoredRuleSet>();
  return std::optional<StoredRuleSet>(StoredRuleSet{
      std::string(rows->text(0, 0)), std::string(rows->text(0, 1)), rows->number(0, 2)});
}

Result<std::int64_t> ClusterRows::rule_set_version() {
  auto rows = pool_.run("hf_rules_version", Params());
  if (!rows.ok()) return std::move(rows).error();
  return rows->number(0, 0);
}

Result<RulePut> ClusterRows::put_rule_set(std::string_view name, std::string_view toml) {
  auto rows = pool_.run("hf_rules_put", Params().text(name).text(toml));
  if (!rows.ok()) return std::move(rows).error();
  RulePut out;
  if (!rows->empty()) {
    out.stored = true;
    out.replaced = rows->boolean(0, 0);
    out.version = rows->number(0, 1);
    return out;
  }
  auto installed = pool_.run("hf_rules_name", Params());
  if (!installed.ok()) return std::move(installed).error();
  if (installed->empty()) {
    // Deleted between the two statements: the slot is free now, so try once more.
    return put_rule_set(name, toml);
  }
  out.installed_name = std::string(installed->text(0, 0));
  return out;
}

Result<bool> ClusterRows::delete_rule_set(std::string_view name) {
  auto rows = pool_.run("hf_rules_delete", Params().text(name));
  if (!rows.ok()) return std::move(rows).error();
  return !rows->empty();
}

Result<RateDecision> ClusterRows::consume_attempt(std::string_view user, std::int64_t cap) {
  auto rows = pool_.run("hf_rate_consume", Params().text(user).number(cap));
  if (!rows.ok()) return std::move(rows).error();
  RateDecision d;
  d.allowed = rows->boolean(0, 0);
  if (!d.allowed) {
    constexpr Millis kMinute = 60'000;
    const Millis now = rows->number(0, 2);
    // The oldest minute still in the window leaves it 60 minutes after it began.
    const auto oldest = rows->maybe_number(0, 1);
    d.retry_after_ms = oldest ? (*oldest + 60) * kMinute - now : kMinute;
    if (d.retry_after_ms <= 0) d.retry_after_ms = 1;
  }
  return d;
}

Status ClusterRows::trim_rate_windows() {
  auto rows = pool_.run("hf_rate_trim", Params());
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

}  // namespace holdfast::pg
