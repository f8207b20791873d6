// Behaviour of handle holds: docs/reference.md section 2, driven with a fake clock.
#include <gtest/gtest.h>

#include "core/list_cursor.h"
#include "table_fixture.h"

namespace holdfast::testing {
namespace {

TEST_F(TableTest, FreeKeyIsGrantedWithHandleTokenAndLease) {
  HoldState h = take("jobs:1", 5000);
  EXPECT_EQ(h.key, "jobs:1");
  EXPECT_FALSE(h.handle.is_null());
  EXPECT_EQ(h.token, 1u);
  EXPECT_EQ(h.held_by, "user:alice");
  EXPECT_EQ(h.acquired_at, now());
  EXPECT_EQ(h.lease_expires_at, now() + 5000);
  EXPECT_EQ(h.scope, Scope::kLease);
  EXPECT_EQ(h.kind, HoldKind::kHandle);
  EXPECT_EQ(table.held_count(), 1u);
}

TEST_F(TableTest, TryOnHeldKeyIsContendedAndChangesNothing) {
  HoldState h = take("jobs:1");
  auto out = table.acquire(req("jobs:1", 1000, 0, "user:bob"), now());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->kind, AcquireOutcome::Kind::kContended);
  auto s = table.status("jobs:1", now());
  EXPECT_EQ(s->hold.token, h.token);
  EXPECT_EQ(s->waiters, 0u);
  EXPECT_EQ(sink.changes.size(), 1u);
}

TEST_F(TableTest, TokensStrictlyIncreaseAcrossKeysAndRegrants) {
  std::uint64_t last = 0;
  for (int i = 0; i < 50; ++i) {
    HoldState h = take("k" + std::to_string(i % 7));
    EXPECT_GT(h.token, last);
    last = h.token;
    ASSERT_TRUE(table.release(h.key, h.handle.to_string(), now())->released);
  }
}

TEST_F(TableTest, ReleaseWithCurrentHandleFreesTheKey) {
  HoldState h = take("k");
  auto r = table.release("k", h.handle.to_string(), now());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->released);
  EXPECT_FALSE(table.status("k", now())->held);
  ASSERT_EQ(sink.changes.size(), 2u);
  EXPECT_EQ(std::get<Released>(sink.changes[1]).token, h.token);
}

TEST_F(TableTest, ReleaseWithAnotherHandleAnswersNotHolder) {
  HoldState h = take("k");
  HandleSource other;
  EXPECT_FALSE(table.release("k", other.next().to_string(), now())->released);
  EXPECT_FALSE(table.release("k", "not-a-handle", now())->released);
  EXPECT_FALSE(table.release("other", h.handle.to_string(), now())->released);
  EXPECT_TRUE(table.status("k", now())->held);
}

TEST_F(TableTest, RenewExtendsTheLeaseFromNow) {
  HoldState h = take("k", 1000);
  clock.advance(600);
  auto r = table.renew("k", h.handle.to_string(), 2000, now());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->renewed);
  EXPECT_EQ(r->lease_expires_at, now() + 2000);
  tick(1500);
  EXPECT_TRUE(table.status("k", now())->held);
  tick(500);
  EXPECT_FALSE(table.status("k", now())->held);
}

TEST_F(TableTest, RenewAfterTheLeaseEndedAnswersLeaseLost) {
  HoldState h = take("k", 1000);
  clock.advance(1000);
  auto r = table.renew("k", h.handle.to_string(), 1000, now());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->renewed);
}

TEST_F(TableTest, StatusIsFreeFromTheExactMillisecondTheLeaseEndsWithoutATimer) {
  take("k", 1000);
  clock.advance(999);
  EXPECT_TRUE(table.status("k", now())->held);
  clock.advance(1);  // no advance(): the lease still ends exactly now
  EXPECT_FALSE(table.status("k", now())->held);
  EXPECT_EQ(table.counters().expiries, 1u);
}

TEST_F(TableTest, StatusShowsTheHoldButNeverItsHandle) {
  auto r = req("k");
  r.owner = "run-7";
  HoldState h = table.acquire(r, now())->hold;
  wait("k", 5000);
  auto s = table.status("k", now());
  EXPECT_TRUE(s->held);
  EXPECT_TRUE(s->hold.handle.is_null());
  EXPECT_EQ(s->hold.owner, "run-7");
  EXPECT_EQ(s->hold.token, h.token);
  EXPECT_EQ(s->waiters, 1u);
}

TEST_F(TableTest, ThreeWaitersAreGrantedInFifoOrder) {
  HoldState first = take("k");
  WaiterId a = wait("k", 10000, 2);
  WaiterId b = wait("k", 10000, 3);
  WaiterId c = wait("k", 10000, 4);
  std::vector<WaiterId> order;
  HoldState current = first;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(table.release("k", current.handle.to_string(), now())->released);
    auto outs = table.take_outcomes();
    ASSERT_EQ(outs.size(), 1u);
    EXPECT_TRUE(outs[0].granted);
    order.push_back(outs[0].waiter);
    current = outs[0].hold;
    EXPECT_EQ(current.held_by, "user:bob");
  }
  EXPECT_EQ(order, (std::vector<WaiterId>{a, b, c}));
}

TEST_F(TableTest, ExpiryHandsTheKeyToTheOldestWaiterAtOnce) {
  take("k", 1000);
  WaiterId w = wait("k", 5000);
  tick(1000);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, w);
  EXPECT_TRUE(outs[0].granted);
  EXPECT_EQ(outs[0].hold.acquired_at, now());
  EXPECT_EQ(table.status("k", now())->hold.held_by, "user:bob");
}

// The lease ended but advance() has not run yet (the loop is busy): an acquire must not see the
// old hold, and must not jump the queue either.
TEST_F(TableTest, AnAcquireAsTheLeaseEndsBeforeTheTimerRanFindsTheKeyFree) {
  HoldState old = take("k", 1000);
  clock.advance(1000);
  HoldState fresh = take("k", 1000, "user:carol");
  EXPECT_GT(fresh.token, old.token);
  EXPECT_EQ(table.counters().expiries, 1u);
  EXPECT_FALSE(table.release("k", old.handle.to_string(), now())->released);
  EXPECT_EQ(table.status("k", now())->hold.held_by, "user:carol");
}

TEST_F(TableTest, ANewcomerAsTheLeaseEndsBeforeTheTimerRanQueuesBehindTheWaiter) {
  take("k", 1000);
  WaiterId w = wait("k", 5000);
  clock.advance(1000);
  auto newcomer = table.acquire(req("k", 1000, 0, "user:carol"), now());
  ASSERT_TRUE(newcomer.ok());
  EXPECT_EQ(newcomer->kind, AcquireOutcome::Kind::kContended);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, w);
  EXPECT_TRUE(outs[0].granted);
  EXPECT_EQ(table.status("k", now())->hold.held_by, "user:bob");
}

TEST_F(TableTest, WaiterTimesOutAtItsDeadlineAndLeavesTheQueue) {
  take("k", 60000);
  WaiterId w = wait("k", 300);
  tick(299);
  EXPECT_TRUE(table.take_outcomes().empty());
  tick(1);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, w);
  EXPECT_FALSE(outs[0].granted);
  EXPECT_EQ(outs[0].key, "k");
  EXPECT_EQ(outs[0].timeout_ms, 300);
  EXPECT_EQ(table.status("k", now())->waiters, 0u);
  EXPECT_EQ(table.waiter_count(), 0u);
}

TEST_F(TableTest, ReleaseSkipsWaitersWhoseDeadlineHasComeWithoutATimer) {
  HoldState h = take("k", 60000);
  WaiterId early = wait("k", 100, 2);
  WaiterId late = wait("k", 5000, 3);
  clock.advance(100);  // early's deadline has come but advance() was not called
  ASSERT_TRUE(table.release("k", h.handle.to_string(), now())->released);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].waiter, early);
  EXPECT_FALSE(outs[0].granted);
  EXPECT_EQ(outs[1].waiter, late);
  EXPECT_TRUE(outs[1].granted);
}

TEST_F(TableTest, RetakeBySameOwnerFencesTheOldHandle) {
  auto r = req("k", 1000);
  r.owner = "run-1";
  HoldState old = table.acquire(r, now())->hold;
  auto again = table.acquire(r, now());
  ASSERT_EQ(again->kind, AcquireOutcome::Kind::kGranted);
  HoldState fresh = again->hold;
  EXPECT_GT(fresh.token, old.token);
  EXPECT_NE(fresh.handle, old.handle);
  EXPECT_FALSE(table.release("k", old.handle.to_string(), now())->released);
  EXPECT_FALSE(table.renew("k", old.handle.to_string(), 1000, now())->renewed);
  EXPECT_TRUE(table.renew("k", fresh.handle.to_string(), 1000, now())->renewed);
  EXPECT_EQ(table.held_count(), 1u);
}

TEST_F(TableTest, RetakeNeedsTheSamePrincipalTheSameKindAndTheSameOwner) {
  auto r = req("k", 1000, 0, "user:alice");
  r.owner = "run-1";
  ASSERT_EQ(table.acquire(r, now())->kind, AcquireOutcome::Kind::kGranted);
  auto other_user = r;
  other_user.held_by = "user:bob";
  EXPECT_EQ(table.acquire(other_user, now())->kind, AcquireOutcome::Kind::kContended);
  auto function_same_name = r;
  function_same_name.held_by = "function:alice";
  EXPECT_EQ(table.acquire(function_same_name, now())->kind, AcquireOutcome::Kind::kContended);
  auto other_owner = r;
  other_owner.owner = "run-2";
  EXPECT_EQ(table.acquire(other_owner, now())->kind, AcquireOutcome::Kind::kContended);
  auto no_owner = r;
  no_owner.owner.reset();
  EXPECT_EQ(table.acquire(no_owner, now())->kind, AcquireOutcome::Kind::kContended);
}

TEST_F(TableTest, HoldWithoutOwnerIsNeverReentered) {
  take("k");
  auto r = req("k");
  EXPECT_EQ(table.acquire(r, now())->kind, AcquireOutcome::Kind::kContended);
}

TEST_F(TableTest, RetakeDoesNotWaitBehindQueuedWaiters) {
  auto r = req("k", 1000);
  r.owner = "run-1";
  ASSERT_TRUE(table.acquire(r, now()).ok());
  wait("k", 5000);
  auto again = table.acquire(r, now());
  EXPECT_EQ(again->kind, AcquireOutcome::Kind::kGranted);
  EXPECT_EQ(table.status("k", now())->waiters, 1u);
}

TEST_F(TableTest, SessionHoldIsReleasedWhenItsSessionEndsAndHandedToTheNextWaiter) {
  auto r = req("k", 60000);
  r.session_scoped = true;
  r.session = 7;
  HoldState h = table.acquire(r, now())->hold;
  EXPECT_EQ(h.scope, Scope::kSession);
  WaiterId w = wait("k", 5000, 8);
  table.end_session(7, now());
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, w);
  EXPECT_TRUE(outs[0].granted);
  ASSERT_GE(sink.changes.size(), 3u);
  EXPECT_EQ(std::get<Released>(sink.changes[1]).token, h.token);
}

TEST_F(TableTest, LeaseHoldSurvivesTheEndOfItsSession) {
  take("k", 60000);  // session 1, lease scope
  table.end_session(1, now());
  EXPECT_TRUE(table.status("k", now())->held);
}

TEST_F(TableTest, WaiterWhoseSessionEndsLeavesTheQueueAtOnce) {
  HoldState h = take("k");
  wait("k", 5000, 8);
  WaiterId second = wait("k", 5000, 9);
  table.end_session(8, now());
  EXPECT_EQ(table.status("k", now())->waiters, 1u);
  ASSERT_TRUE(table.release("k", h.handle.to_string(), now()).ok());
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].waiter, second);
}

TEST_F(TableTest, EndingASessionThatHoldsAndWaitsDoesNotHandItsOwnKeyToItself) {
  auto r = req("a", 60000);
  r.session_scoped = true;
  r.session = 5;
  ASSERT_TRUE(table.acquire(r, now()).ok());
  take("b", 60000, "user:carol");
  wait("b", 5000, 5);
  wait("a", 5000, 5);  // the same session waits on its own key (pipelined, say)
  table.end_session(5, now());
  EXPECT_TRUE(table.take_outcomes().empty());
  EXPECT_FALSE(table.status("a", now())->held);
  EXPECT_EQ(table.status("b", now())->waiters, 0u);
  EXPECT_EQ(table.waiter_count(), 0u);
}

TEST_F(TableTest, CancelledWaiterLeavesWithoutAnOutcome) {
  HoldState h = take("k");
  WaiterId w = wait("k", 5000);
  table.cancel_waiter(w, now());
  ASSERT_TRUE(table.release("k", h.handle.to_string(), now()).ok());
  EXPECT_TRUE(table.take_outcomes().empty());
  EXPECT_FALSE(table.status("k", now())->held);
}

TEST_F(TableTest, NextDeadlineIsTheEarliestLeaseOrWait) {
  EXPECT_FALSE(table.next_deadline().has_value());
  take("k", 5000);
  EXPECT_EQ(table.next_deadline(), now() + 5000);
  wait("k", 300);
  EXPECT_EQ(table.next_deadline(), now() + 300);
}

TEST_F(TableTest, ListPagesThroughMatchingHoldsInKeyOrder) {
  for (const char* k : {"user:b", "user:a", "jobs:x", "user:c", "user:d"}) take(k);
  std::vector<std::string> seen;
  std::string cursor = "0";
  int pages = 0;
  do {
    auto after = decode_list_cursor(cursor);
    ASSERT_TRUE(after.has_value()) << cursor;
    auto page = table.list("user:*", *after, 2, now());
    EXPECT_LE(page.holds.size(), 2u);
    for (const auto& h : page.holds) {
      EXPECT_TRUE(h.handle.is_null());
      seen.push_back(h.key);
    }
    cursor = page.next_cursor;
    ++pages;
  } while (cursor != "0" && pages < 10);
  EXPECT_EQ(seen, (std::vector<std::string>{"user:a", "user:b", "user:c", "user:d"}));
}

TEST_F(TableTest, ListLeavesOutEndedLeases) {
  take("a", 100);
  take("b", 1000);
  clock.advance(100);
  auto page = table.list("", "", 10, now());
  ASSERT_EQ(page.holds.size(), 1u);
  EXPECT_EQ(page.holds[0].key, "b");
}

TEST_F(TableTest, ChangesReachTheSinkInOrder) {
  HoldState h = take("k", 1000);
  ASSERT_TRUE(table.renew("k", h.handle.to_string(), 2000, now()).ok());
  ASSERT_TRUE(table.release("k", h.handle.to_string(), now()).ok());
  ASSERT_EQ(sink.changes.size(), 3u);
  EXPECT_EQ(std::get<Granted>(sink.changes[0]).hold, h);
  EXPECT_EQ(std::get<Renewed>(sink.changes[1]).lease_expires_at, now() + 2000);
  EXPECT_EQ(std::get<Released>(sink.changes[2]).key, "k");
}

TEST_F(TableTest, RestoreKeepsLiveLeaseHoldsAndContinuesTokens) {
  HoldState live = take("live", 10000);
  HoldState ending = take("ending", 500);
  auto r = req("session", 10000);
  r.session_scoped = true;
  ASSERT_TRUE(table.acquire(r, now()).ok());
  DurableState state = table.snapshot(now());
  EXPECT_EQ(state.holds.size(), 2u);  // the session hold never survives
  state.last_token = 3;
  HoldState session2;
  session2.key = "session2";
  session2.token = 2;
  session2.held_by = "user:x";
  session2.lease_expires_at = now() + 10000;
  session2.scope = Scope::kSession;
  state.holds.push_back(session2);

  LockTable restored;
  restored.restore(state, now() + 500);
  EXPECT_EQ(restored.held_count(), 1u);
  EXPECT_TRUE(restored.renew("live", live.handle.to_string(), 1000, now() + 500)->renewed);
  EXPECT_FALSE(restored.status("ending", now() + 500)->held);
  AcquireRequest next = req("new");
  EXPECT_EQ(restored.acquire(next, now() + 500)->hold.token, 4u);
  (void)ending;
}

}  // namespace
}  // namespace holdfast::testing
