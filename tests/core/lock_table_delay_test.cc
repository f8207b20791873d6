// Lock-delay (core/lock_table.h, step 5; docs/lock-kinds.md): a hold that asked for one and
// vanished without a release (expiry, session end) closes its key for the delay; a release
// or a re-take closes nothing. Every instant here is on the fake clock.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "table_fixture.h"

namespace holdfast::testing {
namespace {

constexpr Millis kTtl = 1'000;
constexpr Millis kDelay = 500;

class LockDelayTest : public TableTest {
 protected:
  AcquireRequest delayed(std::string_view key, Millis ttl = kTtl, Millis delay = kDelay) {
    AcquireRequest r = req(key, ttl);
    r.lock_delay_ms = delay;
    return r;
  }

  HoldState take_delayed(std::string_view key, Millis ttl = kTtl, Millis delay = kDelay) {
    auto out = table.acquire(delayed(key, ttl, delay), now());
    EXPECT_TRUE(out.ok());
    EXPECT_EQ(out->kind, AcquireOutcome::Kind::kGranted);
    return out->hold;
  }

  AcquireOutcome::Kind try_as(std::string_view key, std::string_view held_by = "user:bob") {
    return table.acquire(req(key, kTtl, 0, held_by), now())->kind;
  }

  Millis closed_until(std::string_view key) { return table.status(key, now())->lock_delay_until; }
};

TEST_F(LockDelayTest, AnExpiryClosesTheKeyForExactlyTheDelay) {
  const HoldState h = take_delayed("k");
  EXPECT_EQ(h.lock_delay_ms, kDelay);
  const Millis ends = h.lease_expires_at;
  tick(kTtl);
  auto s = table.status("k", now());
  EXPECT_FALSE(s->held);
  EXPECT_EQ(s->lock_delay_until, ends + kDelay);
  EXPECT_EQ(table.next_deadline(), ends + kDelay);
  tick(kDelay - 1);
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kContended);
  EXPECT_EQ(closed_until("k"), ends + kDelay);
  tick(1);
  EXPECT_EQ(closed_until("k"), 0);
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, AnExpiryFoundLazilyClosesFromTheLeaseEndNotFromWhenItWasNoticed) {
  const HoldState h = take_delayed("k");
  clock.advance(kTtl + 200);  // no advance(): the acquire finds the ended lease itself
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kContended);
  EXPECT_EQ(closed_until("k"), h.lease_expires_at + kDelay);
  clock.advance(kDelay - 200);
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, ADelayThatEndedBeforeTheExpiryWasNoticedClosesNothing) {
  take_delayed("k");
  clock.advance(kTtl + kDelay);
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, AReleaseClosesNothing) {
  const HoldState h = take_delayed("k");
  clock.advance(100);
  EXPECT_TRUE(table.release("k", h.handle.to_string(), now())->released);
  EXPECT_EQ(closed_until("k"), 0);
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, AReTakeClosesNothingAndKeepsTheDelayAskedFor) {
  AcquireRequest r = delayed("k");
  r.owner = "w1";
  const HoldState first = table.acquire(r, now())->hold;
  clock.advance(100);
  auto again = table.acquire(r, now());
  ASSERT_EQ(again->kind, AcquireOutcome::Kind::kGranted);
  EXPECT_GT(again->hold.token, first.token);
  EXPECT_EQ(again->hold.lock_delay_ms, kDelay);
  EXPECT_EQ(closed_until("k"), 0);
}

TEST_F(LockDelayTest, AHoldWithoutADelayClosesNothingWhenItExpires) {
  take("k");
  tick(kTtl);
  EXPECT_EQ(closed_until("k"), 0);
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, WaitersAreGrantedInOrderWhenTheDelayEnds) {
  const HoldState h = take_delayed("k");
  const WaiterId first = wait("k", 60'000, 2, "user:bob");
  const WaiterId second = wait("k", 60'000, 3, "user:carol");
  tick(kTtl);
  EXPECT_FALSE(table.has_outcomes());
  EXPECT_EQ(table.status("k", now())->waiters, 2u);
  tick(kDelay - 1);
  EXPECT_FALSE(table.has_outcomes());
  tick(1);
  auto outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].waiter, first);
  EXPECT_TRUE(outcomes[0].granted);
  EXPECT_EQ(outcomes[0].hold.acquired_at, h.lease_expires_at + kDelay);
  // The waiter asked for no delay: its release hands on at once.
  EXPECT_TRUE(table.release("k", outcomes[0].hold.handle.to_string(), now())->released);
  outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].waiter, second);
  EXPECT_TRUE(outcomes[0].granted);
}

TEST_F(LockDelayTest, AnAcquireAtTheDelayEndDoesNotOvertakeTheWaiters) {
  take_delayed("k");
  const WaiterId w = wait("k", 60'000);
  clock.advance(kTtl + kDelay);  // no advance(): the acquire comes first
  auto late = table.acquire(req("k", kTtl, 0, "user:carol"), now());
  EXPECT_EQ(late->kind, AcquireOutcome::Kind::kContended);
  auto outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].waiter, w);
  EXPECT_TRUE(outcomes[0].granted);
}

TEST_F(LockDelayTest, AWaiterWhoseTimeoutComesDuringTheDelayTimesOut) {
  const HoldState h = take_delayed("k");
  wait("k", kTtl + 200);
  tick(kTtl + 200);
  auto outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].granted);
  EXPECT_EQ(closed_until("k"), h.lease_expires_at + kDelay);  // still closed
  EXPECT_EQ(table.status("k", now())->waiters, 0u);
}

TEST_F(LockDelayTest, ADelayCloseToTheLongestIsKeptToTheMillisecond) {
  const HoldState h = take_delayed("k", kTtl, kMaxLockDelayMs);
  tick(kTtl + kMaxLockDelayMs - 1);
  EXPECT_EQ(closed_until("k"), h.lease_expires_at + kMaxLockDelayMs);
  tick(1);
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, ASessionEndClosesTheKeyFromThatInstant) {
  AcquireRequest r = delayed("k", 60'000);
  r.session_scoped = true;
  r.session = 9;
  ASSERT_EQ(table.acquire(r, now())->kind, AcquireOutcome::Kind::kGranted);
  clock.advance(100);
  table.end_session(9, now());
  EXPECT_FALSE(table.status("k", now())->held);
  EXPECT_EQ(closed_until("k"), now() + kDelay);
  tick(kDelay);
  EXPECT_EQ(try_as("k"), AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, AnAssignedHoldsExpiryClosesTheKeyAndATransferKeepsItsDelay) {
  AssignRequest a;
  a.key = "k";
  a.holder_id = "w1";
  a.ttl_ms = kTtl;
  a.held_by = "user:alice";
  a.lock_delay_ms = kDelay;
  ASSERT_EQ(table.assign(a, now())->kind, AcquireOutcome::Kind::kGranted);
  auto moved = table.transfer("k", "w2", "w1", "user:alice", now());
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->lock_delay_ms, kDelay);
  tick(kTtl);
  EXPECT_EQ(closed_until("k"), now() + kDelay);
  a.holder_id = "w3";
  EXPECT_FALSE(table.assign(a, now()).ok());  // LOCK_HELD: one attempt on a closed key
}

TEST_F(LockDelayTest, ASharedHoldsExpiryClosesTheKeyToNewGrantsWhileOthersStillHoldIt) {
  AcquireRequest shared = delayed("k");
  shared.mode = LockMode::kShared;
  ASSERT_EQ(table.acquire(shared, now())->kind, AcquireOutcome::Kind::kGranted);
  clock.advance(500);
  AcquireRequest longer = req("k", 10'000, 0, "user:bob");
  longer.mode = LockMode::kShared;
  ASSERT_EQ(table.acquire(longer, now())->kind, AcquireOutcome::Kind::kGranted);
  tick(500);  // the first shared hold expires
  auto s = table.status("k", now());
  EXPECT_TRUE(s->held);
  EXPECT_EQ(s->holders.size(), 1u);
  EXPECT_EQ(s->lock_delay_until, now() + kDelay);
  AcquireRequest third = req("k", kTtl, 0, "user:carol");
  third.mode = LockMode::kShared;
  EXPECT_EQ(table.acquire(third, now())->kind, AcquireOutcome::Kind::kContended);
  tick(kDelay);
  EXPECT_EQ(table.acquire(third, now())->kind, AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, SharedWaitersAreGrantedTogetherWhenTheDelayEnds) {
  take_delayed("k");
  for (SessionId s : {2, 3}) {
    AcquireRequest r = req("k", kTtl, 60'000, "user:bob");
    r.mode = LockMode::kShared;
    r.session = s;
    ASSERT_EQ(table.acquire(r, now())->kind, AcquireOutcome::Kind::kQueued);
  }
  tick(kTtl + kDelay - 1);
  EXPECT_FALSE(table.has_outcomes());
  tick(1);
  auto outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_TRUE(outcomes[0].granted && outcomes[1].granted);
}

// Restart: the table re-derives the delay from the hold's record (as replay hands it over)
// or from the snapshot it took during the delay, and keeps the key closed to the same instant.
TEST_F(LockDelayTest, ARestartDuringTheDelayKeepsTheKeyClosedUntilTheSameInstant) {
  const HoldState h = take_delayed("k");
  ASSERT_EQ(sink.changes.size(), 1u);
  const HoldState recorded = std::get<Granted>(sink.changes[0]).hold;
  EXPECT_EQ(recorded.lock_delay_ms, kDelay);
  tick(kTtl + 100);
  const DurableState snap = table.snapshot(now());

  for (const DurableState* from : {&snap, static_cast<const DurableState*>(nullptr)}) {
    DurableState state;
    if (from != nullptr) {
      state = *from;
    } else {
      state.last_token = recorded.token;
      state.holds.push_back(recorded);
    }
    LockTable restarted;
    restarted.restore(state, now());
    EXPECT_FALSE(restarted.status("k", now())->held);
    EXPECT_EQ(restarted.status("k", now())->lock_delay_until, h.lease_expires_at + kDelay);
    EXPECT_EQ(restarted.next_deadline(), h.lease_expires_at + kDelay);
    EXPECT_EQ(restarted.acquire(req("k"), now())->kind, AcquireOutcome::Kind::kContended);
    const Millis later = h.lease_expires_at + kDelay;
    auto out = restarted.acquire(req("k"), later);
    EXPECT_EQ(out->kind, AcquireOutcome::Kind::kGranted);
    EXPECT_GT(out->hold.token, h.token);
  }
}

TEST_F(LockDelayTest, ASnapshotAfterTheDelayEndedCarriesNothingOfIt) {
  take_delayed("k");
  tick(kTtl + kDelay);
  EXPECT_TRUE(table.snapshot(now()).holds.empty());
  LockTable restarted;
  restarted.restore(table.snapshot(now()), now());
  EXPECT_EQ(restarted.acquire(req("k"), now())->kind, AcquireOutcome::Kind::kGranted);
}

TEST_F(LockDelayTest, ASessionEndsDelayIsNotInASnapshot) {
  AcquireRequest r = delayed("k", 60'000);
  r.session_scoped = true;
  r.session = 9;
  ASSERT_EQ(table.acquire(r, now())->kind, AcquireOutcome::Kind::kGranted);
  table.end_session(9, now());
  EXPECT_NE(closed_until("k"), 0);
  EXPECT_TRUE(table.snapshot(now()).holds.empty());
}

// Random tries, releases, re-takes and clock steps on a few keys, each try with a random delay,
// against a model of what closes a key: after every step the table's answers and statuses
// agree with it (a key is granted only when free and not closed; a delay runs from the lease
// end exactly; releases and re-takes close nothing).
TEST_F(LockDelayTest, RandomStepsAgreeWithAModelOfTheDelays) {
  struct KeyModel {
    bool held = false;
    std::string handle;
    std::string owner;
    Millis lease_end = 0;
    Millis delay = 0;
    Millis closed_until = 0;
  };
  const std::array<std::string, 3> keys = {"a", "b", "c"};
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    LockTable t;
    std::array<KeyModel, 3> model{};
    Millis at = 1'000'000;
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint32_t>(n)); };
    auto settle = [&](KeyModel& m) {  // the model's own lazy expiry
      if (m.held && m.lease_end <= at) {
        m.held = false;
        if (m.delay > 0) m.closed_until = std::max(m.closed_until, m.lease_end + m.delay);
      }
    };
    for (int step = 0; step < 400; ++step) {
      const int k = pick(3);
      KeyModel& m = model[static_cast<std::size_t>(k)];
      switch (pick(4)) {
        case 0: {  // a try, sometimes as the holder's re-take
          settle(m);
          AcquireRequest r = req(keys[static_cast<std::size_t>(k)], 50 + pick(300));
          const std::string owner = "w" + std::to_string(pick(2));
          r.owner = owner;
          r.lock_delay_ms = pick(3) == 0 ? 0 : 1 + pick(400);
          auto out = t.acquire(r, at);
          ASSERT_TRUE(out.ok());
          const bool retake = m.held && m.owner == owner;
          const bool expect = retake || (!m.held && m.closed_until <= at);
          ASSERT_EQ(out->kind == AcquireOutcome::Kind::kGranted, expect)
              << "seed " << seed << " step " << step;
          if (expect) {
            m.held = true;
            m.handle = out->hold.handle.to_string();
            m.owner = owner;
            m.lease_end = out->hold.lease_expires_at;
            m.delay = r.lock_delay_ms.value_or(0);
          }
          break;
        }
        case 1:  // the holder releases
          settle(m);
          if (m.held) {
            ASSERT_TRUE(t.release(keys[static_cast<std::size_t>(k)], m.handle, at)->released);
            m.held = false;
          }
          break;
        default:  // the clock moves, the timers run
          at += pick(200);
          t.advance(at);
          for (KeyModel& each : model) settle(each);
          break;
      }
      for (std::size_t i = 0; i < keys.size(); ++i) {
        auto st = t.status(keys[i], at);
        settle(model[i]);
        ASSERT_EQ(st->held, model[i].held) << "seed " << seed << " step " << step;
        const Millis closed = model[i].closed_until > at ? model[i].closed_until : 0;
        ASSERT_EQ(st->lock_delay_until, closed) << "seed " << seed << " step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace holdfast::testing
