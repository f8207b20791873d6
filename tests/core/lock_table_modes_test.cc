// Shared/exclusive locks and counting semaphores in the lock table (docs/lock-kinds.md), driven
// with the fake clock: every interleaving of modes the docs promise.
#include <gtest/gtest.h>

#include "core/lock_table.h"
#include "table_fixture.h"

namespace holdfast::testing {
namespace {

class ModesTest : public TableTest {
 protected:
  AcquireRequest shared(std::string_view key, Millis timeout = 0,
                        std::string_view held_by = "user:alice", SessionId session = 1) {
    AcquireRequest r = req(key, 1000, timeout, held_by);
    r.mode = LockMode::kShared;
    r.session = session;
    return r;
  }
  AcquireRequest exclusive(std::string_view key, Millis timeout = 0,
                           std::string_view held_by = "user:bob", SessionId session = 2) {
    AcquireRequest r = req(key, 1000, timeout, held_by);
    r.session = session;
    return r;
  }
  AcquireRequest sem(std::string_view key, std::uint32_t permits, std::uint32_t take,
                     Millis timeout = 0, std::string_view held_by = "user:alice",
                     SessionId session = 1) {
    AcquireRequest r = req(key, 1000, timeout, held_by);
    r.mode = LockMode::kSemaphore;
    r.permits = permits;
    r.take = take;
    r.session = session;
    return r;
  }
  AcquireOutcome run(const AcquireRequest& r) {
    auto out = table.acquire(r, now());
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
    return out.ok() ? *out : AcquireOutcome{};
  }
  HoldState granted(const AcquireRequest& r) {
    AcquireOutcome out = run(r);
    EXPECT_EQ(out.kind, AcquireOutcome::Kind::kGranted);
    return out.hold;
  }
  WaiterId queued(const AcquireRequest& r) {
    AcquireOutcome out = run(r);
    EXPECT_EQ(out.kind, AcquireOutcome::Kind::kQueued);
    return out.waiter;
  }
  void release(const HoldState& h) {
    auto out = table.release(h.key, h.handle.to_string(), now());
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(out->released);
  }
  // The waiters granted since the last call, in order.
  std::vector<WaiterId> grants() {
    std::vector<WaiterId> ids;
    for (const WaiterOutcome& o : table.take_outcomes())
      if (o.granted) ids.push_back(o.waiter);
    return ids;
  }
};

TEST_F(ModesTest, ManySharedHoldersEachWithOwnHandleAndToken) {
  HoldState a = granted(shared("k", 0, "user:alice"));
  HoldState b = granted(shared("k", 0, "user:bob"));
  HoldState c = granted(shared("k", 0, "user:carol"));
  EXPECT_EQ(a.mode, LockMode::kShared);
  EXPECT_NE(a.handle, b.handle);
  EXPECT_LT(a.token, b.token);
  EXPECT_LT(b.token, c.token);
  auto st = table.status("k", now());
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->held);
  EXPECT_EQ(st->mode, LockMode::kShared);
  ASSERT_EQ(st->holders.size(), 3u);
  EXPECT_EQ(st->holders[0].token, a.token);
  EXPECT_EQ(st->holders[2].held_by, "user:carol");
  EXPECT_EQ(table.held_count(), 3u);
}

TEST_F(ModesTest, ExclusiveTryOnSharedKeyIsContended) {
  granted(shared("k"));
  EXPECT_EQ(run(exclusive("k")).kind, AcquireOutcome::Kind::kContended);
}

TEST_F(ModesTest, SharedTryOnExclusiveKeyIsContended) {
  granted(exclusive("k"));
  EXPECT_EQ(run(shared("k")).kind, AcquireOutcome::Kind::kContended);
}

TEST_F(ModesTest, WaitingWriterIsNotOvertakenByLaterReaders) {
  HoldState r1 = granted(shared("k", 0, "user:r1"));
  WaiterId writer = queued(exclusive("k", 5000));
  // A reader arriving after the writer waits, though the key is held shared.
  WaiterId r2 = queued(shared("k", 5000, "user:r2", 3));
  EXPECT_EQ(run(shared("k", 0, "user:r3", 4)).kind, AcquireOutcome::Kind::kContended);
  release(r1);
  EXPECT_EQ(grants(), std::vector<WaiterId>{writer});
  auto st = table.status("k", now());
  EXPECT_EQ(st->mode, LockMode::kExclusive);
  EXPECT_EQ(st->hold.held_by, "user:bob");
  EXPECT_EQ(st->waiters, 1u);
  EXPECT_TRUE(table.force_release("k", now()).released);
  EXPECT_EQ(grants(), std::vector<WaiterId>{r2});
}

TEST_F(ModesTest, ConsecutiveSharedWaitersAtTheHeadAreGrantedTogether) {
  HoldState w = granted(exclusive("k"));
  WaiterId s1 = queued(shared("k", 5000, "user:s1", 3));
  WaiterId s2 = queued(shared("k", 5000, "user:s2", 4));
  WaiterId x = queued(exclusive("k", 5000, "user:x", 5));
  WaiterId s3 = queued(shared("k", 5000, "user:s3", 6));
  release(w);
  EXPECT_EQ(grants(), (std::vector<WaiterId>{s1, s2}));
  auto st = table.status("k", now());
  EXPECT_EQ(st->holders.size(), 2u);
  EXPECT_EQ(st->waiters, 2u);
  // The exclusive waiter gets the key only when both readers are gone; s3 stays behind it.
  table.force_release("k", now());
  EXPECT_EQ(grants(), std::vector<WaiterId>{x});
  table.force_release("k", now());
  EXPECT_EQ(grants(), std::vector<WaiterId>{s3});
}

TEST_F(ModesTest, LastSharedHolderLeavingHandsToWriter) {
  HoldState a = granted(shared("k", 0, "user:a"));
  HoldState b = granted(shared("k", 0, "user:b"));
  WaiterId writer = queued(exclusive("k", 5000));
  release(a);
  EXPECT_TRUE(grants().empty());
  release(b);
  EXPECT_EQ(grants(), std::vector<WaiterId>{writer});
}

TEST_F(ModesTest, SharedLeaseExpiresOnItsOwnAndHandsOn) {
  HoldState a = granted(shared("k", 0, "user:a"));
  clock.advance(500);
  HoldState b = granted(shared("k", 0, "user:b"));
  WaiterId writer = queued(exclusive("k", 5000));
  tick(500);  // a's lease ends
  EXPECT_TRUE(grants().empty());
  EXPECT_EQ(table.status("k", now())->holders.size(), 1u);
  tick(500);  // b's lease ends
  EXPECT_EQ(grants(), std::vector<WaiterId>{writer});
  EXPECT_EQ(table.counters().expiries, 2u);
  EXPECT_GT(table.status("k", now())->hold.token, b.token);
}

TEST_F(ModesTest, StatusSaysFreeTheMillisecondTheLastSharedLeaseEnds) {
  granted(shared("k"));
  clock.advance(1000);  // no advance(): the lazy expiry alone
  auto st = table.status("k", now());
  EXPECT_FALSE(st->held);
  EXPECT_EQ(table.held_count(), 0u);
}

TEST_F(ModesTest, RenewAndReleaseFindTheirOwnSharedHold) {
  HoldState a = granted(shared("k", 0, "user:a"));
  HoldState b = granted(shared("k", 0, "user:b"));
  clock.advance(600);
  auto renewed = table.renew("k", a.handle.to_string(), 1000, now());
  ASSERT_TRUE(renewed.ok());
  EXPECT_TRUE(renewed->renewed);
  tick(400);  // b ends, a was renewed
  auto st = table.status("k", now());
  ASSERT_EQ(st->holders.size(), 1u);
  EXPECT_EQ(st->holders[0].token, a.token);
  EXPECT_FALSE(table.release("k", b.handle.to_string(), now())->released);
  EXPECT_FALSE(table.renew("k", b.handle.to_string(), 1000, now())->renewed);
}

TEST_F(ModesTest, RetakeByOwnerIsPerMode) {
  AcquireRequest r = shared("k");
  r.owner = "worker-1";
  HoldState first = granted(r);
  HoldState again = granted(r);
  EXPECT_GT(again.token, first.token);
  EXPECT_EQ(table.status("k", now())->holders.size(), 1u);
  EXPECT_FALSE(table.renew("k", first.handle.to_string(), 1000, now())->renewed);  // fenced
  // The same owner asking for the key exclusively is not a re-take: it conflicts.
  AcquireRequest x = exclusive("k", 0, "user:alice", 1);
  x.owner = "worker-1";
  EXPECT_EQ(run(x).kind, AcquireOutcome::Kind::kContended);
}

TEST_F(ModesTest, RetakeOfSharedHoldDoesNotWaitBehindQueuedWriter) {
  AcquireRequest r = shared("k");
  r.owner = "o";
  granted(r);
  queued(exclusive("k", 5000));
  EXPECT_EQ(run(r).kind, AcquireOutcome::Kind::kGranted);
}

TEST_F(ModesTest, SessionEndReleasesSessionScopedSharedHolds) {
  AcquireRequest r = shared("k", 0, "user:a", 7);
  r.session_scoped = true;
  granted(r);
  WaiterId writer = queued(exclusive("k", 5000));
  table.end_session(7, now());
  EXPECT_EQ(grants(), std::vector<WaiterId>{writer});
}

TEST_F(ModesTest, SemaphoreGrantsUpToItsPermits) {
  HoldState a = granted(sem("s", 3, 2, 0, "user:a"));
  HoldState b = granted(sem("s", 3, 1, 0, "user:b"));
  EXPECT_EQ(a.mode, LockMode::kSemaphore);
  EXPECT_EQ(a.take, 2u);
  EXPECT_EQ(a.permits, 3u);
  EXPECT_LT(a.token, b.token);
  EXPECT_EQ(run(sem("s", 3, 1, 0, "user:c")).kind, AcquireOutcome::Kind::kContended);
  auto st = table.status("s", now());
  EXPECT_EQ(st->mode, LockMode::kSemaphore);
  EXPECT_EQ(st->permits, 3u);
  EXPECT_EQ(st->free_permits, 0u);
  EXPECT_EQ(st->holders.size(), 2u);
  release(a);
  EXPECT_EQ(table.status("s", now())->free_permits, 2u);
}

TEST_F(ModesTest, SemaphoreWithAnotherLimitIsInvalidArgumentAndChangesNothing) {
  granted(sem("s", 3, 1));
  auto out = table.acquire(sem("s", 4, 1), now());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(out.error().message.find("3 permits, not 4"), std::string::npos);
  EXPECT_EQ(table.status("s", now())->free_permits, 2u);
  EXPECT_EQ(table.held_count(), 1u);
}

TEST_F(ModesTest, LockAndSemaphoreNeverShareAKey) {
  granted(sem("s", 2, 1));
  auto as_lock = table.acquire(exclusive("s"), now());
  ASSERT_FALSE(as_lock.ok());
  EXPECT_EQ(as_lock.error().code, ErrorCode::kInvalidArgument);
  granted(shared("l"));
  auto as_sem = table.acquire(sem("l", 2, 1), now());
  ASSERT_FALSE(as_sem.ok());
  EXPECT_EQ(as_sem.error().code, ErrorCode::kInvalidArgument);
  AssignRequest assign{"s", "h1", std::nullopt, std::nullopt, 1, "user:a"};
  EXPECT_EQ(table.assign(assign, now()).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(ModesTest, SemaphoreLimitIsForgottenWhenTheKeyEmpties) {
  HoldState a = granted(sem("s", 2, 1));
  release(a);
  HoldState b = granted(sem("s", 5, 5));
  EXPECT_EQ(b.permits, 5u);
}

TEST_F(ModesTest, SemaphoreRequestForMorePermitsThanTheLimitIsInvalid) {
  auto out = table.acquire(sem("s", 2, 3), now());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(table.status("s", now())->held);
}

TEST_F(ModesTest, SemaphoreQueueIsFifoWithoutBarging) {
  HoldState a = granted(sem("s", 3, 2, 0, "user:a"));
  WaiterId big = queued(sem("s", 3, 3, 5000, "user:big", 2));
  // One permit is free, but a small request may not overtake the big one waiting.
  EXPECT_EQ(run(sem("s", 3, 1, 0, "user:small", 3)).kind, AcquireOutcome::Kind::kContended);
  WaiterId small = queued(sem("s", 3, 1, 5000, "user:small", 3));
  release(a);
  EXPECT_EQ(grants(), std::vector<WaiterId>{big});
  table.force_release("s", now());
  EXPECT_EQ(grants(), std::vector<WaiterId>{small});
}

TEST_F(ModesTest, SemaphoreWaitersWithTheLimitQueuedFixTheKey) {
  granted(exclusive("k"));
  // While an exclusive hold is on the key, it is a lock: a semaphore may not queue.
  EXPECT_EQ(table.acquire(sem("k", 2, 1, 5000), now()).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(ModesTest, SemaphorePermitsReturnOnExpiry) {
  granted(sem("s", 2, 2, 0, "user:a"));
  WaiterId w = queued(sem("s", 2, 1, 5000, "user:b", 2));
  tick(1000);
  EXPECT_EQ(grants(), std::vector<WaiterId>{w});
  EXPECT_EQ(table.status("s", now())->free_permits, 1u);
}

TEST_F(ModesTest, SemaphoreRetakeReplacesPermitsWhenTheyFit) {
  AcquireRequest r = sem("s", 3, 1);
  r.owner = "o";
  HoldState first = granted(r);
  granted(sem("s", 3, 1, 0, "user:b"));
  r.take = 2;
  HoldState again = granted(r);  // 3 - 1 + 2 - 1 ... fits: 1 (b) + 2
  EXPECT_GT(again.token, first.token);
  EXPECT_EQ(table.status("s", now())->free_permits, 0u);
  r.take = 3;  // does not fit beside b: not a re-take, contended
  EXPECT_EQ(run(r).kind, AcquireOutcome::Kind::kContended);
  EXPECT_EQ(table.status("s", now())->holders.size(), 2u);
}

TEST_F(ModesTest, SemaphoreRetakeForFewerPermitsHandsTheRestToWaiters) {
  AcquireRequest r = sem("s", 3, 3);
  r.owner = "o";
  granted(r);
  WaiterId w = queued(sem("s", 3, 2, 5000, "user:b", 2));
  r.take = 1;
  granted(r);
  EXPECT_EQ(grants(), std::vector<WaiterId>{w});
  EXPECT_EQ(table.status("s", now())->free_permits, 0u);
}

TEST_F(ModesTest, WaiterTimesOutBehindSharedHolders) {
  granted(shared("k"));
  WaiterId w = queued(exclusive("k", 300));
  tick(300);
  auto outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].waiter, w);
  EXPECT_FALSE(outcomes[0].granted);
}

TEST_F(ModesTest, SnapshotAndRestoreKeepSharedAndSemaphoreHolds) {
  HoldState a = granted(shared("k", 0, "user:a"));
  HoldState b = granted(shared("k", 0, "user:b"));
  HoldState s = granted(sem("s", 4, 3));
  DurableState state = table.snapshot(now());
  ASSERT_EQ(state.holds.size(), 3u);
  LockTable restored;
  restored.restore(state, now());
  auto st = restored.status("k", now());
  ASSERT_EQ(st->holders.size(), 2u);
  EXPECT_EQ(st->mode, LockMode::kShared);
  EXPECT_EQ(restored.status("s", now())->free_permits, 1u);
  EXPECT_TRUE(restored.release("k", b.handle.to_string(), now())->released);
  EXPECT_TRUE(restored.renew("s", s.handle.to_string(), 1000, now())->renewed);
  EXPECT_EQ(restored.last_token(), s.token);
  (void)a;
}

TEST_F(ModesTest, SharedWaitersQueuedWhileGrantsAreClosedAreGrantedTogetherWhenTheyOpen) {
  DurableState state;
  state.last_token = 10;
  state.grants_closed_until = now() + 5'000;
  table.restore(state, now());
  WaiterId a = queued(shared("k", 10'000, "user:a", 3));
  WaiterId b = queued(shared("k", 10'000, "user:b", 4));
  WaiterId x = queued(exclusive("k", 10'000, "user:x", 5));
  tick(4'999);
  EXPECT_TRUE(grants().empty());
  tick(1);
  EXPECT_EQ(grants(), (std::vector<WaiterId>{a, b}));
  EXPECT_GT(table.status("k", now())->holders[0].token, 10u);
  table.force_release("k", now());
  EXPECT_EQ(grants(), std::vector<WaiterId>{x});
}

TEST_F(ModesTest, ChangesReportEverySharedGrantAndRelease) {
  HoldState a = granted(shared("k", 0, "user:a"));
  release(a);
  ASSERT_EQ(sink.changes.size(), 2u);
  const auto* g = std::get_if<Granted>(&sink.changes[0]);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->hold.mode, LockMode::kShared);
  const auto* r = std::get_if<Released>(&sink.changes[1]);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->token, a.token);
}

TEST_F(ModesTest, ListShowsEverySharedHold) {
  granted(shared("k", 0, "user:a"));
  granted(shared("k", 0, "user:b"));
  granted(exclusive("z"));
  ListPage page = table.list("", "", 10, now());
  ASSERT_EQ(page.holds.size(), 3u);
  EXPECT_EQ(page.holds[0].key, "k");
  EXPECT_EQ(page.holds[1].key, "k");
  EXPECT_EQ(page.holds[2].key, "z");
}

}  // namespace
}  // namespace holdfast::testing
