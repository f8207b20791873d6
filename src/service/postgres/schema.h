// The PostgreSQL schema of the scale-out store and its versioned migrations.
//
// Migration, run by every node at start (safe when several nodes start at once):
//  0. The database must be UTF8 (keys are UTF-8 compared byte by byte).
//  1. BEGIN; take pg_advisory_xact_lock(kAdvisoryClass, 0): nodes that start together queue
//     here, and the lock ends with the transaction whatever happens.
//  2. Create holdfast_schema_versions if missing; read the highest version applied.
//  3. A version above what this binary knows means a newer Holdfast migrated the database:
//     refuse to start (an older node must not run against a schema it does not understand).
//  4. Apply each missing migration in order, recording its version, then COMMIT. Migrations
//     are append-only: a released one is never edited, a change is a new version.
//
// The tables (version 1):
//   holdfast_holds           one row per held key (lease ends judged by holdfast_now_ms())
//   holdfast_nodes           one row per live node: its heartbeat, for session holds
//   holdfast_rule_set        at most one row: the lock rule set as pushed (TOML)
//   holdfast_rate            acquire attempts per member user per minute (rate limits)
//   holdfast_tokens          the sequence every fencing token comes from
//   holdfast_rule_versions   the sequence that versions the rule set (cache invalidation)
// Version 2 adds holdfast_key_waited(key), which statements that free a key call to decide
// whether to NOTIFY (it reads holdfast_waits with a fresh snapshot; hold_rows.h says why).
// Version 7 adds lock events across nodes (holdfast_watchers, the triggers that NOTIFY every
// change of a hold while someone watches); its SQL is in schema_events.cc.
// Version 5 adds multi-key groups: holdfast_grant_group(), release and renew by handle
// (holdfast_release_handle(), holdfast_renew_handle()) and indexes on handles; its SQL is in
// schema_groups.cc.
// Version 8 adds holdfast_nodes.contact_since and the session-liveness rule,
// holdfast_session_lapsed() (schema_liveness.cc, with the argument for it).
// Version 9 adds typed values: holdfast_values, one row per key holding a counter, sorted set,
// hash or list, and the rule that a key is a lock or a value (its SQL, and why, in
// schema_values.cc).
// Version 10 costs the database less per lock row, with the same rules: the type check's
// trigger takes the claim in its WHEN condition and runs only where a value was ever made (the
// sequence holdfast_values_made), and holdfast_keys_waited() answers a whole statement's freed
// keys at once (schema_row_cost.cc, with the argument for it).
// Times are bigint milliseconds since the Unix epoch by the database's clock.
// docs/scale-out.md describes them for operators.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "service/postgres/pg_conn.h"

namespace holdfast::pg {

// The classid of every advisory lock Holdfast takes ("Hold" in ASCII). The two-int form keeps
// them apart from applications' one-bigint advisory locks in the same database.
inline constexpr std::int32_t kAdvisoryClass = 0x486F6C64;

// The head of a statement that reads the database clock once (holdfast_now_ms(), as `now.ms`).
inline const std::string kWithNow = "WITH now AS MATERIALIZED (SELECT holdfast_now_ms() AS ms)";

// The SQL of migration 5 (schema_groups.cc).
extern const char kGroupsMigrationSql[];
extern const char kMemberDelayMigrationSql[];
extern const char kEventsMigrationSql[];  // version 7, schema_events.cc
// The SQL of migration 8 (schema_liveness.cc): the session-liveness rule.
extern const char kLivenessMigrationSql[];
extern const char kValuesMigrationSql[];   // version 9, schema_values.cc
extern const char kRowCostMigrationSql[];  // version 10, schema_row_cost.cc

// The newest schema version this binary knows.
int latest_schema_version();

// Brings the database's schema up to latest_schema_version() (see the steps above).
Status migrate(PgConn& conn);

}  // namespace holdfast::pg
