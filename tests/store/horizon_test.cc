// The lease horizon (store/wal/horizon.h): which changes may be answered before the disk, when
// the next LeaseHorizon record is asked for, and how long a restart waits.
#include <gtest/gtest.h>

#include "store/wal/horizon.h"
#include "test_support.h"

namespace holdfast::wal::testing {
namespace {
namespace horizon {

constexpr Millis kLease = 10'000;

class HorizonKeeperTest : public ::testing::Test {
 protected:
  HorizonKeeperTest() : keeper_(HorizonOptions{1'000, 500, 100}) { keeper_.start(DurableState{}); }

  // Classifies a grant of `token` for kLease (or `lease`) at now_, and appends any record it
  // asks for as sequence next_++ (the change itself takes the next one).
  HorizonKeeper::Need grant(std::uint64_t token, Millis lease = kLease) {
    const HorizonKeeper::Need need =
        keeper_.classify(Granted{make_hold("k", token, now_ + lease)}, now_, synced_);
    if (need.record) keeper_.appended(*need.record, next_++);
    ++next_;
    return need;
  }
  void sync_all() { synced_ = next_ - 1; }

  HorizonKeeper keeper_;
  Millis now_ = kStart;
  std::uint64_t synced_ = 0;
  std::uint64_t next_ = 1;
};

TEST_F(HorizonKeeperTest, TheFirstGrantAsksForAHorizonAndWaitsForIt) {
  const HorizonKeeper::Need need = grant(1);
  ASSERT_TRUE(need.record);
  EXPECT_TRUE(need.wait_for_sync);
  EXPECT_EQ(need.record->until, now_ + kLease + 1'000);
  EXPECT_EQ(need.record->tokens_through, 1u + 100);
  EXPECT_EQ(need.record->written_at, now_);
  EXPECT_EQ(need.record->max_lease, kLease);
  EXPECT_FALSE(need.record->clean);
}

TEST_F(HorizonKeeperTest, GrantsInsideTheDurableHorizonDoNotWait) {
  grant(1);
  sync_all();
  now_ += 400;  // still 600 ms before the horizon: more than the margin
  const HorizonKeeper::Need need = grant(2);
  EXPECT_FALSE(need.wait_for_sync);
  EXPECT_FALSE(need.record);
  EXPECT_EQ(keeper_.durable_until(), kStart + kLease + 1'000);
}

TEST_F(HorizonKeeperTest, AGrantNearTheHorizonExtendsItAheadWithoutWaiting) {
  grant(1);
  sync_all();
  now_ += 600;  // the lease ends 400 ms before the horizon: inside the margin
  const HorizonKeeper::Need need = grant(2);
  EXPECT_FALSE(need.wait_for_sync);
  ASSERT_TRUE(need.record);
  EXPECT_EQ(need.record->until, now_ + kLease + 1'000);
  // Until that record is on disk the old horizon is the durable one.
  EXPECT_EQ(keeper_.durable_until(), kStart + kLease + 1'000);
}

TEST_F(HorizonKeeperTest, ALongerLeaseThanAnyBeforeWaitsForANewHorizon) {
  grant(1);
  sync_all();
  const HorizonKeeper::Need need = grant(2, 5 * kLease);
  EXPECT_TRUE(need.wait_for_sync);
  ASSERT_TRUE(need.record);
  EXPECT_EQ(need.record->until, now_ + 5 * kLease + 1'000);
}

TEST_F(HorizonKeeperTest, ALongerLeaseInsideTheHorizonStillWaitsForANewBound) {
  grant(1);
  sync_all();
  now_ += 100;
  // Ends 900 ms before the horizon, but lasts longer than any lease the durable record bounds.
  const HorizonKeeper::Need need = grant(2, kLease);
  EXPECT_FALSE(need.wait_for_sync);
  const HorizonKeeper::Need longer = grant(3, kLease + 200);
  EXPECT_TRUE(longer.wait_for_sync);
  ASSERT_TRUE(longer.record);
  EXPECT_EQ(longer.record->max_lease, kLease + 200);
  sync_all();
  EXPECT_FALSE(grant(4, kLease + 200).wait_for_sync);
}

TEST_F(HorizonKeeperTest, TokensPastTheDurableReservationWait) {
  grant(1);
  sync_all();
  EXPECT_FALSE(grant(40).wait_for_sync);       // reserved through 101
  const HorizonKeeper::Need near = grant(60);  // within half a block: reserve the next one
  EXPECT_FALSE(near.wait_for_sync);
  ASSERT_TRUE(near.record);
  EXPECT_EQ(near.record->tokens_through, 160u);
  EXPECT_TRUE(grant(102).wait_for_sync);  // past what is on disk
}

TEST_F(HorizonKeeperTest, ChangesWithoutAnEndInTimeWait) {
  grant(1);
  sync_all();
  EXPECT_TRUE(keeper_.classify(Granted{make_assigned("turn", 2)}, now_, synced_).wait_for_sync);
  EXPECT_TRUE(keeper_.classify(Released{"turn", 2}, now_, synced_).wait_for_sync);
  EXPECT_FALSE(keeper_.classify(Released{"k", 1}, now_, synced_).wait_for_sync);
  EXPECT_TRUE(keeper_.classify(RuleSetPut{"r", "x"}, now_, synced_).wait_for_sync);
  EXPECT_TRUE(keeper_.classify(RuleSetDeleted{"r"}, now_, synced_).wait_for_sync);
  // A never-ending hold made bounded again: lost, it would never end.
  keeper_.classify(Renewed{"a", 3, kNever}, now_, synced_);
  EXPECT_TRUE(keeper_.classify(Renewed{"a", 3, now_ + 10}, now_, synced_).wait_for_sync);
}

TEST_F(HorizonKeeperTest, ARecoveredNeverEndingHoldStillWaitsWhenReleased) {
  DurableState state;
  state.holds.push_back(make_assigned("turn", 9));
  keeper_.start(state);
  EXPECT_TRUE(keeper_.classify(Released{"turn", 9}, now_, synced_).wait_for_sync);
}

TEST_F(HorizonKeeperTest, EveryRecordAfterARestartKeepsCoveringTheQuarantine) {
  DurableState state;
  state.grants_closed_until = kStart + 100'000;
  keeper_.start(state);
  const HorizonKeeper::Need need = grant(1);
  ASSERT_TRUE(need.record);
  EXPECT_EQ(need.record->until, kStart + 100'000);
  EXPECT_EQ(need.record->max_lease, 100'000);  // the quarantine outlasts the lease
  EXPECT_EQ(keeper_.closing(now_).until, kStart + 100'000);
  EXPECT_EQ(keeper_.closing(now_).max_lease, 100'000);
  EXPECT_TRUE(keeper_.closing(now_).clean);
  // Restarted from that record later on, the quarantine still ends where it did.
  EXPECT_EQ(quarantine_end(*need.record, kStart, kStart + 40'000), kStart + 100'000);
}

TEST(QuarantineEnd, NoHorizonNoWait) { EXPECT_EQ(quarantine_end(std::nullopt, kStart, kStart), 0); }

TEST(QuarantineEnd, AnUncleanStopWaitsUntilTheHorizon) {
  const LeaseHorizon h{kStart + 30'000, 5, kStart, false};
  EXPECT_EQ(quarantine_end(h, kStart, kStart + 1'000), kStart + 30'000);
  EXPECT_EQ(quarantine_end(h, kStart, kStart + 30'000), 0);
}

TEST(QuarantineEnd, NoLongerThanTheLongestLeaseFromTheRestart) {
  // Written at kStart for leases of at most 10 s; the restart comes 500 ms later.
  const LeaseHorizon h{kStart + 11'000, 5, kStart, false, 10'000};
  EXPECT_EQ(quarantine_end(h, kStart, kStart + 500), kStart + 10'500);
  // Past the horizon itself the bound changes nothing.
  EXPECT_EQ(quarantine_end(h, kStart, kStart + 11'000), 0);
}

TEST(QuarantineEnd, ARecordFromAnOlderLogHasNoLeaseBound) {
  const LeaseHorizon h{kStart + 30'000, 5, kStart, false};
  EXPECT_EQ(h.max_lease, LeaseHorizon::kNoLeaseBound);
  EXPECT_EQ(quarantine_end(h, kStart, kStart + 1'000), kStart + 30'000);
}

TEST(QuarantineEnd, ACleanStopWaitsOnlyForAQuarantineItInterrupted) {
  EXPECT_EQ(quarantine_end(LeaseHorizon{kStart, 5, kStart, true}, kStart, kStart + 1), 0);
  EXPECT_EQ(quarantine_end(LeaseHorizon{kStart + 9'000, 5, kStart, true}, kStart, kStart + 1'000),
            kStart + 9'000);
}

TEST(QuarantineEnd, AClockBehindTheLastRecordWaitsAsIfNoTimeHadPassed) {
  const LeaseHorizon h{kStart + 30'000, 5, kStart, false};
  // The wall clock now reads an hour before the record was written.
  const Millis now = kStart - 3'600'000;
  EXPECT_EQ(quarantine_end(h, kStart, now), now + 30'000);
  // A later record (a grant made after the horizon was written) counts too.
  EXPECT_EQ(quarantine_end(h, kStart + 10'000, now), now + 20'000);
}

}  // namespace horizon
}  // namespace
}  // namespace holdfast::wal::testing
