#include "service/postgres/hold_sets.h"

#include "service/postgres/hold_sql.h"
#include "service/postgres/schema.h"

namespace holdfast::pg {
namespace {

using sql::kHoldCols;
using sql::kRowMode;
using sql::live;

// hf_acquire's parameters, each an array over the calls: $1 keys, $2 handles, $3 held_by,
// $4 owners, $5 ttls, $6 scopes, $7 nodes, $8 sessions, $9 lock-delays. Answers one row per call
// in their order: the call's position (from 1), then hf_acquire's 16 columns.
//
// A call whose key is not free by the statement's snapshot (nor its own to re-take) is not
// offered to the INSERT at all: its row is neither locked nor waited for, so a batch waits only
// for rows another transaction is granting at the same moment, and those it locks in key order
// (the INSERT takes the calls in key order). Its answer reads that snapshot's row, as
// hf_acquire's does when it grants nothing; a key freed by a racing commit after the snapshot is
// then seen busy, an outcome the same race gives hf_acquire too when its statement starts first.
std::string acquire_set_sql() {
  return kWithNow + R"sql(,
req AS MATERIALIZED (
  SELECT u.key COLLATE "C" AS key, u.handle, u.held_by, u.owner, u.ttl, u.scope, u.node, u.sess,
         u.delay, u.i
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::smallint[],
                $7::bigint[], $8::bigint[], $9::bigint[])
         WITH ORDINALITY AS u(key, handle, held_by, owner, ttl, scope, node, sess, delay, i)),
granted AS (
)sql" +
         sql::grant_upsert(
             R"sql(SELECT r.key, r.handle, nextval('holdfast_tokens'), r.held_by, r.owner, NULL, now.ms,
         now.ms + r.ttl, r.scope, 0, r.node, r.sess, r.delay
    FROM req r, now
   WHERE coalesce((SELECT ()sql" +
                 sql::may_take("o", "now.ms", "r.owner", "r.held_by", true) +
                 R"sql() IS TRUE FROM holdfast_holds o WHERE o.key = r.key), true)
   ORDER BY r.key)sql",
             /*retake=*/true) +
         R"sql()
SELECT r.i, g.key IS NOT NULL, g.key, g.handle, g.token, g.held_by, g.owner, g.holder_id,
       g.acquired_at,
       CASE WHEN g.key IS NOT NULL THEN g.lease_expires_at
            ELSE h.lease_expires_at + h.lock_delay_ms END,
       g.scope, g.kind, g.lock_delay_ms, now.ms, false,
       CASE WHEN g.key IS NOT NULL THEN 0::smallint WHEN )sql" +
         live("h", "now.ms") + " THEN " + kRowMode + R"sql( END,
       CASE WHEN g.key IS NULL THEN h.permit_limit END
  FROM req r CROSS JOIN now
  LEFT JOIN granted g ON g.key = r.key
  LEFT JOIN LATERAL (SELECT h.* FROM holdfast_holds h WHERE g.key IS NULL AND h.key = r.key
                      OFFSET 0) h ON true
 ORDER BY r.i)sql";
}

// hf_release_handle's parameters as arrays: $1 keys, $2 handles. Answers one row per call in
// their order: its position, whether it must run alone, the key it freed (NULL: none).
//
// (The correlated sub-selects and the key array make PostgreSQL look each key up in the index,
// whatever it estimates of the table: a hash join over a table's every row would cost more than
// the whole batch.)
//
// Only a single hold is freed here: a handle with live holds on other keys too (a multi-key
// group), or on a shared or semaphore key's members, is answered "alone", and its call runs
// holdfast_release_handle by itself after the batch, which locks all of its keys in key order.
// The rows freed here are locked in key order, as every release locks them (hold_sql.h).
std::string release_set_sql() {
  return kWithNow + R"sql(,
req AS MATERIALIZED (
  SELECT u.key COLLATE "C" AS key, u.handle, u.i
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(key, handle, i)),
alone AS MATERIALIZED (
  SELECT r.i FROM req r, now
   WHERE (SELECT true FROM holdfast_holds o WHERE o.handle = r.handle AND o.key <> r.key
             AND o.lease_expires_at > now.ms LIMIT 1)
      OR (SELECT true FROM holdfast_members m WHERE m.handle = r.handle
             AND m.lease_expires_at > now.ms LIMIT 1)),
)sql" +
         sql::free_rows(
             "h.key = ANY ($1::text[] COLLATE \"C\") AND h.lease_expires_at > now.ms AND "
             "(h.key, h.handle) IN (SELECT r.key, r.handle FROM req r WHERE r.i NOT IN "
             "(SELECT a.i FROM alone a))",
             /*vanished=*/false) +
         ",\n" + sql::kWaitedFreed + R"sql(
SELECT r.i, a.i IS NOT NULL, freed.key, )sql" +
         sql::kNotifyFreed + R"sql(
  FROM req r CROSS JOIN waited LEFT JOIN alone a ON a.i = r.i LEFT JOIN freed ON freed.key = r.key
 ORDER BY r.i)sql";
}

}  // namespace

std::vector<Statement> hold_set_statements() {
  return {{"hf_acquire_set", acquire_set_sql()}, {"hf_release_handle_set", release_set_sql()}};
}

std::vector<CommitBatcher::SetForm> hold_set_forms() {
  return {
      {"hf_acquire", "hf_acquire_set",
       [](const Rows& all, int row) -> std::optional<Rows> { return all.part(row, 1, 16); }},
      {"hf_release_handle", "hf_release_handle_set",
       [](const Rows& all, int row) -> std::optional<Rows> {
         if (all.boolean(row, 1)) return std::nullopt;
         return all.part(all.is_null(row, 2) ? std::nullopt : std::optional<int>(row), 2, 1);
       }},
  };
}

}  // namespace holdfast::pg
