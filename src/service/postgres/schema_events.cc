// Schema version 7: lock events across nodes (docs/events.md, docs/scale-out.md). Shipped
// migrations are never edited (schema.h).
//
// A node with someone watching has a row in holdfast_watchers. While the table has a row, two
// triggers tell every change of a hold (holdfast_holds) and of a shared or semaphore hold
// (holdfast_members) as a NOTIFY on the schema's events channel, at the commit of the
// transaction that made it: every node hears every change, in commit order, when (and only if)
// it commits. While it
// has none the triggers are disabled, so a lock statement pays nothing for events nobody reads
// (NOTIFY also takes a cluster-wide lock at commit). holdfast_set_watching() adds or removes a
// node's row and enables or disables the triggers, serialised by an advisory lock.
//
// The payload is one JSON object (service/postgres/pg_event_payload.h reads it): e kind, k key,
// t token, h heldBy, o owner, i holder id, a acquiredAt, x leaseExpiresAt, s scope, d hold kind,
// m mode, p permits, n take, at the database's time; a grant that replaced a hold adds pv (its
// token) and pl (whether it was still live: a re-take or transfer, not an expiry). A lease that
// simply runs out changes no row: the nodes tell `expired` themselves (pg_events.h).
#include "service/postgres/schema.h"

namespace holdfast::pg {

const char kEventsMigrationSql[] = R"sql(
CREATE TABLE holdfast_watchers (
  node_id bigint PRIMARY KEY,
  since   bigint NOT NULL
);

-- The NOTIFY channel of one kind ('events', 'pubsub') for the cluster in schema sch: channels
-- belong to the database, and clusters in other schemas of it must not hear this one.
CREATE FUNCTION holdfast_channel(kind text, sch text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'holdfast_' || kind || '_' || left(md5(sch), 12)
$$;

CREATE FUNCTION holdfast_event_payload(ev text, k text, tok bigint, who text, own text,
                                       holder text, acq bigint, lease bigint, sc smallint,
                                       kd smallint, md smallint, lim integer, tk integer,
                                       prev bigint, prev_live boolean, at bigint)
  RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT json_strip_nulls(json_build_object('e', ev, 'k', k, 't', tok, 'h', who, 'o', own,
                                            'i', holder, 'a', acq, 'x', lease, 's', sc,
                                            'd', kd, 'm', md, 'p', lim, 'n', tk, 'pv', prev,
                                            'pl', prev_live, 'at', at))::text
$$;

-- A single hold's row: a grant (a new token), the end of a hold by a statement (release,
-- unassign, DEL, the end of a session), or a new lease end. A row of a shared or semaphore key
-- (heldBy '') stands for its members, which holdfast_member_event() tells.
CREATE FUNCTION holdfast_hold_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  now_ms bigint := holdfast_now_ms();
  ch text := holdfast_channel('events', TG_TABLE_SCHEMA);
  old_live boolean := false;
  new_live boolean;
  ev text;
BEGIN
  IF NEW.held_by = '' THEN
    RETURN NULL;
  END IF;
  new_live := NEW.lease_expires_at IS NULL OR NEW.lease_expires_at > now_ms;
  IF TG_OP = 'UPDATE' AND OLD.held_by <> '' THEN
    old_live := OLD.lease_expires_at IS NULL OR OLD.lease_expires_at > now_ms;
  END IF;
  IF TG_OP = 'INSERT' OR NEW.token <> OLD.token THEN
    IF NOT new_live THEN
      RETURN NULL;
    END IF;
    ev := CASE WHEN NEW.kind = 0 THEN 'acquired'
               WHEN TG_OP = 'UPDATE' AND old_live AND OLD.kind = 1 THEN 'transferred'
               ELSE 'assigned' END;
    PERFORM pg_notify(ch, holdfast_event_payload(
      ev, NEW.key, NEW.token, NEW.held_by, NEW.owner, NEW.holder_id, NEW.acquired_at,
      NEW.lease_expires_at, NEW.scope, NEW.kind, 0::smallint, NULL, NULL,
      CASE WHEN TG_OP = 'UPDATE' AND OLD.held_by <> '' THEN OLD.token END,
      CASE WHEN TG_OP = 'UPDATE' AND OLD.held_by <> '' THEN old_live END, now_ms));
  ELSIF old_live AND NOT new_live THEN
    PERFORM pg_notify(ch, holdfast_event_payload(
      CASE WHEN OLD.kind = 1 THEN 'unassigned' ELSE 'released' END, OLD.key, OLD.token,
      OLD.held_by, OLD.owner, OLD.holder_id, OLD.acquired_at, NEW.lease_expires_at, OLD.scope,
      OLD.kind, 0::smallint, NULL, NULL, NULL, NULL, now_ms));
  ELSIF new_live AND NEW.lease_expires_at IS DISTINCT FROM OLD.lease_expires_at THEN
    PERFORM pg_notify(ch, holdfast_event_payload(
      'renewed', NEW.key, NEW.token, NEW.held_by, NEW.owner, NEW.holder_id, NEW.acquired_at,
      NEW.lease_expires_at, NEW.scope, NEW.kind, 0::smallint, NULL, NULL, NULL, NULL, now_ms));
  END IF;
  RETURN NULL;
END $$;

-- A shared or semaphore hold: a grant (a new row), its end by a statement (a release deletes
-- the row, the end of a session ends its lease), or a new lease end. Its mode and the key's
-- permits are on the key's row.
CREATE FUNCTION holdfast_member_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  now_ms bigint := holdfast_now_ms();
  ch text := holdfast_channel('events', TG_TABLE_SCHEMA);
  m record;
  md smallint;
  lim integer;
  old_live boolean := false;
  new_live boolean := false;
  ev text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    m := OLD;
  ELSE
    m := NEW;
  END IF;
  SELECT h.mode, h.permit_limit INTO md, lim FROM holdfast_holds h WHERE h.key = m.key;
  IF TG_OP <> 'INSERT' THEN
    old_live := OLD.lease_expires_at > now_ms;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    new_live := NEW.lease_expires_at > now_ms;
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NOT new_live THEN
      RETURN NULL;
    END IF;
    ev := 'acquired';
  ELSIF old_live AND NOT new_live THEN
    ev := 'released';
  ELSIF TG_OP = 'UPDATE' AND new_live AND NEW.lease_expires_at <> OLD.lease_expires_at THEN
    ev := 'renewed';
  ELSE
    RETURN NULL;
  END IF;
  PERFORM pg_notify(ch, holdfast_event_payload(
    ev, m.key, m.token, m.held_by, m.owner, NULL, m.acquired_at,
    CASE WHEN TG_OP = 'DELETE' THEN now_ms ELSE NEW.lease_expires_at END, m.scope,
    0::smallint, coalesce(md, 1::smallint), lim, m.permits, NULL, NULL, now_ms));
  RETURN NULL;
END $$;

-- Deferred to the commit, in the order the changes were made: a member's mode is on the key's
-- row, which its grant updates after inserting the member; and a transaction (EXEC, a script)
-- that changes one key twice has its changes told in that order.
CREATE CONSTRAINT TRIGGER holdfast_hold_events AFTER INSERT OR UPDATE ON holdfast_holds
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION holdfast_hold_event();
CREATE CONSTRAINT TRIGGER holdfast_member_events AFTER INSERT OR UPDATE OR DELETE
  ON holdfast_members DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  EXECUTE FUNCTION holdfast_member_event();
ALTER TABLE holdfast_holds DISABLE TRIGGER holdfast_hold_events;
ALTER TABLE holdfast_members DISABLE TRIGGER holdfast_member_events;

-- Node `node` has someone watching (or not any more): its row, and the triggers on while any
-- row is left (rows of nodes that are gone are dropped on the way). Every node hears the
-- outcome on the events channel ({"watching": true|false}), so it knows whether to tell its
-- own waiters' comings and goings. Answers whether anyone watches.
CREATE FUNCTION holdfast_set_watching(node bigint, watching boolean) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  anyone boolean;
  enabled boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(1215261796, 7);  -- kAdvisoryClass, "Hold"
  IF watching THEN
    INSERT INTO holdfast_watchers (node_id, since) VALUES (node, holdfast_now_ms())
      ON CONFLICT (node_id) DO NOTHING;
  ELSE
    DELETE FROM holdfast_watchers WHERE node_id = node;
  END IF;
  DELETE FROM holdfast_watchers w
   WHERE NOT EXISTS (SELECT 1 FROM holdfast_nodes n WHERE n.id = w.node_id);
  anyone := EXISTS (SELECT 1 FROM holdfast_watchers);
  SELECT t.tgenabled <> 'D' INTO enabled FROM pg_trigger t
   WHERE t.tgrelid = 'holdfast_holds'::regclass AND t.tgname = 'holdfast_hold_events';
  IF anyone AND NOT enabled THEN
    ALTER TABLE holdfast_holds ENABLE TRIGGER holdfast_hold_events;
    ALTER TABLE holdfast_members ENABLE TRIGGER holdfast_member_events;
  ELSIF enabled AND NOT anyone THEN
    ALTER TABLE holdfast_holds DISABLE TRIGGER holdfast_hold_events;
    ALTER TABLE holdfast_members DISABLE TRIGGER holdfast_member_events;
  END IF;
  PERFORM pg_notify(holdfast_channel('events', current_schema()),
                    json_build_object('watching', anyone)::text);
  RETURN anyone;
END $$;

-- The lease end of the hold of key k with token tok by the database's clock now, for a node
-- that saw no event end it: (now, present, lease end; NULL lease: no end).
CREATE FUNCTION holdfast_hold_lease(k text, tok bigint,
                                    OUT now_ms bigint, OUT present boolean, OUT lease bigint)
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  now_ms := holdfast_now_ms();
  SELECT true, h.lease_expires_at INTO present, lease FROM holdfast_holds h
   WHERE h.key = k AND h.token = tok AND h.held_by <> '';
  IF NOT FOUND THEN
    SELECT true, m.lease_expires_at INTO present, lease FROM holdfast_members m
     WHERE m.key = k AND m.token = tok;
  END IF;
  present := coalesce(present, false);
END $$;
)sql";

}  // namespace holdfast::pg
