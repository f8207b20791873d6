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
-- when the statement started, and miss it (hold_rows.h).
CREATE FUNCTION holdfast_key_waited(k text) RETURNS boolean LANGUAGE plpgsql VOLATILE
  AS $$ BEGIN RETURN EXISTS (SELECT 1 FROM holdfast_waits w WHERE w.key = k COLLATE "C"); END $$;
)sql"},
    Migration{3, "holds.lock_delay_ms: a key stays closed that long after its lease ended", R"sql(
-- Lock-delay (docs/lock-kinds.md): a key is free only once lease_expires_at + lock_delay_ms has
-- passed. A release, unassign or DEL sets it to 0 (a release closes nothing); the end of a
-- session keeps it, so the key stays closed from the session's end.
ALTER TABLE holdfast_holds ADD COLUMN lock_delay_ms bigint NOT NULL DEFAULT 0;
)sql"},
    Migration{4, "shared and semaphore holds: holdfast_members, holdfast_queue", R"sql(
-- mode 0: the row is the key's one hold, as before. 1 (shared) or 2 (semaphore): the row stands
-- for the key's group of holds in holdfast_members. Such a row has no handle, owner or holder
-- and heldBy '' (so no statement about a single hold matches it; and a row with a heldBy is a
-- single hold whatever its mode says, as a node of an older version does not reset the mode),
-- its token is the key's last token, and its lease ends with the last lease of its members: a statement that grants the
-- key exclusively sees it busy for as long as one member lives. Every change of a key's members
-- locks this row first, so grants of one key serialise on it whatever their mode.
ALTER TABLE holdfast_holds ADD COLUMN mode smallint NOT NULL DEFAULT 0,
                           ADD COLUMN permit_limit integer;  -- mode 2: the key's permits

CREATE TABLE holdfast_members (
  key              text COLLATE "C" NOT NULL,
  token            bigint   NOT NULL,
  handle           text     NOT NULL,
  held_by          text     NOT NULL,
  owner            text,
  acquired_at      bigint   NOT NULL,
  lease_expires_at bigint   NOT NULL,
  scope            smallint NOT NULL,
  node_id          bigint,
  session_id       bigint,
  permits          integer  NOT NULL,  -- 1 for a shared hold
  PRIMARY KEY (key, token)
);
CREATE INDEX holdfast_members_sessions ON holdfast_members (node_id, session_id) WHERE scope = 1;

-- One row per blocked request that takes part in the key's queue across nodes: every shared or
-- semaphore request, and an exclusive one once it has seen the key held shared. A grant of a
-- shared or semaphore hold waits while another node has a row queued before this node's first.
CREATE SEQUENCE holdfast_queue_order AS bigint;
CREATE TABLE holdfast_queue (
  seq          bigint PRIMARY KEY DEFAULT nextval('holdfast_queue_order'),
  key          text COLLATE "C" NOT NULL,
  node_id      bigint   NOT NULL,
  mode         smallint NOT NULL,
  permit_limit integer
);
CREATE INDEX holdfast_queue_key ON holdfast_queue (key, seq);

-- After members of key k left (the caller holds k's row lock): the row's lease becomes the
-- last lease of the members left (now: free, when none is), and a key some node waits for is
-- notified. The max is read by a statement of its own, after the lock, so a member committed
-- while the caller waited for the lock is seen.
CREATE FUNCTION holdfast_group_left(k text) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint := holdfast_now_ms();
  last_end bigint;
BEGIN
  SELECT max(m.lease_expires_at) INTO last_end FROM holdfast_members m
   WHERE m.key = k AND m.lease_expires_at > now_ms;
  UPDATE holdfast_holds h SET lease_expires_at = coalesce(last_end, now_ms)
   WHERE h.key = k AND h.mode <> 0 AND h.held_by = '';
  IF holdfast_key_waited(k) THEN PERFORM pg_notify('holdfast_keys', k); END IF;
END $$;

-- A shared (md 1) or semaphore (md 2, lim permits, take of them) grant of key k, as one
-- transaction. outcome: 1 granted (the new member's token and times), 0 not now (retry_at:
-- when a hold in the way ends, NULL: unknown), 2 the key is of another kind (kind_limit: 0 a
-- lock, else the semaphore's permits). nd: the caller's node (always); sess: its connection, for
-- a session hold (sc 1). my_seq: the caller's holdfast_queue row, deleted with
-- the grant. retake_only: only replace the caller's own hold (same principal and owner).
CREATE FUNCTION holdfast_grant_member(k text, hd text, who text, own text, ttl bigint,
                                      sc smallint, nd bigint, sess bigint, md smallint,
                                      lim integer, take integer, my_seq bigint,
                                      retake_only boolean)
  RETURNS TABLE (outcome smallint, token bigint, acquired_at bigint, lease_expires_at bigint,
                 db_now bigint, retry_at bigint, kind_limit integer)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r holdfast_holds%ROWTYPE;
  now_ms bigint;
  is_live boolean;
  cur integer;
  wanted integer := CASE WHEN md = 2 THEN lim ELSE 0 END;
  used bigint := 0;
  old holdfast_members%ROWTYPE;
  mine bigint;
  tok bigint;
BEGIN
  INSERT INTO holdfast_holds AS h (key, handle, token, held_by, acquired_at, lease_expires_at,
                                   scope, kind)
  VALUES (k, NULL, 0, '', 0, 0, 0, 0) ON CONFLICT (key) DO NOTHING;
  SELECT * INTO r FROM holdfast_holds h WHERE h.key = k FOR UPDATE;
  IF r.held_by <> '' THEN
    r.mode := 0;  -- a single hold (a node of an older version leaves a group's mode behind)
  END IF;
  now_ms := holdfast_now_ms();
  IF r.held_by <> '' AND r.lease_expires_at <= now_ms
     AND r.lease_expires_at + r.lock_delay_ms > now_ms THEN
    -- The lock-delay of an expired hold keeps the key closed to every mode.
    RETURN QUERY SELECT 0::smallint, NULL::bigint, NULL::bigint, NULL::bigint, now_ms,
                        r.lease_expires_at + r.lock_delay_ms, NULL::integer;
    RETURN;
  END IF;
  is_live := r.lease_expires_at IS NULL OR r.lease_expires_at > now_ms;
  IF is_live THEN
    cur := CASE WHEN r.mode = 2 THEN r.permit_limit ELSE 0 END;
  ELSE
    SELECT CASE WHEN q.mode = 2 THEN q.permit_limit ELSE 0 END INTO cur FROM holdfast_queue q
     WHERE q.key = k ORDER BY q.seq LIMIT 1;
  END IF;
  IF cur IS NOT NULL AND cur <> wanted THEN
    RETURN QUERY SELECT 2::smallint, NULL::bigint, NULL::bigint, NULL::bigint, now_ms,
                        NULL::bigint, cur;
    RETURN;
  END IF;
  IF is_live AND r.mode = 2 THEN
    SELECT coalesce(sum(m.permits), 0) INTO used FROM holdfast_members m
     WHERE m.key = k AND m.lease_expires_at > now_ms;
  END IF;
  -- Re-take: the caller's own hold of this mode is replaced, ahead of any waiter.
  IF own IS NOT NULL AND own <> '' AND is_live AND r.mode = md THEN
    SELECT * INTO old FROM holdfast_members m
     WHERE m.key = k AND m.held_by = who AND m.owner = own AND m.lease_expires_at > now_ms
     ORDER BY m.token LIMIT 1;
    IF FOUND AND (md <> 2 OR used - old.permits + take <= lim) THEN
      DELETE FROM holdfast_members m WHERE m.key = k AND m.token = old.token;
      used := used - old.permits;
    ELSIF retake_only THEN
      RETURN QUERY SELECT 0::smallint, NULL::bigint, NULL::bigint, NULL::bigint, now_ms,
                          NULL::bigint, NULL::integer;
      RETURN;
    ELSE
      old := NULL;
    END IF;
  ELSIF retake_only THEN
    RETURN QUERY SELECT 0::smallint, NULL::bigint, NULL::bigint, NULL::bigint, now_ms,
                        NULL::bigint, NULL::integer;
    RETURN;
  END IF;
  IF old.token IS NULL THEN
    -- No barging: a request of another node queued before this node's first goes first.
    SELECT min(q.seq) INTO mine FROM holdfast_queue q WHERE q.key = k AND q.node_id = nd;
    IF EXISTS (SELECT 1 FROM holdfast_queue q WHERE q.key = k AND q.node_id <> nd
                  AND (mine IS NULL OR q.seq < mine)) THEN
      RETURN QUERY SELECT 0::smallint, NULL::bigint, NULL::bigint, NULL::bigint, now_ms,
                          NULL::bigint, NULL::integer;
      RETURN;
    END IF;
    IF is_live AND (r.mode = 0 OR r.mode <> md OR (md = 2 AND used + take > lim)) THEN
      RETURN QUERY SELECT 0::smallint, NULL::bigint, NULL::bigint, NULL::bigint, now_ms,
          CASE WHEN r.mode = 0 THEN r.lease_expires_at
               ELSE (SELECT min(m.lease_expires_at) FROM holdfast_members m
                      WHERE m.key = k AND m.lease_expires_at > now_ms) END,
          NULL::integer;
      RETURN;
    END IF;
  END IF;
  tok := nextval('holdfast_tokens');
  INSERT INTO holdfast_members VALUES (k, tok, hd, who, own, now_ms, now_ms + ttl, sc,
                                       CASE WHEN sc = 1 THEN nd END, sess,
                                       CASE WHEN md = 2 THEN take ELSE 1 END);
  UPDATE holdfast_holds h SET handle = NULL, token = tok, held_by = '', owner = NULL,
         holder_id = NULL, acquired_at = now_ms, scope = 0, kind = 0, node_id = NULL,
         session_id = NULL, mode = md, permit_limit = CASE WHEN md = 2 THEN lim END,
          lock_delay_ms = 0,
         lease_expires_at = (SELECT max(m.lease_expires_at) FROM holdfast_members m
                              WHERE m.key = k AND m.lease_expires_at > now_ms)
   WHERE h.key = k;
  IF my_seq IS NOT NULL THEN
    DELETE FROM holdfast_queue q WHERE q.seq = my_seq;
  END IF;
  -- A request queued behind this one, or permits a smaller re-take gave back, may fit now.
  IF (my_seq IS NOT NULL OR old.token IS NOT NULL) AND holdfast_key_waited(k) THEN
    PERFORM pg_notify('holdfast_keys', k);
  END IF;
  RETURN QUERY SELECT 1::smallint, tok, now_ms, now_ms + ttl, now_ms, NULL::bigint,
                      NULL::integer;
END $$;

-- A blocked request leaves the key's queue: whoever it held back may go now.
CREATE FUNCTION holdfast_queue_leave(s bigint) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE k text;
BEGIN
  DELETE FROM holdfast_queue q WHERE q.seq = s RETURNING q.key INTO k;
  IF k IS NOT NULL AND holdfast_key_waited(k) THEN PERFORM pg_notify('holdfast_keys', k); END IF;
END $$;

-- Member holds end: by handle (hd), all of a key's (when who is NULL or every member is who's),
-- or session holds of a node (nd, sess NULL: all the node's) or of nodes silent for grace ms.
-- Answers the keys whose members left.
CREATE FUNCTION holdfast_release_member(k text, hd text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM 1 FROM holdfast_holds h WHERE h.key = k FOR UPDATE;
  DELETE FROM holdfast_members m
   WHERE m.key = k AND m.handle = hd AND m.lease_expires_at > holdfast_now_ms();
  IF NOT FOUND THEN RETURN false; END IF;
  PERFORM holdfast_group_left(k);
  RETURN true;
END $$;

CREATE FUNCTION holdfast_free_group(k text, who text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE now_ms bigint;
BEGIN
  PERFORM 1 FROM holdfast_holds h WHERE h.key = k FOR UPDATE;
  now_ms := holdfast_now_ms();
  IF who IS NOT NULL AND EXISTS (SELECT 1 FROM holdfast_members m WHERE m.key = k
                                    AND m.lease_expires_at > now_ms AND m.held_by <> who) THEN
    RETURN false;
  END IF;
  DELETE FROM holdfast_members m WHERE m.key = k AND m.lease_expires_at > now_ms;
  IF NOT FOUND THEN RETURN false; END IF;
  PERFORM holdfast_group_left(k);
  RETURN true;
END $$;

-- Moves the lease end of every member of k to `at` (when every member is who's, or who is NULL).
CREATE FUNCTION holdfast_extend_group(k text, at bigint, who text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE now_ms bigint;
BEGIN
  PERFORM 1 FROM holdfast_holds h WHERE h.key = k FOR UPDATE;
  now_ms := holdfast_now_ms();
  IF who IS NOT NULL AND EXISTS (SELECT 1 FROM holdfast_members m WHERE m.key = k
                                    AND m.lease_expires_at > now_ms AND m.held_by <> who) THEN
    RETURN false;
  END IF;
  UPDATE holdfast_members m SET lease_expires_at = at
   WHERE m.key = k AND m.lease_expires_at > now_ms;
  IF NOT FOUND THEN RETURN false; END IF;
  PERFORM holdfast_group_left(k);
  RETURN true;
END $$;

CREATE FUNCTION holdfast_renew_member(k text, hd text, ttl bigint) RETURNS bigint
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE ends bigint;
BEGIN
  PERFORM 1 FROM holdfast_holds h WHERE h.key = k FOR UPDATE;
  UPDATE holdfast_members m SET lease_expires_at = holdfast_now_ms() + ttl
   WHERE m.key = k AND m.handle = hd AND m.lease_expires_at > holdfast_now_ms()
  RETURNING m.lease_expires_at INTO ends;
  IF ends IS NOT NULL THEN
    UPDATE holdfast_holds h SET lease_expires_at = (SELECT max(m.lease_expires_at)
                                                      FROM holdfast_members m WHERE m.key = k)
     WHERE h.key = k;
  END IF;
  RETURN ends;
END $$;

CREATE FUNCTION holdfast_free_session_members(nd bigint, sess bigint, grace bigint)
  RETURNS SETOF text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint := holdfast_now_ms();
  k text;
BEGIN
  -- Each key's row is locked before its members go, as everywhere (no lock-order deadlock).
  FOR k IN SELECT DISTINCT m.key FROM holdfast_members m
            WHERE m.scope = 1 AND CASE WHEN grace IS NULL
                    THEN m.node_id = nd AND (sess IS NULL OR m.session_id = sess)
                    ELSE NOT EXISTS (SELECT 1 FROM holdfast_nodes n WHERE n.id = m.node_id
                                        AND n.heartbeat_at > now_ms - grace) END
            ORDER BY 1
  LOOP
    PERFORM 1 FROM holdfast_holds h WHERE h.key = k FOR UPDATE;
    DELETE FROM holdfast_members m
     WHERE m.key = k AND m.scope = 1 AND CASE WHEN grace IS NULL
             THEN m.node_id = nd AND (sess IS NULL OR m.session_id = sess)
             ELSE NOT EXISTS (SELECT 1 FROM holdfast_nodes n WHERE n.id = m.node_id
                                 AND n.heartbeat_at > now_ms - grace) END;
    IF FOUND THEN
      PERFORM holdfast_group_left(k);
      RETURN NEXT k;
    END IF;
  END LOOP;
END $$;
)sql"},
    Migration{5, "multi-key groups: holdfast_grant_group, release and renew by handle",
              kGroupsMigrationSql},
    Migration{6, "members.lock_delay_ms: a lock-delay for shared and semaphore holds",
              kMemberDelayMigrationSql},
    Migration{7, "lock events: holdfast_watchers and the triggers that NOTIFY changes",
              kEventsMigrationSql},
    Migration{8, "nodes.contact_since and holdfast_session_lapsed(): the session-liveness rule",
              kLivenessMigrationSql},
    Migration{9, "typed values: holdfast_values, a key is a lock or a value", kValuesMigrationSql},
    Migration{10, "cheaper rows: the type check only where values were made, waiters per statement",
              kRowCostMigrationSql},
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
