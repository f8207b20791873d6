#include "service/postgres/schema.h"

#include <array>
#include <string>

namespace holdfast::pg {
namespace {

struct Migration {
  int version;
  const char* description;
  const char* sql;
};

// Append-only: never edit a migration that has shipped; add the next version instead.
constexpr std::array kMigrations = {
    Migration{1, "holds, nodes, rule set, rate windows, token sequence", R"sql(
CREATE SEQUENCE holdfast_tokens AS bigint;
CREATE SEQUENCE holdfast_rule_versions AS bigint;

-- The database clock in integer milliseconds since the Unix epoch: every lease is judged by it.
CREATE FUNCTION holdfast_now_ms() RETURNS bigint LANGUAGE sql VOLATILE
  AS $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;

-- One row per held key. A row whose lease has ended is a free key: every statement judges
-- lease_expires_at against holdfast_now_ms(), and a sweep deletes such rows now and then.
CREATE TABLE holdfast_holds (
  key              text COLLATE "C" PRIMARY KEY,  -- "C": byte order, as the embedded table
  handle           text,                          -- printed form; NULL for assigned holds
  token            bigint   NOT NULL,
  held_by          text     NOT NULL,             -- user:<id> | function:<name>
  owner            text,                          -- NULL: none
  holder_id        text,                          -- assigned holds
  acquired_at      bigint   NOT NULL,
  lease_expires_at bigint,                        -- NULL: never (assigned without TTL)
  scope            smallint NOT NULL,             -- 0 lease, 1 session
  kind             smallint NOT NULL,             -- 0 handle, 1 assigned
  node_id          bigint,                        -- session holds: the node ...
  session_id       bigint                         -- ... and its connection
) WITH (fillfactor = 80);  -- room for HOT updates: renewals rewrite rows in place
CREATE INDEX holdfast_holds_sessions ON holdfast_holds (node_id, session_id) WHERE scope = 1;

-- Keys that some node has callers waiting for. A statement that frees a key notifies only
-- when the key has a row here: NOTIFY serialises committing transactions on a cluster-wide
-- lock, so an uncontended release must not pay for it.
CREATE TABLE holdfast_waits (
  key        text COLLATE "C" NOT NULL,
  node_id    bigint NOT NULL,
  generation bigint NOT NULL,  -- the node's queue incarnation; a stale delete leaves a newer row
  PRIMARY KEY (key, node_id)
);

CREATE TABLE holdfast_nodes (
  id           bigserial PRIMARY KEY,
  name         text   NOT NULL,
  started_at   bigint NOT NULL,
  heartbeat_at bigint NOT NULL
);

CREATE TABLE holdfast_rule_set (
  id      smallint PRIMARY KEY CHECK (id = 1),
  name    text   NOT NULL,
  toml    text   NOT NULL,
  version bigint NOT NULL
);

CREATE TABLE holdfast_rate (
  user_id  text   NOT NULL,
  minute   bigint NOT NULL,  -- milliseconds / 60000
  attempts bigint NOT NULL,
  PRIMARY KEY (user_id, minute)
);
)sql"},
    Migration{2, "holdfast_key_waited(): waiters as committed when a key is freed", R"sql(
-- Whether some node has registered waiters for key k, as committed at the moment of the call.
-- VOLATILE plpgsql: under READ COMMITTED each query in it takes a fresh snapshot. A statement
-- that frees a key calls it after its row update, so a registration that committed while the
-- statement waited for the key's row lock is seen; a sub-select would use the snapshot taken
-- when the statement started, and miss it (store/postgres/hold_rows.h).
CREATE FUNCTION holdfast_key_waited(k text) RETURNS boolean LANGUAGE plpgsql VOLATILE
  AS $$ BEGIN RETURN EXISTS (SELECT 1 FROM holdfast_waits w WHERE w.key = k COLLATE "C"); END $$;
)sql"},
    Migration{3, "holds.lock_delay_ms: a key stays closed that long after its lease ended", R"sql(
-- Lock-delay (docs/lock-kinds.md): a key is free only once lease_expires_at + lock_delay_ms has
-- passed. A release, unassign or DEL sets it to 0 (a release closes nothing); the end of a
-- session keeps it, so the key stays closed from the session's end.
ALTER TABLE holdfast_holds ADD COLUMN lock_delay_ms bigint NOT NULL DEFAULT 0;
)sql"},
};

}  // namespace

int latest_schema_version() { return kMigrations.back().version; }

Status migrate(PgConn& conn) {
  // Keys are UTF-8 and ordered by their bytes; a database in another encoding would refuse
  // some keys or reorder them.
  auto encoding = conn.exec("SHOW server_encoding");
  if (!encoding.ok()) return std::move(encoding).error();
  if (encoding->text(0, 0) != "UTF8" && encoding->text(0, 0) != "SQL_ASCII") {
    return Error(ErrorCode::kUnavailable,
                 "the database's encoding is " + std::string(encoding->text(0, 0)) +
                     "; Holdfast needs a UTF8 database (CREATE DATABASE ... ENCODING 'UTF8')");
  }
  auto fail = [&](Error e) -> Status {
    (void)conn.exec("ROLLBACK");
    return e;
  };
  if (auto r = conn.exec("BEGIN"); !r.ok()) return std::move(r).error();
  if (auto r = conn.exec("SELECT pg_advisory_xact_lock(" + std::to_string(kAdvisoryClass) + ", 0)");
      !r.ok())
    return fail(std::move(r).error());
  if (auto r = conn.exec("CREATE TABLE IF NOT EXISTS holdfast_schema_versions ("
                         " version int PRIMARY KEY, description text NOT NULL,"
                         " applied_at timestamptz NOT NULL DEFAULT now())");
      !r.ok())
    return fail(std::move(r).error());
  auto current = conn.exec("SELECT coalesce(max(version), 0) FROM holdfast_schema_versions");
  if (!current.ok()) return fail(std::move(current).error());
  const std::int64_t have = current->number(0, 0);
  if (have > latest_schema_version()) {
    return fail(Error(ErrorCode::kUnavailable,
                      "the database schema is at version " + std::to_string(have) +
                          ", newer than this holdfast knows (" +
                          std::to_string(latest_schema_version()) + "); upgrade this node"));
  }
  for (const Migration& m : kMigrations) {
    if (m.version <= have) continue;
    if (auto r = conn.exec(m.sql); !r.ok()) {
      Error e = std::move(r).error();
      e.message = "migration " + std::to_string(m.version) + " failed: " + e.message;
      return fail(std::move(e));
    }
    if (auto r =
            conn.exec("INSERT INTO holdfast_schema_versions (version, description) VALUES ($1, $2)",
                      Params().number(m.version).text(m.description));
        !r.ok())
      return fail(std::move(r).error());
  }
  if (auto r = conn.exec("COMMIT"); !r.ok()) return std::move(r).error();
  return ok_status();
}

}  // namespace holdfast::pg
