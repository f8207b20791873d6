// Multi-key requests in the lock table (docs/lock-kinds.md, "Several keys at once"), with the
// fake clock: all or nothing, one handle, tokens in key order, FIFO on every key, no deadlock
// between crossing requests, timeouts, release, renewal, lease and session end of the group.
#include <algorithm>

#include <gtest/gtest.h>

#include "core/lock_table.h"
#include "table_fixture.h"

namespace holdfast::testing {
namespace {

class MultiTest : public TableTest {
 protected:
  AcquireAllRequest all(std::vector<KeyRequest> keys, Millis ttl = 1000, Millis timeout = 0,
                        std::string_view held_by = "user:alice", SessionId session = 1) {
    AcquireAllRequest r;
    std::sort(keys.begin(), keys.end(),
              [](const KeyRequest& a, const KeyRequest& b) { return a.key < b.key; });
    r.keys = std::move(keys);
    r.ttl_ms = ttl;
    r.timeout_ms = timeout;
    r.held_by = held_by;
    r.session = session;
    return r;
  }
  static KeyRequest ex(std::string_view key) { return KeyRequest{key, LockMode::kExclusive}; }
  static KeyRequest sh(std::string_view key) { return KeyRequest{key, LockMode::kShared}; }
  static KeyRequest sem(std::string_view key, std::uint32_t take, std::uint32_t permits) {
    return KeyRequest{key, LockMode::kSemaphore, permits, take};
  }

  GroupHold granted(const AcquireAllRequest& r) {
    auto out = table.acquire_all(r, now());
    EXPECT_TRUE(out.ok());
    EXPECT_EQ(out->kind, AcquireOutcome::Kind::kGranted);
    return out->group;
  }
  WaiterId queued(const AcquireAllRequest& r) {
    auto out = table.acquire_all(r, now());
    EXPECT_TRUE(out.ok());
    EXPECT_EQ(out->kind, AcquireOutcome::Kind::kQueued);
    return out->waiter;
  }
  bool held(std::string_view key) { return table.status(key, now())->held; }
  std::size_t waiters(std::string_view key) { return table.status(key, now())->waiters; }
  std::string handle_of(const GroupHold& g) { return g.handle.to_string(); }
};

TEST_F(MultiTest, GrantsEveryKeyWithOneHandleAndTokensInKeyOrder) {
  GroupHold g = granted(all({ex("b"), sh("a"), sem("c", 2, 3)}));
  ASSERT_EQ(g.holds.size(), 3u);
  EXPECT_EQ(g.holds[0].key, "a");
  EXPECT_EQ(g.holds[1].key, "b");
  EXPECT_EQ(g.holds[2].key, "c");
  EXPECT_EQ(g.holds[0].mode, LockMode::kShared);
  EXPECT_EQ(g.holds[1].mode, LockMode::kExclusive);
  EXPECT_EQ(g.holds[2].mode, LockMode::kSemaphore);
  EXPECT_EQ(g.holds[2].take, 2u);
  EXPECT_EQ(g.holds[2].permits, 3u);
  for (const HoldState& h : g.holds) {
    EXPECT_EQ(h.handle, g.handle);
    EXPECT_EQ(h.lease_expires_at, now() + 1000);
  }
  EXPECT_LT(g.holds[0].token, g.holds[1].token);
  EXPECT_LT(g.holds[1].token, g.holds[2].token);
  // One durable change for the whole group.
  ASSERT_EQ(sink.changes.size(), 1u);
  const auto* change = std::get_if<GroupGranted>(&sink.changes[0]);
  ASSERT_NE(change, nullptr);
  EXPECT_EQ(change->holds, g.holds);
  EXPECT_EQ(table.held_count(), 3u);
  // Each key's status shows its own hold.
  EXPECT_EQ(table.status("b", now())->hold.token, g.holds[1].token);
  EXPECT_EQ(table.status("c", now())->free_permits, 1u);
}

TEST_F(MultiTest, NothingIsGrantedWhenOneKeyIsHeld) {
  take("b");
  const std::size_t changes = sink.changes.size();
  auto out = table.acquire_all(all({ex("a"), ex("b")}), now());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->kind, AcquireOutcome::Kind::kContended);
  EXPECT_FALSE(held("a"));
  EXPECT_EQ(sink.changes.size(), changes);
  EXPECT_EQ(table.held_count(), 1u);
}

TEST_F(MultiTest, AKindConflictOnOneKeyChangesNothing) {
  take("s");  // a lock
  auto out = table.acquire_all(all({ex("a"), sem("s", 1, 3)}), now());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(held("a"));
  EXPECT_EQ(table.waiter_count(), 0u);
}

TEST_F(MultiTest, WaitsForAllKeysThenTakesThemTogether) {
  HoldState b = take("b", 1000, "user:carol");
  WaiterId w = queued(all({ex("a"), ex("b")}, 1000, 5000));
  EXPECT_FALSE(held("a"));  // nothing is held while waiting
  EXPECT_EQ(waiters("a"), 1u);
  EXPECT_EQ(waiters("b"), 1u);
  ASSERT_TRUE(table.release("b", b.handle.to_string(), now())->released);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, w);
  EXPECT_TRUE(outs[0].granted);
  EXPECT_TRUE(outs[0].multi);
  ASSERT_EQ(outs[0].group.holds.size(), 2u);
  EXPECT_TRUE(held("a"));
  EXPECT_TRUE(held("b"));
  EXPECT_EQ(table.waiter_count(), 0u);
}

TEST_F(MultiTest, AFreeKeyWithAMultiKeyWaiterDoesNotLetANewcomerBarge) {
  HoldState b = take("b", 1000, "user:carol");
  queued(all({ex("a"), ex("b")}, 1000, 5000));
  // "a" is free, but the multi-key waiter is first in its queue.
  auto single = table.acquire(req("a", 1000, 0, "user:dave"), now());
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->kind, AcquireOutcome::Kind::kContended);
  WaiterId later = wait("a", 5000, 3, "user:dave");
  ASSERT_TRUE(table.release("b", b.handle.to_string(), now())->released);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);  // the multi-key waiter; dave waits behind it
  EXPECT_NE(outs[0].waiter, later);
  EXPECT_EQ(waiters("a"), 1u);
}

TEST_F(MultiTest, CrossingRequestsDoNotDeadlock) {
  HoldState a = take("a", 1000, "user:carol");
  HoldState b = take("b", 1000, "user:carol");
  // {a,b} and then {b,a}: both queue on both keys in the same order.
  WaiterId first = queued(all({ex("a"), ex("b")}, 1000, 10'000, "user:x", 2));
  WaiterId second = queued(all({ex("b"), ex("a")}, 1000, 10'000, "user:y", 3));
  ASSERT_TRUE(table.release("a", a.handle.to_string(), now())->released);
  EXPECT_TRUE(table.take_outcomes().empty());  // b is still held: the first waits, holding none
  EXPECT_FALSE(held("a"));
  ASSERT_TRUE(table.release("b", b.handle.to_string(), now())->released);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, first);
  ASSERT_TRUE(table.release("a", outs[0].group.handle.to_string(), now())->released);
  outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, second);
  EXPECT_TRUE(held("a"));
  EXPECT_TRUE(held("b"));
}

TEST_F(MultiTest, FifoOnEachKeyAcrossSingleAndMultiWaiters) {
  HoldState a = take("a", 1000, "user:carol");
  WaiterId single_a = wait("a", 10'000, 2, "user:s1");
  WaiterId multi = queued(all({ex("a"), ex("b")}, 1000, 10'000, "user:m", 3));
  WaiterId single_b = wait("b", 10'000, 4, "user:s2");  // behind the multi-key waiter on b
  EXPECT_TRUE(table.take_outcomes().empty());
  ASSERT_TRUE(table.release("a", a.handle.to_string(), now())->released);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, single_a);
  ASSERT_TRUE(table.release("a", outs[0].hold.handle.to_string(), now())->released);
  outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, multi);
  ASSERT_TRUE(table.release("b", outs[0].group.handle.to_string(), now())->released);
  outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, single_b);
}

TEST_F(MultiTest, TimeoutLeavesEveryQueueAndUnblocksThoseBehind) {
  HoldState b = take("b", 60'000, "user:carol");
  WaiterId multi = queued(all({ex("a"), ex("b")}, 1000, 500, "user:m", 3));
  WaiterId behind = wait("a", 10'000, 4, "user:s");  // waits behind the multi on free "a"
  tick(499);
  EXPECT_TRUE(table.take_outcomes().empty());
  tick(1);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].waiter, multi);
  EXPECT_FALSE(outs[0].granted);
  EXPECT_EQ(outs[0].key, "a");
  EXPECT_EQ(outs[1].waiter, behind);
  EXPECT_TRUE(outs[1].granted);
  EXPECT_EQ(waiters("b"), 0u);
  EXPECT_EQ(table.status("b", now())->hold.token, b.token);
  EXPECT_EQ(table.waiter_count(), 0u);
}

TEST_F(MultiTest, ReleaseOrRenewByAnyKeyActsOnTheWholeGroup) {
  GroupHold g = granted(all({ex("a"), sh("b")}));
  tick(400);
  auto renewed = table.renew("b", handle_of(g), 2000, now());
  ASSERT_TRUE(renewed->renewed);
  EXPECT_EQ(renewed->lease_expires_at, now() + 2000);
  EXPECT_EQ(table.status("a", now())->hold.lease_expires_at, now() + 2000);
  EXPECT_EQ(table.status("b", now())->hold.lease_expires_at, now() + 2000);
  // A handle of the group does not act on a key outside it.
  EXPECT_FALSE(table.release("c", handle_of(g), now())->released);
  ASSERT_TRUE(table.release("a", handle_of(g), now())->released);
  EXPECT_FALSE(held("a"));
  EXPECT_FALSE(held("b"));
  EXPECT_EQ(table.held_count(), 0u);
  EXPECT_FALSE(table.release("b", handle_of(g), now())->released);
  EXPECT_FALSE(table.renew("a", handle_of(g), 1000, now())->renewed);
}

TEST_F(MultiTest, TheGroupLeaseEndsForAllKeysAndHandsThemOn) {
  GroupHold g = granted(all({ex("a"), sem("s", 2, 2)}, 1000));
  WaiterId on_s = [&] {
    auto r = req("s", 1000, 5000, "user:bob");
    r.mode = LockMode::kSemaphore;
    r.take = 1;
    r.permits = 2;
    r.session = 2;
    return table.acquire(r, now())->waiter;
  }();
  tick(999);
  EXPECT_TRUE(held("a"));
  tick(1);
  EXPECT_FALSE(held("a"));
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, on_s);
  EXPECT_TRUE(outs[0].granted);
  EXPECT_FALSE(table.renew("s", handle_of(g), 1000, now())->renewed);
  EXPECT_EQ(table.counters().expiries, 2u);
}

TEST_F(MultiTest, LazyExpiryOfOneKeyEndsTheWholeGroup) {
  GroupHold g = granted(all({ex("a"), ex("b")}, 1000));
  clock.advance(1000);  // no advance(): status expires lazily
  EXPECT_FALSE(held("b"));
  EXPECT_FALSE(table.status("a", now())->held);
  EXPECT_EQ(table.held_count(), 0u);
  (void)g;
}

TEST_F(MultiTest, SessionEndReleasesASessionScopedGroupAndDropsItsWaiters) {
  auto r = all({ex("a"), ex("b")}, 1000, 0, "user:alice", 7);
  r.session_scoped = true;
  GroupHold g = granted(r);
  EXPECT_EQ(g.holds[0].scope, Scope::kSession);
  WaiterId behind = wait("b", 5000, 8, "user:bob");
  auto w2 = all({ex("c"), ex("b")}, 1000, 5000, "user:alice", 7);
  queued(w2);  // session 7 also waits for {b, c}
  table.end_session(7, now());
  EXPECT_FALSE(held("a"));
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, behind);
  EXPECT_EQ(waiters("c"), 0u);
  EXPECT_FALSE(held("c"));
  EXPECT_EQ(table.waiter_count(), 0u);
}

TEST_F(MultiTest, SharedKeysOfAGroupAdmitOtherReadersButNotWriters) {
  GroupHold g = granted(all({sh("a"), ex("b")}));
  auto reader = req("a", 1000, 0, "user:bob");
  reader.mode = LockMode::kShared;
  EXPECT_EQ(table.acquire(reader, now())->kind, AcquireOutcome::Kind::kGranted);
  EXPECT_EQ(table.acquire(req("a", 1000, 0, "user:bob"), now())->kind,
            AcquireOutcome::Kind::kContended);
  EXPECT_EQ(table.status("a", now())->holders.size(), 2u);
  (void)g;
}

TEST_F(MultiTest, SemaphoreKeysWaitForPermitsInOrder) {
  auto small = all({sem("s", 1, 3), ex("x")}, 1000, 5000, "user:m", 3);
  GroupHold big = granted(all({sem("s", 3, 3)}, 1000, 0, "user:carol"));
  WaiterId w = queued(small);
  ASSERT_TRUE(table.release("s", handle_of(big), now())->released);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, w);
  EXPECT_EQ(table.status("s", now())->free_permits, 2u);
}

TEST_F(MultiTest, ReTakeNeedsTheSameOwnerKeysAndModes) {
  auto r = all({ex("a"), sh("b")});
  r.owner = "job-1";
  GroupHold first = granted(r);
  WaiterId behind = wait("a", 5000, 2, "user:bob");
  GroupHold again = granted(r);  // re-taken ahead of the waiter: it adds no holder
  EXPECT_NE(again.handle, first.handle);
  EXPECT_GT(again.holds[0].token, first.holds[1].token);
  EXPECT_FALSE(table.renew("a", handle_of(first), 1000, now())->renewed);  // fenced
  EXPECT_TRUE(table.take_outcomes().empty());
  // Another mode on one key is a new request: it queues (behind bob on "a").
  auto other = all({ex("a"), ex("b")}, 1000, 0);
  other.owner = "job-1";
  EXPECT_EQ(table.acquire_all(other, now())->kind, AcquireOutcome::Kind::kContended);
  // A single-key request never re-takes one key of a group.
  auto single = req("a");
  single.owner = "job-1";
  EXPECT_EQ(table.acquire(single, now())->kind, AcquireOutcome::Kind::kContended);
  (void)behind;
}

TEST_F(MultiTest, DelFreesTheWholeGroupAndPexpireMovesItsLease) {
  GroupHold g = granted(all({ex("a"), ex("b")}));
  EXPECT_TRUE(table.extend("b", now() + 5000, now()).renewed);
  EXPECT_EQ(table.status("a", now())->hold.lease_expires_at, now() + 5000);
  EXPECT_TRUE(table.force_release("a", now()).released);
  EXPECT_FALSE(held("b"));
  (void)g;
}

TEST_F(MultiTest, CancelledWaiterLeavesEveryQueue) {
  take("b", 1000, "user:carol");
  WaiterId w = queued(all({ex("a"), ex("b")}, 1000, 5000));
  WaiterId behind = wait("a", 5000, 3, "user:dave");
  table.cancel_waiter(w, now());
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, behind);
  EXPECT_EQ(waiters("b"), 0u);
}

TEST_F(MultiTest, UnsortedOrDuplicateKeysAreRefused) {
  AcquireAllRequest r;
  r.keys = {ex("b"), ex("a")};
  r.ttl_ms = 1000;
  r.held_by = "user:alice";
  EXPECT_EQ(table.acquire_all(r, now()).error().code, ErrorCode::kInvalidArgument);
  r.keys = {ex("a"), ex("a")};
  EXPECT_EQ(table.acquire_all(r, now()).error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(held("a"));
}

TEST_F(MultiTest, RestoreRebuildsTheGroupFromItsSharedHandle) {
  GroupHold g = granted(all({ex("a"), sh("b")}));
  DurableState state = table.snapshot(now());
  LockTable restored;
  restored.restore(state, now());
  EXPECT_TRUE(restored.status("a", now())->held);
  ASSERT_TRUE(restored.release("b", handle_of(g), now())->released);
  EXPECT_FALSE(restored.status("a", now())->held);
}

// A key that another hold's lock-delay keeps closed (docs/lock-kinds.md) is granted to no
// group, at once or waiting, until the delay ends; the group then takes all its keys at once.
TEST_F(MultiTest, AKeyClosedByALockDelayHoldsTheWholeGroupBackUntilItOpens) {
  AcquireRequest r = req("b", 1000, 0, "user:bob");
  r.lock_delay_ms = 500;
  auto h = table.acquire(r, now());
  ASSERT_EQ(h->kind, AcquireOutcome::Kind::kGranted);
  tick(1000);  // the hold on b expires: b is closed for 500 ms
  ASSERT_FALSE(held("b"));
  EXPECT_EQ(table.acquire_all(all({ex("a"), ex("b")}), now())->kind,
            AcquireOutcome::Kind::kContended);
  EXPECT_FALSE(held("a")) << "all or nothing";
  const WaiterId w = queued(all({ex("a"), ex("b")}, 1000, 10'000));
  tick(499);
  EXPECT_TRUE(table.take_outcomes().empty());
  EXPECT_FALSE(held("a"));
  tick(1);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, w);
  EXPECT_TRUE(outs[0].granted);
  ASSERT_EQ(outs[0].group.holds.size(), 2u);
  EXPECT_EQ(outs[0].group.holds[1].acquired_at, h->hold.lease_expires_at + 500);
  EXPECT_TRUE(held("a"));
  EXPECT_TRUE(held("b"));
}

}  // namespace
}  // namespace holdfast::testing
