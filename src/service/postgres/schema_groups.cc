// Schema version 5: several keys at once (docs/lock-kinds.md, "Several keys at once"; the
// design in service/postgres/pg_groups.cc). Shipped migrations are never edited (schema.h).
#include "service/postgres/schema.h"

namespace holdfast::pg {

const char kGroupsMigrationSql[] = R"sql(
-- A multi-key group (docs/lock-kinds.md, "Several keys at once") is one hold per key, each an
-- ordinary row (exclusive: holdfast_holds; shared or semaphore: holdfast_members), all with the
-- group's one handle. Release and renew find every hold of a handle through these indexes.
CREATE INDEX holdfast_holds_handle ON holdfast_holds (handle) WHERE handle IS NOT NULL;
CREATE INDEX holdfast_members_handle ON holdfast_members (handle);

-- The kind key k has now for a request (row r locked, r.mode already 0 for a single hold): 0 a
-- lock, n a semaphore of n permits, NULL none (no live hold and nobody queued).
CREATE FUNCTION holdfast_key_kind(r holdfast_holds, k text, now_ms bigint) RETURNS integer
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE cur integer;
BEGIN
  IF r.lease_expires_at IS NULL OR r.lease_expires_at > now_ms THEN
    RETURN CASE WHEN r.mode = 2 THEN r.permit_limit ELSE 0 END;
  END IF;
  SELECT CASE WHEN q.mode = 2 THEN q.permit_limit ELSE 0 END INTO cur FROM holdfast_queue q
   WHERE q.key = k ORDER BY q.seq LIMIT 1;
  RETURN cur;
END $$;

-- A group grant: keys ks (sorted as bytes, distinct) with modes mds (0 exclusive, 1 shared,
-- 2 semaphore), lims (a semaphore's permits) and takes (the permits it takes), all or nothing,
-- as ONE transaction. Every key's row is locked first, in key order, so two groups never wait
-- for each other's rows in a cycle. Answers one row per key when granted (outcome 1, in key
-- order, one acquired_at and lease end for all), else one row: outcome 0 (key: the first key
-- that does not fit; retry_at: when a hold in the way ends, NULL unknown) or 2 (key: the first
-- key of another kind; kind_limit: 0 a lock, else the semaphore's permits). A re-take (the same
-- principal, non-empty owner, keys, modes and permits as a live group) replaces that group.
CREATE FUNCTION holdfast_grant_group(ks text[], mds smallint[], lims integer[], takes integer[],
                                     hd text, who text, own text, ttl bigint, sc smallint,
                                     nd bigint, sess bigint)
  RETURNS TABLE (outcome smallint, gkey text, gtoken bigint, gacquired bigint, gends bigint,
                 db_now bigint, retry_at bigint, kind_limit integer)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer := cardinality(ks);
  i integer;
  r holdfast_holds%ROWTYPE;
  now_ms bigint;
  cur integer;
  g record;
  old_hd text;
  toks bigint[] := '{}';
  bad_key text;
  bad_at bigint;
BEGIN
  FOR i IN 1..n LOOP
    INSERT INTO holdfast_holds AS h (key, handle, token, held_by, acquired_at, lease_expires_at,
                                     scope, kind)
    VALUES (ks[i], NULL, 0, '', 0, 0, 0, 0) ON CONFLICT (key) DO NOTHING;
    PERFORM 1 FROM holdfast_holds h WHERE h.key = ks[i] FOR UPDATE;
  END LOOP;
  now_ms := holdfast_now_ms();
  -- A key of another kind refuses the request whatever else is busy, as a single acquire does.
  FOR i IN 1..n LOOP
    SELECT * INTO r FROM holdfast_holds h WHERE h.key = ks[i];
    IF r.held_by <> '' THEN r.mode := 0; END IF;
    cur := holdfast_key_kind(r, ks[i], now_ms);
    IF cur IS NOT NULL AND cur <> (CASE WHEN mds[i] = 2 THEN lims[i] ELSE 0 END) THEN
      RETURN QUERY SELECT 2::smallint, ks[i], NULL::bigint, NULL::bigint, NULL::bigint, now_ms,
                          NULL::bigint, cur;
      RETURN;
    END IF;
  END LOOP;
  IF own IS NOT NULL AND own <> '' THEN
    SELECT h.handle INTO old_hd FROM holdfast_holds h
     WHERE h.key = ks[1] AND h.kind = 0 AND h.held_by = who AND h.owner = own
       AND h.lease_expires_at > now_ms;
    IF old_hd IS NULL THEN
      SELECT m.handle INTO old_hd FROM holdfast_members m
       WHERE m.key = ks[1] AND m.held_by = who AND m.owner = own AND m.lease_expires_at > now_ms
       ORDER BY m.token LIMIT 1;
    END IF;
    IF old_hd IS NOT NULL AND NOT EXISTS (
        (SELECT h.key, 0::smallint, 0, 1 FROM holdfast_holds h
          WHERE h.handle = old_hd AND h.lease_expires_at > now_ms
         UNION ALL
         SELECT m.key, hh.mode, coalesce(hh.permit_limit, 0),
                CASE WHEN hh.mode = 2 THEN m.permits ELSE 1 END
           FROM holdfast_members m JOIN holdfast_holds hh ON hh.key = m.key
          WHERE m.handle = old_hd AND m.lease_expires_at > now_ms)
        EXCEPT ALL
        SELECT q.k, q.md, CASE WHEN q.md = 2 THEN q.lim ELSE 0 END,
               CASE WHEN q.md = 2 THEN q.take ELSE 1 END
          FROM unnest(ks, mds, lims, takes) AS q(k, md, lim, take))
       AND (SELECT count(*) FROM holdfast_holds h
             WHERE h.handle = old_hd AND h.lease_expires_at > now_ms)
         + (SELECT count(*) FROM holdfast_members m
             WHERE m.handle = old_hd AND m.lease_expires_at > now_ms) = n THEN
      NULL;  -- the same group: replaced below
    ELSE
      old_hd := NULL;
    END IF;
  END IF;
  BEGIN
    IF old_hd IS NOT NULL THEN
      UPDATE holdfast_holds h SET lease_expires_at = now_ms, handle = NULL, scope = 0,
             node_id = NULL, session_id = NULL, lock_delay_ms = 0
       WHERE h.handle = old_hd AND h.key = ANY (ks);
      DELETE FROM holdfast_members m WHERE m.handle = old_hd AND m.key = ANY (ks);
    END IF;
    FOR i IN 1..n LOOP
      IF mds[i] = 0 THEN
        SELECT * INTO r FROM holdfast_holds h WHERE h.key = ks[i];
        IF r.held_by <> '' THEN r.mode := 0; END IF;
        IF r.lease_expires_at IS NULL OR r.lease_expires_at + r.lock_delay_ms > now_ms THEN
          bad_key := ks[i];
          IF r.lease_expires_at IS NULL OR r.lease_expires_at > now_ms THEN
            bad_at := CASE WHEN r.mode = 0 THEN r.lease_expires_at
                           ELSE (SELECT min(m.lease_expires_at) FROM holdfast_members m
                                  WHERE m.key = ks[i] AND m.lease_expires_at > now_ms) END;
          ELSE
            bad_at := r.lease_expires_at + r.lock_delay_ms;
          END IF;
          RAISE EXCEPTION USING ERRCODE = 'HF001';
        END IF;
        UPDATE holdfast_holds h SET handle = hd, token = nextval('holdfast_tokens'),
               held_by = who, owner = own, holder_id = NULL, acquired_at = now_ms,
               lease_expires_at = now_ms + ttl, scope = sc, kind = 0,
               node_id = CASE WHEN sc = 1 THEN nd END, session_id = sess, lock_delay_ms = 0,
               mode = 0, permit_limit = NULL
         WHERE h.key = ks[i] RETURNING h.token INTO g;
        toks := toks || g.token;
      ELSE
        SELECT * INTO g FROM holdfast_grant_member(ks[i], hd, who, NULL, ttl, sc, nd, sess,
                                                   mds[i], lims[i], takes[i], NULL, false) x;
        IF g.outcome <> 1 THEN
          bad_key := ks[i];
          bad_at := g.retry_at;
          RAISE EXCEPTION USING ERRCODE = 'HF001';
        END IF;
        -- One start and one lease end for every hold of the group.
        UPDATE holdfast_members m SET owner = own, acquired_at = now_ms,
               lease_expires_at = now_ms + ttl
         WHERE m.key = ks[i] AND m.token = g.token;
        UPDATE holdfast_holds h SET lease_expires_at = (SELECT max(m.lease_expires_at)
                                                          FROM holdfast_members m
                                                         WHERE m.key = ks[i]
                                                           AND m.lease_expires_at > now_ms)
         WHERE h.key = ks[i];
        toks := toks || g.token;
      END IF;
    END LOOP;
  EXCEPTION WHEN SQLSTATE 'HF001' THEN
    -- Everything this block did is undone: the group holds no key.
    RETURN QUERY SELECT 0::smallint, bad_key, NULL::bigint, NULL::bigint, NULL::bigint,
                        now_ms, bad_at, NULL::integer;
    RETURN;
  END;
  IF old_hd IS NOT NULL THEN
    -- The replaced group's keys: a waiter of one of them may have seen it held.
    FOR i IN 1..n LOOP
      IF holdfast_key_waited(ks[i]) THEN PERFORM pg_notify('holdfast_keys', ks[i]); END IF;
    END LOOP;
  END IF;
  RETURN QUERY SELECT 1::smallint, q.k, q.t, now_ms, now_ms + ttl, now_ms, NULL::bigint,
                      NULL::integer
                 FROM unnest(ks, toks) AS q(k, t);
END $$;

-- The keys of the live holds of handle hd, in key order, when one of them is on key k (a
-- single hold's handle is on one key; a group's on each of its keys); else none.
CREATE FUNCTION holdfast_handle_keys(k text, hd text, now_ms bigint) RETURNS text[]
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE ks text[];
BEGIN
  SELECT array_agg(q.key ORDER BY q.key) INTO ks FROM (
    SELECT h.key FROM holdfast_holds h WHERE h.handle = hd AND h.lease_expires_at > now_ms
    UNION
    SELECT m.key FROM holdfast_members m WHERE m.handle = hd AND m.lease_expires_at > now_ms) q;
  IF ks IS NULL OR NOT (k = ANY (ks)) THEN RETURN NULL; END IF;
  RETURN ks;
END $$;

-- Release by key and handle: frees every live hold of the handle (a group's on all its keys),
-- locking the keys' rows in key order, and notifies the keys some node waits for. Answers the
-- keys freed. An exclusive row keeps its last token, as every release does (hold_rows.h).
CREATE FUNCTION holdfast_release_handle(k text, hd text) RETURNS SETOF text
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint := holdfast_now_ms();
  ks text[] := holdfast_handle_keys(k, hd, now_ms);
  x text;
BEGIN
  IF ks IS NULL THEN RETURN; END IF;
  FOREACH x IN ARRAY ks LOOP
    PERFORM 1 FROM holdfast_holds h WHERE h.key = x FOR UPDATE;
    now_ms := holdfast_now_ms();
    UPDATE holdfast_holds h
       SET lease_expires_at = LEAST(coalesce(h.lease_expires_at, now_ms), now_ms), handle = NULL,
           scope = 0, node_id = NULL, session_id = NULL, lock_delay_ms = 0
     WHERE h.key = x AND h.handle = hd AND h.lease_expires_at > now_ms;
    IF FOUND THEN
      IF holdfast_key_waited(x) THEN PERFORM pg_notify('holdfast_keys', x); END IF;
      RETURN NEXT x;
    ELSE
      DELETE FROM holdfast_members m
       WHERE m.key = x AND m.handle = hd AND m.lease_expires_at > now_ms;
      IF FOUND THEN
        PERFORM holdfast_group_left(x);
        RETURN NEXT x;
      END IF;
    END IF;
  END LOOP;
END $$;

-- Renew by key and handle: every live hold of the handle gets the one new lease end (answered;
-- NULL when the hold on k was not live).
CREATE FUNCTION holdfast_renew_handle(k text, hd text, ttl bigint) RETURNS bigint
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint := holdfast_now_ms();
  ks text[] := holdfast_handle_keys(k, hd, now_ms);
  ends bigint;
  renewed boolean := false;
  x text;
BEGIN
  IF ks IS NULL THEN RETURN NULL; END IF;
  FOREACH x IN ARRAY ks LOOP
    PERFORM 1 FROM holdfast_holds h WHERE h.key = x FOR UPDATE;
    IF ends IS NULL THEN ends := holdfast_now_ms() + ttl; END IF;
    UPDATE holdfast_holds h SET lease_expires_at = ends
     WHERE h.key = x AND h.handle = hd AND h.lease_expires_at > holdfast_now_ms();
    IF NOT FOUND THEN
      UPDATE holdfast_members m SET lease_expires_at = ends
       WHERE m.key = x AND m.handle = hd AND m.lease_expires_at > holdfast_now_ms();
      IF FOUND THEN
        UPDATE holdfast_holds h SET lease_expires_at = (SELECT max(m.lease_expires_at)
                                                          FROM holdfast_members m
                                                         WHERE m.key = x)
         WHERE h.key = x;
      END IF;
    END IF;
    IF FOUND AND x = k THEN renewed := true; END IF;
  END LOOP;
  RETURN CASE WHEN renewed THEN ends END;
END $$;
)sql";

}  // namespace holdfast::pg
