// Schema version 10: the same rules for each lock row at less CPU of the database
// (docs/scale-out.md, "Where the time goes"). Shipped migrations are never edited (schema.h).
//
// A grant of a free key paid for the type check of version 9 with two PL/pgSQL calls (the
// trigger, and holdfast_claim_key() in it) and a query of holdfast_values; a statement that
// frees keys paid a PL/pgSQL call and a query per freed key for holdfast_key_waited(). Now:
//  - The trigger's WHEN condition takes the claim, and the trigger runs (and looks for a value)
//    only in a database where a value was ever made: holdfast_values_made, a sequence, is drawn
//    from before the first row of holdfast_values is inserted. A sequence is not transactional:
//    a draw is seen by every session at once, committed or not. So a grant that, holding the
//    key's claim, finds it never drawn knows that no value row was ever inserted, committed or
//    not, by anyone; and a value made after that look waits for the claim, then sees the
//    grant's row and refuses (the rule of version 9, unchanged). A database of locks only pays
//    the claim and a read of the sequence's page, no PL/pgSQL.
//  - holdfast_keys_waited() answers a whole statement's freed keys at once.
//
// Nodes of version 9 still running keep working: the trigger keeps its name and guards their
// grants as it guards every writer's; their values draw from the sequence through a trigger on
// holdfast_values; holdfast_key_waited() and holdfast_claim_key() stay, with the same meaning.
#include "service/postgres/schema.h"

namespace holdfast::pg {

const char kRowCostMigrationSql[] = R"sql(
-- Drawn (once is enough) before any row of holdfast_values is made: never drawn, no value was
-- ever made. The trigger below draws, unless someone already did, at every statement that may
-- insert a value, by a node of any version, before its first row.
CREATE SEQUENCE holdfast_values_made AS bigint;

CREATE FUNCTION holdfast_values_made() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_sequence_last_value('holdfast_values_made') IS NULL THEN
    PERFORM nextval('holdfast_values_made');
  END IF;
  RETURN NULL;
END $$;
-- Creating it waits for the inserts under way; the values committed until then are counted next.
CREATE TRIGGER holdfast_values_made BEFORE INSERT ON holdfast_values
  FOR EACH STATEMENT EXECUTE FUNCTION holdfast_values_made();
SELECT nextval('holdfast_values_made') WHERE EXISTS (SELECT 1 FROM holdfast_values);

-- The rule of version 9 (a lock row is never made on a key holding a live value), same trigger
-- name, in two steps. First its WHEN condition, a plain SQL expression that PostgreSQL inlines
-- (no PL/pgSQL call): take the key's claim (holdfast_claim_key()'s lock) if it is free at once,
-- and fire the trigger only when it was not, or when a value was ever made.
CREATE FUNCTION holdfast_hold_needs_look(k text) RETURNS boolean LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN pg_try_advisory_xact_lock(1215261797, hashtext(k))
              THEN pg_sequence_last_value('holdfast_values_made') IS NOT NULL
              ELSE true END
$$;
-- Then the trigger: waits for the claim (held already when the WHEN took it), and looks, with a
-- fresh snapshot taken after the claim, as before.
CREATE OR REPLACE FUNCTION holdfast_holds_not_a_value() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(1215261797, hashtext(NEW.key));  -- holdfast_claim_key()
  IF pg_sequence_last_value('holdfast_values_made') IS NULL THEN
    RETURN NEW;
  END IF;
  IF EXISTS (SELECT 1 FROM holdfast_values v WHERE v.key = NEW.key
               AND (v.expires_at IS NULL OR v.expires_at > holdfast_now_ms())) THEN
    RAISE EXCEPTION 'WRONGTYPE Operation against a key holding the wrong kind of value'
      USING ERRCODE = 'HF001';
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER holdfast_holds_not_a_value ON holdfast_holds;
CREATE TRIGGER holdfast_holds_not_a_value BEFORE INSERT ON holdfast_holds FOR EACH ROW
  WHEN (holdfast_hold_needs_look(NEW.key)) EXECUTE FUNCTION holdfast_holds_not_a_value();

-- Of keys ks, those some node has registered waiters for, as committed at the moment of the
-- call (holdfast_key_waited() for many keys at once: a statement that frees keys calls it once,
-- after its row updates; hold_rows.h says why the fresh snapshot matters).
CREATE FUNCTION holdfast_keys_waited(ks text[]) RETURNS text[] LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF cardinality(ks) = 0 THEN RETURN '{}'; END IF;
  RETURN ARRAY(SELECT DISTINCT w.key FROM holdfast_waits w WHERE w.key = ANY (ks COLLATE "C"));
END $$;
)sql";

}  // namespace holdfast::pg
