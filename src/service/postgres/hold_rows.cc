#include "service/postgres/hold_rows.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "service/postgres/hold_sets.h"
#include "service/postgres/hold_sql.h"
#include "service/postgres/schema.h"

namespace holdfast::pg {

std::int64_t mode_number(LockMode m) {
  return m == LockMode::kShared ? 1 : m == LockMode::kSemaphore ? 2 : 0;
}

LockMode mode_of_number(std::int64_t m) {
  return m == 1 ? LockMode::kShared : m == 2 ? LockMode::kSemaphore : LockMode::kExclusive;
}

namespace {

using sql::free_rows;
using sql::grant_upsert;
using sql::in_key_order;
using sql::kHoldCols;
using sql::kNotifyFreed;
using sql::kRowMode;
using sql::live;

// When a grant statement granted nothing: the instant the key may be granted, as far as the
// current row tells (its lease end plus its lock-delay), in column 8, and the mode of the row
// in the way, if live.
const std::string kInTheWay =
    R"sql(SELECT false, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       h.lease_expires_at + h.lock_delay_ms, NULL, NULL, NULL, now.ms, false, CASE WHEN )sql" +
    live("h", "now.ms") + R"sql( THEN )sql" + kRowMode + R"sql( END, h.permit_limit
  FROM now LEFT JOIN holdfast_holds h ON h.key = $1
 WHERE NOT EXISTS (SELECT 1 FROM granted))sql";

// $1 key, $2 handle, $3 held_by, $4 owner, $5 ttl, $6 scope, $7 node, $8 session,
// $9 lock-delay. A key is free once its lease and then its lock-delay have ended; a re-take
// needs a live hold (an expired one is gone, and its lock-delay closes the key to its holder too).
// The second branch reports the current hold's lease end when nothing was granted; it reads
// the statement's snapshot, so a hold committed by a racing node may be missing from it (the
// waiter then relies on the notification or its periodic check).
std::string acquire_sql(bool retake = true) {
  return kWithNow + ",\ngranted AS (\n" +
         grant_upsert(
             R"sql(SELECT $1, $2, nextval('holdfast_tokens'), $3, $4, NULL, now.ms, now.ms + $5::bigint,
         $6::smallint, 0, $7::bigint, $8::bigint, $9::bigint FROM now)sql",
             retake) +
         R"sql()
SELECT true, g.*, now.ms, false, 0::smallint, NULL::integer FROM granted g, now
UNION ALL
)sql" + kInTheWay;
}

// Same parameters as acquire; only the re-take of a live handle hold.
std::string retake_sql() {
  return kWithNow + R"sql(
UPDATE holdfast_holds h SET handle = $2, token = nextval('holdfast_tokens'), acquired_at = now.ms,
       lease_expires_at = now.ms + $5::bigint, scope = $6::smallint, node_id = $7::bigint,
       session_id = $8::bigint, lock_delay_ms = $9::bigint
  FROM now
 WHERE h.key = $1 AND h.kind = 0 AND h.held_by = $3 AND h.owner = $4::text
   AND h.lease_expires_at > now.ms
RETURNING true, )sql" +
         kHoldCols + ", now.ms, false";
}

// $1 key, $2 held_by, $3 holder_id, $4 ttl (NULL: never ends), $5 lock-delay. A live hold of
// the same holder keeps token, heldBy, acquiredAt and lock-delay and only takes the new lease
// end; `refreshed` is told apart by the token: a fresh grant's token is the number this
// statement drew.
std::string assign_sql() {
  const std::string was_live = live("h", "EXCLUDED.acquired_at");
  return kWithNow + R"sql(,
granted AS (
  INSERT INTO holdfast_holds AS h (key, handle, token, held_by, owner, holder_id, acquired_at,
                                   lease_expires_at, scope, kind, node_id, session_id,
                                   lock_delay_ms)
  SELECT $1, NULL, nextval('holdfast_tokens'), $2, NULL, $3, now.ms, now.ms + $4::bigint,
         0, 1, NULL, NULL, $5::bigint FROM now
  ON CONFLICT (key) DO UPDATE SET
    handle = NULL, owner = NULL, holder_id = EXCLUDED.holder_id,
    lease_expires_at = EXCLUDED.lease_expires_at, scope = 0, kind = 1, node_id = NULL,
    session_id = NULL, mode = 0, permit_limit = NULL,
    token = CASE WHEN )sql" +
         was_live + R"sql( THEN h.token ELSE nextval('holdfast_tokens') END,
    held_by = CASE WHEN )sql" +
         was_live + R"sql( THEN h.held_by ELSE EXCLUDED.held_by END,
    acquired_at = CASE WHEN )sql" +
         was_live + R"sql( THEN h.acquired_at ELSE EXCLUDED.acquired_at END,
    lock_delay_ms = CASE WHEN )sql" +
         was_live + R"sql( THEN h.lock_delay_ms ELSE EXCLUDED.lock_delay_ms END
  WHERE h.lease_expires_at + h.lock_delay_ms <= EXCLUDED.acquired_at
     OR (h.kind = 1 AND h.holder_id = EXCLUDED.holder_id AND )sql" +
         was_live + R"sql()
  RETURNING )sql" +
         kHoldCols + R"sql()
SELECT true, g.*, now.ms, g.token <> currval('holdfast_tokens'), 0::smallint, NULL::integer
  FROM granted g, now
UNION ALL
)sql" + kInTheWay;
}

// $1 key, $2 holder_id, $3 ttl (NULL: never ends).
std::string refresh_sql() {
  return kWithNow + R"sql(
UPDATE holdfast_holds h SET lease_expires_at = now.ms + $3::bigint
  FROM now
 WHERE h.key = $1 AND h.kind = 1 AND h.holder_id = $2 AND )sql" +
         live("h", "now.ms") + R"sql(
RETURNING true, )sql" +
         kHoldCols + ", now.ms, true";
}

// $1 key, $2 handle, $3 ttl.
// Same parameters as acquire: a live handle hold of the same principal ($3) is replaced,
// whatever its owner (a plain SET of the Redis idiom), with a new handle, token and owner.
std::string take_over_sql() {
  return kWithNow + R"sql(
UPDATE holdfast_holds h SET handle = $2, token = nextval('holdfast_tokens'), owner = $4::text,
       acquired_at = now.ms, lease_expires_at = now.ms + $5::bigint, scope = $6::smallint,
       node_id = $7::bigint, session_id = $8::bigint, lock_delay_ms = $9::bigint
  FROM now
 WHERE h.key = $1 AND h.kind = 0 AND h.held_by = $3 AND h.lease_expires_at > now.ms
RETURNING true, )sql" +
         kHoldCols + ", now.ms, false";
}

// $1 key, $2 amount, $3 absolute (an instant rather than a TTL), $4 the token of the hold seen:
// moves that hold's lease end, whoever holds it (PEXPIRE of the Redis idiom).
std::string extend_sql() {
  return kWithNow + R"sql(
UPDATE holdfast_holds h
   SET lease_expires_at = CASE WHEN $3::boolean THEN $2::bigint ELSE now.ms + $2::bigint END
  FROM now
 WHERE h.key = $1 AND h.held_by <> '' AND h.token = $4::bigint AND )sql" +
         live("h", "now.ms") + "\nRETURNING h.lease_expires_at";
}

// Frees the live or session rows matching `where` (hold_sql.h, free_rows) and notifies each
// key that some node waits for.
std::string free_and_notify_sql(const std::string& where, bool vanished = false) {
  return kWithNow + ",\n" + free_rows(where, vanished) + ",\n" + sql::kWaitedFreed +
         "\nSELECT freed.key, " + kNotifyFreed + " FROM freed, waited";
}

// A row free (lock-delay over) for longer than $1 ms.
const std::string kSweepable = "h.lease_expires_at + h.lock_delay_ms <= now.ms - $1::bigint";

std::string find_sql(const std::string& where, const std::string& tail) {
  return kWithNow + "\nSELECT true, " + kHoldCols + ", now.ms, false, " + kRowMode +
         ", h.permit_limit FROM holdfast_holds h, now\n WHERE " + where + " AND " +
         live("h", "now.ms") + tail;
}

// $1 key, $2 to_id, $3 from_id, $4 held_by. The lease carries over; the token is new.
std::string transfer_sql() {
  return kWithNow + R"sql(
UPDATE holdfast_holds h SET token = nextval('holdfast_tokens'), held_by = $4, holder_id = $2,
       acquired_at = now.ms
  FROM now
 WHERE h.key = $1 AND h.kind = 1 AND h.holder_id = $3 AND )sql" +
         live("h", "now.ms") + R"sql(
RETURNING true, )sql" +
         kHoldCols + ", now.ms, false";
}

HoldState hold_from(const Rows& rows, int r) {
  HoldState h;
  h.key = std::string(rows.text(r, 1));
  if (!rows.is_null(r, 2)) h.handle = Handle::parse(rows.text(r, 2)).value_or(Handle{});
  h.token = static_cast<std::uint64_t>(rows.number(r, 3));
  h.held_by = std::string(rows.text(r, 4));
  h.owner = rows.maybe_text(r, 5).value_or("");
  h.holder_id = rows.maybe_text(r, 6).value_or("");
  h.acquired_at = rows.number(r, 7);
  h.lease_expires_at = rows.maybe_number(r, 8).value_or(kNever);
  h.scope = rows.number(r, 9) == 1 ? Scope::kSession : Scope::kLease;
  h.kind = rows.number(r, 10) == 1 ? HoldKind::kAssigned : HoldKind::kHandle;
  h.lock_delay_ms = rows.number(r, 11);
  return h;
}

LockMode mode_from(std::int64_t n) {
  return n == 1 ? LockMode::kShared : n == 2 ? LockMode::kSemaphore : LockMode::kExclusive;
}

// A hold row of find or scan, with its mode (columns 14 and 15).
HoldState hold_with_mode(const Rows& rows, int r) {
  HoldState h = hold_from(rows, r);
  h.mode = mode_from(rows.number(r, 14));
  h.permits = static_cast<std::uint32_t>(rows.number(r, 15));
  return h;
}

Grant grant_from(const Rows& rows) {
  Grant g;
  if (rows.empty()) return g;  // an UPDATE that matched nothing
  g.granted = rows.boolean(0, 0);
  g.db_now = rows.number(0, 12);
  if (g.granted) {
    g.hold = hold_from(rows, 0);
    g.refreshed = rows.boolean(0, 13);
  } else {
    g.holder_lease_end = rows.maybe_number(0, 8);
    g.holder_mode = mode_from(rows.number(0, 14));  // only acquire and assign answer a row here
    g.holder_permits = static_cast<std::uint32_t>(rows.number(0, 15));
  }
  return g;
}

// A member grant: $1 key, $2 handle, $3 held_by, $4 owner, $5 ttl, $6 scope, $7 node,
// $8 session, $9 mode, $10 limit, $11 take, $12 queue seq, $13 retake only, $14 lock-delay.
const char kGrantMemberSql[] =
    "SELECT * FROM holdfast_grant_member($1, $2, $3, $4, $5::bigint, $6::smallint, $7::bigint, "
    "$8::bigint, $9::smallint, $10::integer, $11::integer, $12::bigint, $13::boolean, "
    "$14::bigint)";

// Live members of $1, oldest first: the columns of kHoldCols, from holdfast_members.
const std::string kMembersSql = kWithNow + R"sql(
SELECT true, m.key, NULL, m.token, m.held_by, m.owner, NULL, m.acquired_at, m.lease_expires_at,
       m.scope, 0, m.lock_delay_ms, now.ms, false, m.permits
  FROM holdfast_members m, now
 WHERE m.key = $1 AND m.lease_expires_at > now.ms
 ORDER BY m.token)sql";

Params grant_params(const GrantRequest& r) {
  Params p;
  p.text(r.key).text(r.handle.to_string()).text(r.held_by).maybe_text(r.owner).number(r.ttl_ms);
  p.number(r.scope == Scope::kSession ? 1 : 0);
  if (r.scope == Scope::kSession) {
    p.number(r.node_id).number(static_cast<std::int64_t>(r.session));
  } else {
    p.null().null();
  }
  p.number(r.lock_delay_ms);
  return p;
}

}  // namespace

std::vector<Statement> HoldRows::statements() {
  std::vector<Statement> out = {
      {"hf_acquire", acquire_sql()},
      {"hf_retake", retake_sql()},
      {"hf_acquire_free", acquire_sql(/*retake=*/false)},
      {"hf_take_over", take_over_sql()},
      {"hf_extend", extend_sql()},
      // $1 key, $2 held_by (NULL: whoever holds it)
      {"hf_free_key",
       free_and_notify_sql(
           "h.key = $1 AND h.held_by <> '' AND ($2::text IS NULL OR h.held_by = $2) AND " +
           live("h", "now.ms"))},
      {"hf_assign", assign_sql()},
      {"hf_refresh", refresh_sql()},
      // $1 key, $2 handle
      {"hf_release",
       free_and_notify_sql("h.key = $1 AND h.handle = $2 AND h.lease_expires_at > now.ms")},
      // $1 key
      // $1 key; one row whether or not the key is held, with the database clock (column 12)
      reading("hf_find", kWithNow + "\nSELECT h.key IS NOT NULL, " + kHoldCols +
                             ", now.ms, false, " + kRowMode +
                             ", h.permit_limit FROM now LEFT JOIN holdfast_holds h ON h.key = $1 "
                             "AND " +
                             live("h", "now.ms")),
      // $1 after (exclusive), $2 from (inclusive), $3 limit
      reading("hf_scan",
              find_sql("h.key > $1 AND h.key >= $2", "\n ORDER BY h.key LIMIT $3::bigint")),
      {"hf_transfer", transfer_sql()},
      // $1 key, $2 holder_id (NULL: whoever holds it)
      {"hf_unassign",
       free_and_notify_sql(
           "h.key = $1 AND h.kind = 1 AND ($2::text IS NULL OR h.holder_id = $2) AND " +
           live("h", "now.ms"))},
      // $1 node, $2 session
      {"hf_end_session",
       free_and_notify_sql("h.scope = 1 AND h.node_id = $1::bigint AND h.session_id = $2::bigint",
                           /*vanished=*/true)},
      // $1 node
      {"hf_free_node", free_and_notify_sql("h.scope = 1 AND h.node_id = $1::bigint", true)},
      // $1 judge, $2 grace, $3 gap: the session holds the rule lets the judge free
      // (schema_liveness.cc)
      {"hf_free_dead_sessions",
       free_and_notify_sql(
           "h.scope = 1 AND holdfast_session_lapsed(h.node_id, h.acquired_at, "
           "holdfast_judge_since($1::bigint, now.ms, $3::bigint), now.ms, $2::bigint)",
           true)},
      // $1 retention in ms: rows free (lock-delay over) for longer than that are deleted
      {"hf_sweep_free",
       kWithNow + ",\n" + in_key_order(kSweepable) +
           "\nDELETE FROM holdfast_holds h USING now WHERE h.key IN (SELECT l.key FROM locked l) "
           "AND " +
           kSweepable},
      // $1 key: while a lock-delay keeps the key closed, the instant it opens (the row's, or
      // an ended member's while others still hold the key)
      reading("hf_closed_until",
              kWithNow + "\nSELECT greatest((SELECT h.lease_expires_at + h.lock_delay_ms "
                         "FROM holdfast_holds h WHERE h.key = $1 AND h.lease_expires_at <= now.ms "
                         "AND h.lease_expires_at + h.lock_delay_ms > now.ms), "
                         "holdfast_members_closed_until($1, now.ms)) FROM now"),
      // $1 key, $2 node, $3 generation
      {"hf_wait_register",
       "INSERT INTO holdfast_waits (key, node_id, generation) VALUES ($1, $2::bigint, $3::bigint) "
       "ON CONFLICT (key, node_id) DO UPDATE SET generation = EXCLUDED.generation"},
      {"hf_wait_unregister",
       "DELETE FROM holdfast_waits WHERE key = $1 AND node_id = $2::bigint AND generation = "
       "$3::bigint"},
      // $1 key, $2 this node
      reading("hf_others_wait",
              "SELECT EXISTS (SELECT 1 FROM holdfast_waits WHERE key = $1 AND node_id <> "
              "$2::bigint)"),
      // $1 node
      {"hf_wait_forget_node", "DELETE FROM holdfast_waits WHERE node_id = $1::bigint"},
      {"hf_wait_forget_orphans",
       "DELETE FROM holdfast_waits w WHERE NOT EXISTS (SELECT 1 FROM holdfast_nodes n WHERE n.id = "
       "w.node_id)"},
      reading(
          "hf_count_live",
          kWithNow +
              "\nSELECT (SELECT count(*) FROM holdfast_holds h, now WHERE h.held_by <> '' AND " +
              live("h", "now.ms") +
              ") + (SELECT count(*) FROM holdfast_members m, now WHERE m.lease_expires_at > "
              "now.ms)"),
      {"hf_grant_member", kGrantMemberSql},
      // $1 key: its claim (schema_values.cc), for a batch with several statements on the key
      // (pg_batch.h, "Lock order")
      {"hf_claim_key", "SELECT holdfast_claim_key($1)"},
      reading("hf_members", kMembersSql),
      // $1 key, $2 node, $3 mode, $4 limit
      {"hf_queue_join",
       "INSERT INTO holdfast_queue (key, node_id, mode, permit_limit) VALUES ($1, $2::bigint, "
       "$3::smallint, $4::integer) RETURNING seq"},
      {"hf_queue_leave", "SELECT holdfast_queue_leave($1::bigint)"},
      {"hf_queue_forget_node", "DELETE FROM holdfast_queue WHERE node_id = $1::bigint"},
      {"hf_queue_forget_orphans",
       "DELETE FROM holdfast_queue q WHERE NOT EXISTS (SELECT 1 FROM holdfast_nodes n WHERE n.id = "
       "q.node_id)"},
      {"hf_release_member", "SELECT holdfast_release_member($1, $2)"},
      {"hf_free_group", "SELECT holdfast_free_group($1, $2)"},
      {"hf_extend_group", "SELECT holdfast_extend_group($1, $2::bigint, $3)"},
      // $1 node, $2 session (NULL: all the node's)
      {"hf_free_session_members",
       "SELECT holdfast_free_session_members($1::bigint, $2::bigint, NULL)"},
      // $1 judge, $2 grace, $3 gap
      {"hf_free_lapsed_members",
       "SELECT holdfast_free_lapsed_session_members($1::bigint, $2::bigint, $3::bigint)"},
      // $1 keys, $2 modes, $3 limits, $4 takes (arrays), $5 handle, $6 held_by, $7 owner,
      // $8 ttl, $9 scope, $10 node, $11 session
      {"hf_grant_group",
       "SELECT * FROM holdfast_grant_group($1::text[], $2::smallint[], $3::integer[], "
       "$4::integer[], $5, $6, $7, $8::bigint, $9::smallint, $10::bigint, $11::bigint)"},
      // $1 key, $2 handle (, $3 ttl)
      {"hf_release_handle", "SELECT holdfast_release_handle($1, $2)"},
      // $1 key: (handle, heldBy) of its live holds whose handle holds another key too
      reading("hf_groups_on", kWithNow + R"sql(
SELECT DISTINCT x.handle, x.held_by FROM (
  SELECT h.handle, h.held_by FROM holdfast_holds h, now
   WHERE h.key = $1 AND h.handle IS NOT NULL AND h.lease_expires_at > now.ms
  UNION ALL
  SELECT m.handle, m.held_by FROM holdfast_members m, now
   WHERE m.key = $1 AND m.lease_expires_at > now.ms) x, now
 WHERE EXISTS (SELECT 1 FROM holdfast_holds h2 WHERE h2.handle = x.handle AND h2.key <> $1
                  AND h2.lease_expires_at > now.ms)
    OR EXISTS (SELECT 1 FROM holdfast_members m2 WHERE m2.handle = x.handle AND m2.key <> $1
                  AND m2.lease_expires_at > now.ms))sql"),
      {"hf_renew_handle", "SELECT holdfast_renew_handle($1, $2, $3::bigint)"},
      // (a member's lock-delay keeps it: it closes the key until its end plus the delay)
      {"hf_sweep_members", kWithNow + "\nDELETE FROM holdfast_members m USING now WHERE "
                                      "m.lease_expires_at + m.lock_delay_ms <= now.ms - "
                                      "$1::bigint"},
  };
  for (Statement& s : hold_set_statements()) out.push_back(std::move(s));
  return out;
}

Result<Grant> HoldRows::acquire(const GrantRequest& r, bool batched) {
  const Doubt doubt = Doubt::on_handle(r.key, r.handle.to_string());
  auto rows = batched ? run_batched(r.key, "hf_acquire", grant_params(r), doubt)
                      : run("hf_acquire", grant_params(r), doubt);
  if (!rows.ok()) return std::move(rows).error();
  return grant_from(*rows);
}

Result<Grant> HoldRows::acquire_free(const GrantRequest& r) {
  auto rows =
      run("hf_acquire_free", grant_params(r), Doubt::on_handle(r.key, r.handle.to_string()));
  if (!rows.ok()) return std::move(rows).error();
  return grant_from(*rows);
}

Result<Grant> HoldRows::take_over(const GrantRequest& r) {
  auto rows = run("hf_take_over", grant_params(r), Doubt::on_handle(r.key, r.handle.to_string()));
  if (!rows.ok()) return std::move(rows).error();
  return grant_from(*rows);
}

Result<std::optional<Millis>> HoldRows::extend(std::string_view key, Millis amount, bool absolute,
                                               std::uint64_t token) {
  auto rows = run("hf_extend", Params()
                                   .text(key)
                                   .number(amount)
                                   .text(absolute ? "true" : "false")
                                   .number(static_cast<std::int64_t>(token)));
  if (!rows.ok()) return std::move(rows).error();
  if (rows->size() == 0) return std::optional<Millis>();
  return std::optional<Millis>(rows->number(0, 0));
}

Result<std::vector<std::string>> HoldRows::free_key(std::string_view key,
                                                    std::optional<std::string_view> held_by) {
  return freed_keys("hf_free_key", Params().text(key).maybe_text(held_by));
}

Result<Grant> HoldRows::retake(const GrantRequest& r) {
  auto rows = run("hf_retake", grant_params(r), Doubt::on_handle(r.key, r.handle.to_string()));
  if (!rows.ok()) return std::move(rows).error();
  return grant_from(*rows);
}

Result<Grant> HoldRows::assign(std::string_view key, std::string_view held_by,
                               std::string_view holder_id, std::optional<Millis> ttl_ms,
                               Millis lock_delay_ms) {
  auto rows = run(
      "hf_assign",
      Params().text(key).text(held_by).text(holder_id).maybe_number(ttl_ms).number(lock_delay_ms));
  if (!rows.ok()) return std::move(rows).error();
  return grant_from(*rows);
}

Result<Grant> HoldRows::refresh(std::string_view key, std::string_view holder_id,
                                std::optional<Millis> ttl_ms) {
  auto rows = run("hf_refresh", Params().text(key).text(holder_id).maybe_number(ttl_ms));
  if (!rows.ok()) return std::move(rows).error();
  return grant_from(*rows);
}

Result<bool> HoldRows::release(std::string_view key, std::string_view handle) {
  auto rows = run("hf_release", Params().text(key).text(handle), Doubt::on_handle(key, handle));
  if (!rows.ok()) return std::move(rows).error();
  return !rows->empty();
}

Result<std::optional<HoldState>> HoldRows::find(std::string_view key, Millis* db_now) {
  auto rows = run("hf_find", Params().text(key));
  if (!rows.ok()) return std::move(rows).error();
  if (db_now != nullptr) *db_now = rows->number(0, 12);
  if (!rows->boolean(0, 0)) return std::optional<HoldState>();
  HoldState h = hold_with_mode(*rows, 0);
  h.handle = Handle{};
  return std::optional<HoldState>(std::move(h));
}

Result<std::vector<HoldState>> HoldRows::scan(std::string_view after, std::string_view from,
                                              std::int64_t limit) {
  auto rows = run("hf_scan", Params().text(after).text(from).number(limit));
  if (!rows.ok()) return std::move(rows).error();
  std::vector<HoldState> out;
  out.reserve(static_cast<std::size_t>(rows->size()));
  for (int r = 0; r < rows->size(); ++r) {
    out.push_back(hold_with_mode(*rows, r));
    out.back().handle = Handle{};
  }
  return out;
}

Result<std::optional<HoldState>> HoldRows::transfer(std::string_view key, std::string_view to_id,
                                                    std::string_view from_id,
                                                    std::string_view held_by) {
  auto rows = run("hf_transfer", Params().text(key).text(to_id).text(from_id).text(held_by));
  if (!rows.ok()) return std::move(rows).error();
  if (rows->empty()) return std::optional<HoldState>();
  return std::optional<HoldState>(hold_from(*rows, 0));
}

Result<bool> HoldRows::unassign(std::string_view key, std::optional<std::string_view> holder_id) {
  auto rows = run("hf_unassign", Params().text(key).maybe_text(holder_id));
  if (!rows.ok()) return std::move(rows).error();
  return !rows->empty();
}

Result<std::vector<std::string>> HoldRows::freed_keys(const std::string& statement,
                                                      const Params& params, const Doubt& doubt) {
  auto rows = run(statement, params, doubt);
  if (!rows.ok()) return std::move(rows).error();
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(rows->size()));
  for (int r = 0; r < rows->size(); ++r) keys.emplace_back(rows->text(r, 0));
  return keys;
}

Result<std::vector<std::string>> HoldRows::freed_with_members(const std::string& statement,
                                                              const Params& params,
                                                              const std::string& members_statement,
                                                              const Params& member_params) {
  auto keys = freed_keys(statement, params);
  if (!keys.ok()) return keys;
  auto members = freed_keys(members_statement, member_params);
  if (!members.ok()) return std::move(members).error();
  for (std::string& k : *members) keys->push_back(std::move(k));
  return keys;
}

Result<std::vector<std::string>> HoldRows::end_session(std::int64_t node_id,
                                                       std::uint64_t session) {
  if (auto st = settle(); !st.ok()) {
    doubt(Doubt::on_session(node_id, session));
    return std::move(st).error();
  }
  auto freed = end_session_now(node_id, session);
  // Whatever happened, the session is over: its holds must go once the database answers.
  if (!freed.ok()) doubt(Doubt::on_session(node_id, session));
  return freed;
}

Result<std::vector<std::string>> HoldRows::end_session_now(std::int64_t node_id,
                                                           std::uint64_t session) {
  const auto s = static_cast<std::int64_t>(session);
  auto keys = pool_.run("hf_end_session", Params().number(node_id).number(s));
  if (!keys.ok()) return std::move(keys).error();
  auto members = pool_.run("hf_free_session_members", Params().number(node_id).number(s));
  if (!members.ok()) return std::move(members).error();
  std::vector<std::string> out;
  for (const Rows* rows : {&*keys, &*members})
    for (int r = 0; r < rows->size(); ++r) out.emplace_back(rows->text(r, 0));
  return out;
}

HoldRows::Doubt HoldRows::Doubt::on_handle(std::string_view key, std::string_view handle) {
  Doubt d;
  d.kind = kHandle;
  d.key = std::string(key);
  d.handle = std::string(handle);
  return d;
}

HoldRows::Doubt HoldRows::Doubt::on_session(std::int64_t node, std::uint64_t session) {
  Doubt d;
  d.kind = kSession;
  d.node = node;
  d.session = session;
  return d;
}

void HoldRows::doubt(Doubt d) {
  std::lock_guard lock(doubts_mu_);
  spdlog::warn("{} will be settled before this node answers anything else",
               d.kind == Doubt::kHandle
                   ? "the write of handle " + d.handle.substr(0, 8) + "... on " + d.key +
                         ", whose outcome is unknown,"
                   : "the end of connection " + std::to_string(d.session) + "'s session holds");
  doubts_.push_back(std::move(d));
  has_doubts_ = true;
}

std::size_t HoldRows::doubts() const {
  std::lock_guard lock(doubts_mu_);
  return doubts_.size();
}

Status HoldRows::settle() {
  if (!has_doubts_.load() || pool_.in_transaction()) return ok_status();
  std::lock_guard settling(settle_mu_);
  // While the database does not answer, the calls queued behind a failed attempt fail at once
  // rather than each wait out a deadline of its own.
  if (std::chrono::steady_clock::now() < retry_settling_at_)
    return Error(ErrorCode::kUnavailable, last_settle_error_);
  for (;;) {
    Doubt d;
    {
      std::lock_guard lock(doubts_mu_);
      if (doubts_.empty()) {
        has_doubts_ = false;
        return ok_status();
      }
      d = doubts_.front();
    }
    // Releasing the handle withdraws a grant that committed (its caller was told it did not)
    // and completes a release; both are no-ops when there is nothing to do. The grant's
    // transaction may still be running: a commit waiting for a synchronous standby is not yet
    // seen by others, and the connection that sent it was closed, not cancelled. It holds the
    // key's claim (every grant takes it) until it ends, so the release takes the claim first,
    // in the same transaction: it runs once that grant is seen or gone.
    auto freed = d.kind == Doubt::kHandle ? [&]() -> Result<std::vector<std::string>> {
      static const std::string kClaim = "hf_claim_key", kRelease = "hf_release_handle";
      const Params claim = Params().text(d.key);
      const Params release = Params().text(d.key).text(d.handle);
      auto results = pool_.run_batch({{&kClaim, &claim}, {&kRelease, &release}});
      if (!results.ok()) return std::move(results).error();
      if (results->size() != 2 || !(*results)[0].succeeded() || !(*results)[1].succeeded()) {
        // Every caller gets this message until it is settled: it names no key and no handle.
        spdlog::warn("withdrawing the grant of handle {}... on {} failed", d.handle.substr(0, 8),
                     d.key);
        return Error(ErrorCode::kUnavailable,
                     "withdrawing a grant of unknown outcome failed (see the server's log)");
      }
      const Rows& rows = (*results)[1];
      std::vector<std::string> keys;
      for (int r = 0; r < rows.size(); ++r) keys.emplace_back(rows.text(r, 0));
      return keys;
    }()
        : end_session_now(d.node, d.session);
    if (!freed.ok()) {
      last_settle_error_ =
          "a write whose outcome was unknown is not settled yet: " + freed.error().message;
      retry_settling_at_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      return Error(ErrorCode::kUnavailable, last_settle_error_);
    }
    {
      std::lock_guard lock(doubts_mu_);
      doubts_.pop_front();
    }
    spdlog::info("settled {}: {} key(s) freed",
                 d.kind == Doubt::kHandle
                     ? "the write of handle " + d.handle.substr(0, 8) + "... on " + d.key
                     : "the end of connection " + std::to_string(d.session),
                 freed->size());
    if (!freed->empty() && on_freed_) on_freed_(*freed);
  }
}

Result<Rows> HoldRows::run(const std::string& statement, const Params& params) {
  return run(statement, params, Doubt{});
}

Result<std::vector<std::string>> HoldRows::freed_keys(const std::string& statement,
                                                      const Params& params) {
  return freed_keys(statement, params, Doubt{});
}

void HoldRows::batch_commits(std::size_t lanes) {
  if (lanes == 0) {
    batcher_.reset();
    return;
  }
  batcher_ = std::make_unique<CommitBatcher>(
      pool_, lanes, "hf_claim_key", [this] { return settle(); }, hold_set_forms());
}

Result<Rows> HoldRows::run_batched(std::string_view key, const std::string& statement,
                                   const Params& params, const Doubt& about,
                                   const std::function<void()>& queued, bool* in_batch) {
  if (!batcher_ || pool_.in_transaction()) return run(statement, params, about);
  auto out = batcher_->run(key, statement, params, queued);
  if (in_batch != nullptr) *in_batch = !out.alone && out.rows.ok();
  return batched_answer(statement, params, about, std::move(out));
}

Result<Rows> HoldRows::batched_answer(const std::string& statement, const Params& params,
                                      const Doubt& about, CommitBatcher::Outcome out) {
  // Rolled back with its batch: nothing of it took effect, so it may run again, alone.
  if (out.alone) return run(statement, params, about);
  if (!out.rows.ok() && about.kind != Doubt::kNone && is_unknown_outcome(out.rows.error()))
    doubt(about);
  return std::move(out.rows);
}

void HoldRows::set_spawn(std::function<void(std::function<void()>)> spawn) {
  if (batcher_) batcher_->set_spawn(std::move(spawn));
}

void HoldRows::run_batched_async(std::string_view key, const std::string& statement, Params params,
                                 Doubt about, std::function<void(Result<Rows>)> done) {
  batcher_->run_async(key, statement, std::move(params),
                      [this, &statement, about = std::move(about), done = std::move(done)](
                          CommitBatcher::Outcome out, const Params& params) {
                        done(batched_answer(statement, params, about, std::move(out)));
                      });
}

void HoldRows::acquire_async(const GrantRequest& r, std::function<void(Result<Grant>)> done) {
  static const std::string kStatement = "hf_acquire";
  run_batched_async(r.key, kStatement, grant_params(r),
                    Doubt::on_handle(r.key, r.handle.to_string()),
                    [done = std::move(done)](Result<Rows> rows) {
                      if (!rows.ok()) return done(std::move(rows).error());
                      done(grant_from(*rows));
                    });
}

Result<Rows> HoldRows::run(const std::string& statement, const Params& params, const Doubt& about) {
  if (auto st = settle(); !st.ok()) return std::move(st).error();
  auto rows = pool_.run(statement, params);
  if (!rows.ok() && about.kind != Doubt::kNone && is_unknown_outcome(rows.error())) doubt(about);
  return rows;
}

Result<std::vector<std::string>> HoldRows::free_node_sessions(std::int64_t node_id) {
  return freed_with_members("hf_free_node", Params().number(node_id), "hf_free_session_members",
                            Params().number(node_id).null());
}

Result<std::vector<std::string>> HoldRows::free_dead_sessions(std::int64_t judge, Millis grace_ms,
                                                              Millis gap_ms) {
  const Params p = Params().number(judge).number(grace_ms).number(gap_ms);
  return freed_with_members("hf_free_dead_sessions", p, "hf_free_lapsed_members", p);
}

Result<std::int64_t> HoldRows::sweep_free() {
  auto rows = run("hf_sweep_free", Params().number(kFreeRowRetentionMs));
  if (!rows.ok()) return std::move(rows).error();
  auto members = run("hf_sweep_members", Params().number(kFreeRowRetentionMs));
  if (!members.ok()) return std::move(members).error();
  return rows->affected() + members->affected();
}

Result<Grant> HoldRows::grant_member(const MemberRequest& r, bool retake_only) {
  const GrantRequest& q = r.grant;
  Params p;
  p.text(q.key).text(q.handle.to_string()).text(q.held_by).maybe_text(q.owner).number(q.ttl_ms);
  p.number(q.scope == Scope::kSession ? 1 : 0).number(q.node_id);  // the node: always
  if (q.scope == Scope::kSession) {
    p.number(static_cast<std::int64_t>(q.session));
  } else {
    p.null();
  }
  p.number(mode_number(r.shape.mode));
  if (r.shape.mode == LockMode::kSemaphore) {
    p.number(r.shape.permits).number(r.shape.take);
  } else {
    p.null().number(1);
  }
  p.maybe_number(r.queue_seq).text(retake_only ? "true" : "false").number(q.lock_delay_ms);
  auto rows = run("hf_grant_member", p, Doubt::on_handle(q.key, q.handle.to_string()));
  if (!rows.ok()) return std::move(rows).error();
  // outcome, token, acquired_at, lease_expires_at, db_now, retry_at, kind_limit
  Grant g;
  const std::int64_t outcome = rows->number(0, 0);
  g.db_now = rows->number(0, 4);
  if (outcome == 2) {
    g.other_kind = static_cast<std::uint32_t>(rows->number(0, 6));
    return g;
  }
  if (outcome == 0) {
    g.holder_lease_end = rows->maybe_number(0, 5);
    return g;
  }
  g.granted = true;
  HoldState& h = g.hold;
  h.key = std::string(r.grant.key);
  h.handle = r.grant.handle;
  h.token = static_cast<std::uint64_t>(rows->number(0, 1));
  h.held_by = std::string(r.grant.held_by);
  h.owner = std::string(r.grant.owner.value_or(""));
  h.acquired_at = rows->number(0, 2);
  h.lease_expires_at = rows->number(0, 3);
  h.scope = r.grant.scope;
  h.kind = HoldKind::kHandle;
  h.mode = r.shape.mode;
  if (h.mode == LockMode::kSemaphore) {
    h.permits = r.shape.permits;
    h.take = r.shape.take;
  }
  h.lock_delay_ms = r.grant.lock_delay_ms;
  return g;
}

Result<std::int64_t> HoldRows::queue_join(std::string_view key, std::int64_t node_id, LockMode mode,
                                          std::uint32_t permits) {
  Params p;
  p.text(key).number(node_id).number(mode_number(mode));
  if (mode == LockMode::kSemaphore) {
    p.number(permits);
  } else {
    p.null();
  }
  auto rows = run("hf_queue_join", p);
  if (!rows.ok()) return std::move(rows).error();
  return rows->number(0, 0);
}

Status HoldRows::queue_leave(std::int64_t seq) {
  auto rows = run("hf_queue_leave", Params().number(seq));
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

Result<bool> HoldRows::release_member(std::string_view key, std::string_view handle) {
  auto rows =
      run("hf_release_member", Params().text(key).text(handle), Doubt::on_handle(key, handle));
  if (!rows.ok()) return std::move(rows).error();
  return rows->boolean(0, 0);
}

Result<std::vector<HoldState>> HoldRows::members(std::string_view key, LockMode mode,
                                                 std::uint32_t permits) {
  auto rows = run("hf_members", Params().text(key));
  if (!rows.ok()) return std::move(rows).error();
  std::vector<HoldState> out;
  out.reserve(static_cast<std::size_t>(rows->size()));
  for (int r = 0; r < rows->size(); ++r) {
    HoldState h = hold_from(*rows, r);
    h.mode = mode;
    h.take = mode == LockMode::kSemaphore ? static_cast<std::uint32_t>(rows->number(r, 14)) : 0;
    h.permits = mode == LockMode::kSemaphore ? permits : 0;
    out.push_back(std::move(h));
  }
  return out;
}

Result<bool> HoldRows::free_group(std::string_view key, std::optional<std::string_view> held_by) {
  auto rows = run("hf_free_group", Params().text(key).maybe_text(held_by));
  if (!rows.ok()) return std::move(rows).error();
  return rows->boolean(0, 0);
}

Result<bool> HoldRows::extend_group(std::string_view key, Millis at,
                                    std::optional<std::string_view> held_by) {
  auto rows = run("hf_extend_group", Params().text(key).number(at).maybe_text(held_by));
  if (!rows.ok()) return std::move(rows).error();
  return rows->boolean(0, 0);
}

Status HoldRows::register_wait(std::string_view key, std::int64_t node_id,
                               std::uint64_t generation) {
  auto rows = run("hf_wait_register",
                  Params().text(key).number(node_id).number(static_cast<std::int64_t>(generation)));
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

Status HoldRows::unregister_wait(std::string_view key, std::int64_t node_id,
                                 std::uint64_t generation) {
  auto rows = run("hf_wait_unregister",
                  Params().text(key).number(node_id).number(static_cast<std::int64_t>(generation)));
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

Result<bool> HoldRows::others_wait(std::string_view key, std::int64_t node_id) {
  auto rows = run("hf_others_wait", Params().text(key).number(node_id));
  if (!rows.ok()) return std::move(rows).error();
  return rows->boolean(0, 0);
}

Status HoldRows::forget_waits(std::optional<std::int64_t> node_id) {
  auto rows = node_id ? run("hf_wait_forget_node", Params().number(*node_id))
                      : run("hf_wait_forget_orphans", Params());
  if (!rows.ok()) return std::move(rows).error();
  auto queued = node_id ? run("hf_queue_forget_node", Params().number(*node_id))
                        : run("hf_queue_forget_orphans", Params());
  if (!queued.ok()) return std::move(queued).error();
  return ok_status();
}

Result<Millis> HoldRows::closed_until(std::string_view key) {
  auto rows = run("hf_closed_until", Params().text(key));
  if (!rows.ok()) return std::move(rows).error();
  return rows->empty() ? Millis{0} : rows->maybe_number(0, 0).value_or(0);
}

Result<std::int64_t> HoldRows::count_live() {
  auto rows = run("hf_count_live", Params());
  if (!rows.ok()) return std::move(rows).error();
  return rows->number(0, 0);
}

}  // namespace holdfast::pg
