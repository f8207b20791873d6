// Schema version 6: a lock-delay for shared and semaphore holds (docs/lock-kinds.md,
// "Lock-delay"). Shipped migrations are never edited (schema.h): this one renames the member
// grant of version 4 and puts a wrapper in its place.
#include "service/postgres/schema.h"

namespace holdfast::pg {

const char kMemberDelayMigrationSql[] = R"sql(
-- A member whose lease ended by expiry, or whose session ended, keeps the key closed until
-- lease_expires_at + lock_delay_ms. Such a member stays in the table (no longer live) until
-- the sweep; a release deletes it, so a release closes nothing.
ALTER TABLE holdfast_members ADD COLUMN lock_delay_ms bigint NOT NULL DEFAULT 0;

-- While a member's lock-delay keeps key k closed at now_ms: the instant it opens; else NULL.
CREATE FUNCTION holdfast_members_closed_until(k text, now_ms bigint) RETURNS bigint
  LANGUAGE sql STABLE AS $$
  SELECT max(m.lease_expires_at + m.lock_delay_ms) FROM holdfast_members m
   WHERE m.key = k AND m.lock_delay_ms > 0 AND m.lease_expires_at <= now_ms
     AND m.lease_expires_at + m.lock_delay_ms > now_ms
$$;

-- A group row's lock_delay_ms follows its members: the row's lease end plus it is the last
-- instant a member's delay keeps the key closed (its members' ends plus their delays), so the
-- statements that grant a key exclusively, which read only the row, keep it closed as long.
-- Every change of a key's members updates its row afterwards, which runs this.
CREATE FUNCTION holdfast_group_row_delay() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE closes bigint;
BEGIN
  SELECT max(m.lease_expires_at + m.lock_delay_ms) INTO closes FROM holdfast_members m
   WHERE m.key = NEW.key AND m.lock_delay_ms > 0;
  NEW.lock_delay_ms := greatest(0, coalesce(closes - NEW.lease_expires_at, 0));
  RETURN NEW;
END $$;
CREATE TRIGGER holdfast_group_row_delay BEFORE UPDATE ON holdfast_holds FOR EACH ROW
  WHEN (NEW.held_by = '' AND NEW.mode <> 0) EXECUTE FUNCTION holdfast_group_row_delay();

ALTER FUNCTION holdfast_grant_member(text, text, text, text, bigint, smallint, bigint, bigint,
                                     smallint, integer, integer, bigint, boolean)
  RENAME TO holdfast_grant_member_v4;

-- The member grant of version 4 (same arguments and answers), refusing while a member's
-- lock-delay keeps the key closed (retry_at: when it opens), and giving the new member the
-- lock-delay dly.
CREATE FUNCTION holdfast_grant_member(k text, hd text, who text, own text, ttl bigint,
                                      sc smallint, nd bigint, sess bigint, md smallint,
                                      lim integer, take integer, my_seq bigint,
                                      retake_only boolean, dly bigint)
  RETURNS TABLE (outcome smallint, token bigint, acquired_at bigint, lease_expires_at bigint,
                 db_now bigint, retry_at bigint, kind_limit integer)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint;
  closed bigint;
  g record;
BEGIN
  INSERT INTO holdfast_holds AS h (key, handle, token, held_by, acquired_at, lease_expires_at,
                                   scope, kind)
  VALUES (k, NULL, 0, '', 0, 0, 0, 0) ON CONFLICT (key) DO NOTHING;
  PERFORM 1 FROM holdfast_holds h WHERE h.key = k FOR UPDATE;
  now_ms := holdfast_now_ms();
  closed := holdfast_members_closed_until(k, now_ms);
  IF closed IS NOT NULL THEN
    RETURN QUERY SELECT 0::smallint, NULL::bigint, NULL::bigint, NULL::bigint, now_ms, closed,
                        NULL::integer;
    RETURN;
  END IF;
  SELECT * INTO g FROM holdfast_grant_member_v4(k, hd, who, own, ttl, sc, nd, sess, md, lim,
                                                take, my_seq, retake_only) x;
  IF g.outcome = 1 AND dly > 0 THEN
    UPDATE holdfast_members m SET lock_delay_ms = dly WHERE m.key = k AND m.token = g.token;
    UPDATE holdfast_holds h SET lock_delay_ms = 0 WHERE h.key = k;  -- the trigger recounts it
  END IF;
  RETURN QUERY SELECT g.outcome, g.token, g.acquired_at, g.lease_expires_at, g.db_now,
                      g.retry_at, g.kind_limit;
END $$;

-- Under its version 4 name and arguments (a multi-key grant, and nodes of the previous
-- version during an upgrade): no lock-delay for the new member.
CREATE FUNCTION holdfast_grant_member(k text, hd text, who text, own text, ttl bigint,
                                      sc smallint, nd bigint, sess bigint, md smallint,
                                      lim integer, take integer, my_seq bigint,
                                      retake_only boolean)
  RETURNS TABLE (outcome smallint, token bigint, acquired_at bigint, lease_expires_at bigint,
                 db_now bigint, retry_at bigint, kind_limit integer)
  LANGUAGE sql VOLATILE AS $$
  SELECT * FROM holdfast_grant_member(k, hd, who, own, ttl, sc, nd, sess, md, lim, take, my_seq,
                                      retake_only, 0::bigint)
$$;

-- Session members end as in version 4, except that one with a lock-delay stays as a member
-- whose lease ended now (or earlier, at its own end), which keeps its key closed.
CREATE OR REPLACE FUNCTION holdfast_free_session_members(nd bigint, sess bigint, grace bigint)
  RETURNS SETOF text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint := holdfast_now_ms();
  k text;
  ended boolean;
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
    UPDATE holdfast_members m
       SET lease_expires_at = LEAST(m.lease_expires_at, now_ms), scope = 0, node_id = NULL,
           session_id = NULL
     WHERE m.key = k AND m.scope = 1 AND m.lock_delay_ms > 0 AND CASE WHEN grace IS NULL
             THEN m.node_id = nd AND (sess IS NULL OR m.session_id = sess)
             ELSE NOT EXISTS (SELECT 1 FROM holdfast_nodes n WHERE n.id = m.node_id
                                 AND n.heartbeat_at > now_ms - grace) END;
    ended := FOUND;
    DELETE FROM holdfast_members m
     WHERE m.key = k AND m.scope = 1 AND CASE WHEN grace IS NULL
             THEN m.node_id = nd AND (sess IS NULL OR m.session_id = sess)
             ELSE NOT EXISTS (SELECT 1 FROM holdfast_nodes n WHERE n.id = m.node_id
                                 AND n.heartbeat_at > now_ms - grace) END;
    IF ended OR FOUND THEN
      PERFORM holdfast_group_left(k);
      RETURN NEXT k;
    END IF;
  END LOOP;
END $$;
)sql";

}  // namespace holdfast::pg
