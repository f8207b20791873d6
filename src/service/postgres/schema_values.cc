// Schema version 9: typed values (counters, sorted sets, hashes, lists) in a table of their own,
// and the rule that a key is a lock or a value, never both (docs/scale-out.md, "Typed values";
// value_rows.h says how the node uses them).
#include "service/postgres/schema.h"

namespace holdfast::pg {

const char kValuesMigrationSql[] = R"sql(
-- One row per key that holds a typed value; `data` is its body as the write-ahead log encodes
-- one (store/wal/value_codec.h). A row whose expires_at has passed by holdfast_now_ms() is no
-- value: every statement judges it so, and the sweep deletes it.
CREATE TABLE holdfast_values (
  key        text COLLATE "C" PRIMARY KEY,
  type       smallint NOT NULL,  -- 1 counter, 2 sorted set, 3 hash, 4 list
  expires_at bigint,             -- NULL: no expiry
  data       bytea    NOT NULL
);
CREATE INDEX holdfast_values_expiry ON holdfast_values (expires_at) WHERE expires_at IS NOT NULL;

-- The key's claim: a transaction-scoped advisory lock (class "Hole", next to the migrations'
-- "Hold"). Whatever makes a lock or a value takes it first and then looks at the other table
-- with a fresh snapshot, so of two nodes making one of each on the same key, the second sees
-- the first. A transaction that reads a value to change it (a script, one typed write) takes it
-- too, so no other node changes the value in between.
CREATE FUNCTION holdfast_claim_key(k text) RETURNS void LANGUAGE plpgsql VOLATILE
  AS $$ BEGIN PERFORM pg_advisory_xact_lock(1215261797, hashtext(k)); END $$;

-- What key k holds at the database's now, after taking its claim when `claim`: the lock row in
-- use (live, or keeping the key closed by a lock-delay), whether it is held, its owner, mode
-- (0 a single hold, else a shared or semaphore group) and lease end; and the live value's row.
-- VOLATILE plpgsql: the query after the claim sees everything committed before the claim.
CREATE FUNCTION holdfast_key_open(k text, claim boolean)
  RETURNS TABLE (db_now bigint, lock_in_use boolean, lock_held boolean, lock_owner text,
                 lock_mode smallint, lock_lease_end bigint, value_type smallint,
                 value_expires_at bigint, value_data bytea)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE now_ms bigint;
BEGIN
  IF claim THEN PERFORM holdfast_claim_key(k); END IF;
  now_ms := holdfast_now_ms();
  RETURN QUERY
    SELECT now_ms, h.key IS NOT NULL,
           h.key IS NOT NULL AND (h.lease_expires_at IS NULL OR h.lease_expires_at > now_ms),
           h.owner, CASE WHEN h.held_by = '' THEN h.mode ELSE 0::smallint END, h.lease_expires_at,
           v.type, v.expires_at, v.data
      FROM (SELECT 1) one
      LEFT JOIN holdfast_holds h
        ON h.key = k AND (h.lease_expires_at IS NULL OR h.lease_expires_at + h.lock_delay_ms > now_ms)
      LEFT JOIN holdfast_values v
        ON v.key = k AND (v.expires_at IS NULL OR v.expires_at > now_ms);
END $$;

-- DEL of key k's value: 1 when it had a live one (an expired row goes too).
CREATE FUNCTION holdfast_value_delete(k text) RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
DECLARE live boolean;
BEGIN
  PERFORM holdfast_claim_key(k);
  DELETE FROM holdfast_values v WHERE v.key = k
    RETURNING v.expires_at IS NULL OR v.expires_at > holdfast_now_ms() INTO live;
  RETURN CASE WHEN live THEN 1 ELSE 0 END;
END $$;

-- A lock row is never made (inserted, or an ended one taken over: INSERT ... ON CONFLICT runs
-- this first too) on a key that holds a live value: SQLSTATE HF001, which the node answers as
-- WRONGTYPE. It takes the key's claim, so a value being made meanwhile is seen.
CREATE FUNCTION holdfast_holds_not_a_value() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM holdfast_claim_key(NEW.key);
  IF EXISTS (SELECT 1 FROM holdfast_values v WHERE v.key = NEW.key
               AND (v.expires_at IS NULL OR v.expires_at > holdfast_now_ms())) THEN
    RAISE EXCEPTION 'WRONGTYPE Operation against a key holding the wrong kind of value'
      USING ERRCODE = 'HF001';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER holdfast_holds_not_a_value BEFORE INSERT ON holdfast_holds
  FOR EACH ROW EXECUTE FUNCTION holdfast_holds_not_a_value();
)sql";

}  // namespace holdfast::pg
