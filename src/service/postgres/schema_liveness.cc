// Schema version 8: when a node's session holds may be freed by another node. The rule is the
// one function holdfast_session_lapsed() below; every statement that frees session holds or
// forgets a node (hold_rows.cc, cluster_rows.cc, holdfast_free_lapsed_session_members) asks
// it, and nothing else decides.
//
// THE RULE. A live node J (the judge) frees a session hold of node N, granted at A (database
// clock), at the database instant T only if
//
//     J has been in unbroken contact with the database since S (contact_since: the first of
//     its own heartbeats with no gap over `gap` to the next, up to one within `gap` of T), and
//     max(N's last heartbeat H, A, S) <= T - grace.
//
// Why no live session hold is freed. Call a session hold live when its node N runs, its
// client's connection to N is open, and N can reach the database whenever the database
// answers anyone (N is not cut off on its own). Every quantity above is read in ONE
// statement at one instant T, by the database's clock; nothing compares a node's clock.
//  1. S <= T - grace means the database answered J's heartbeats at least every `gap` through
//     the whole window [T - grace, T]: it was up, and not frozen, for every part of that
//     window longer than `gap`.
//  2. N heartbeats every `every` (at most grace/5) on a connection of its own. While the
//     database answers, N's last heartbeat is never older than `every` plus one round trip;
//     a stall of the database delays it by the stall, which by 1 is at most `gap` (grace/2),
//     plus one more `every` if N's attempt ran into its deadline meanwhile. So a live N has
//     heartbeated within about 0.7 x grace of any instant of the window: H > T - grace.
//  3. A is in the max: a hold granted at A is never freed before A + grace, whatever N's
//     heartbeat said before A. This covers the hold granted just after an outage, before N's
//     first heartbeat (or, if N had been presumed dead, before N wrote its row again: a
//     missing row counts as no heartbeat, never as a verdict).
//  4. After an outage that no node could help (the database down, frozen, or failing over),
//     every judge's contact begins again when it reaches the database: S >= the end of the
//     outage. So no session hold is freed until grace after the outage ends, and every node,
//     which heartbeats within `every` of the database answering, is back by then. The outage
//     never counts against anyone.
//  5. A jump of the database's clock: forward, it opens a gap in J's own heartbeats, so J's
//     contact begins again (and a jump between J's last heartbeat and the statement leaves J
//     with no heartbeat within `gap` of T: no verdict); backward, it only makes heartbeats
//     look younger. Neither frees a hold early.
// What is still freed: the session holds of a node that stopped (crashed, killed, frozen), or
// that was cut off from the database while other nodes were not, for longer than the grace;
// its heartbeat, not its clients, is what the cluster can see.
//
// What the promises of comparable systems are, and where this sits (docs/scale-out.md, "Session
// holds", has the table): ZooKeeper keeps a session's timeout running only while a quorum
// leader can count it (a new leader restarts every session's timer); Consul's session TTL is
// likewise reset on a leader election, and its lock-delay keeps a freed lock from being taken
// at once; an etcd lease is revoked when its TTL passes without keep-alives, and a new leader
// extends every lease by its TTL on election. Counting the outage as nobody's time and the
// grace from the end of it is the same promise.
#include "service/postgres/schema.h"

namespace holdfast::pg {

const char kLivenessMigrationSql[] = R"sql(
-- Since when each node has heartbeated without a gap longer than half the session grace.
ALTER TABLE holdfast_nodes ADD COLUMN contact_since bigint;
UPDATE holdfast_nodes SET contact_since = heartbeat_at;

-- The session-liveness rule (schema_liveness.cc gives the argument): may a judge whose
-- unbroken contact began at judge_since (NULL: no current contact) free, at now_ms, a session
-- hold of node nd granted at acquired?
CREATE FUNCTION holdfast_session_lapsed(nd bigint, acquired bigint, judge_since bigint,
                                        now_ms bigint, grace bigint)
  RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT judge_since IS NOT NULL
     AND greatest((SELECT n.heartbeat_at FROM holdfast_nodes n WHERE n.id = nd), acquired,
                  judge_since) <= now_ms - grace
$$;

-- The judge's unbroken contact: its contact_since, if its last heartbeat is within gap of now.
CREATE FUNCTION holdfast_judge_since(judge bigint, now_ms bigint, gap bigint)
  RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT n.contact_since FROM holdfast_nodes n
   WHERE n.id = judge AND n.heartbeat_at >= now_ms - gap
$$;

-- The shared and semaphore session holds the rule frees, as holdfast_free_session_members
-- does for a given node (a member with a lock-delay stays, ended, until its delay is over).
CREATE FUNCTION holdfast_free_lapsed_session_members(judge bigint, grace bigint, gap bigint)
  RETURNS SETOF text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint := holdfast_now_ms();
  since bigint := holdfast_judge_since(judge, now_ms, gap);
  k text;
  ended boolean;
BEGIN
  IF since IS NULL THEN
    RETURN;
  END IF;
  -- Each key's row is locked before its members go, as everywhere (no lock-order deadlock).
  FOR k IN SELECT DISTINCT m.key FROM holdfast_members m
            WHERE m.scope = 1
              AND holdfast_session_lapsed(m.node_id, m.acquired_at, since, now_ms, grace)
            ORDER BY 1
  LOOP
    PERFORM 1 FROM holdfast_holds h WHERE h.key = k FOR UPDATE;
    UPDATE holdfast_members m
       SET lease_expires_at = LEAST(m.lease_expires_at, now_ms), scope = 0, node_id = NULL,
           session_id = NULL
     WHERE m.key = k AND m.scope = 1 AND m.lock_delay_ms > 0
       AND holdfast_session_lapsed(m.node_id, m.acquired_at, since, now_ms, grace);
    ended := FOUND;
    DELETE FROM holdfast_members m
     WHERE m.key = k AND m.scope = 1
       AND holdfast_session_lapsed(m.node_id, m.acquired_at, since, now_ms, grace);
    IF ended OR FOUND THEN
      PERFORM holdfast_group_left(k);
      RETURN NEXT k;
    END IF;
  END LOOP;
END $$;
)sql";

}  // namespace holdfast::pg
