// WalStore with fsync horizon on the in-memory file system: answers run ahead of the disk only
// inside the durable horizon, a crash leaves a quarantine behind, a clean stop does not.
#include <gtest/gtest.h>

#include "wal_store_fixture.h"

namespace holdfast::wal::testing {
namespace {

constexpr Millis kLease = 10'000;

class HorizonStoreTest : public WalStoreTest {
 protected:
  HorizonStoreTest() {
    options_.fsync = FsyncMode::kHorizon;
    options_.horizon = HorizonOptions{1'000, 500, 100};
  }

  std::uint64_t grant(WalStore& store, std::uint64_t token, Millis lease = kLease) {
    return append(store,
                  Granted{make_hold("k" + std::to_string(token), token, clock_.now_ms() + lease)});
  }
};

TEST_F(HorizonStoreTest, ACoveredGrantIsAnsweredBeforeAnySync) {
  auto store = open();
  const std::uint64_t first = grant(*store, 1);
  ASSERT_TRUE(wait_durable(*store, first));  // the first one waits for its horizon
  const std::uint64_t syncs = fs_.file_syncs();
  fs_.block_syncs();  // nothing more reaches the disk through a sync
  const std::uint64_t second = grant(*store, 2);
  EXPECT_GE(store->durable_sequence(), second);  // at once, no sync in between
  append(*store, Released{"k2", 2});
  EXPECT_EQ(fs_.file_syncs(), syncs);
  fs_.unblock_syncs();
}

TEST_F(HorizonStoreTest, AGrantPastTheDurableHorizonWaitsForTheNextSync) {
  auto store = open();
  ASSERT_TRUE(wait_durable(*store, grant(*store, 1)));
  fs_.block_syncs();
  const std::uint64_t longer = grant(*store, 2, 5 * kLease);
  EXPECT_LT(store->durable_sequence(), longer);
  ASSERT_TRUE(fs_.wait_for_blocked_syncs(1, std::chrono::seconds(10)));
  EXPECT_LT(store->durable_sequence(), longer);
  fs_.unblock_syncs();
  EXPECT_TRUE(wait_durable(*store, longer));
}

TEST_F(HorizonStoreTest, ARuleSetChangeWaitsForTheDisk) {
  auto store = open();
  ASSERT_TRUE(wait_durable(*store, grant(*store, 1)));
  fs_.block_syncs();
  const std::uint64_t put = append(*store, RuleSetPut{"r", "x"});
  ASSERT_TRUE(fs_.wait_for_blocked_syncs(1, std::chrono::seconds(10)));
  EXPECT_LT(store->durable_sequence(), put);
  fs_.unblock_syncs();
  EXPECT_TRUE(wait_durable(*store, put));
}

TEST_F(HorizonStoreTest, RequireSyncHoldsTheAnswerUntilTheDiskHasIt) {
  auto store = open();
  const std::uint64_t first = grant(*store, 1);
  ASSERT_TRUE(wait_durable(*store, first));
  const std::uint64_t release = append(*store, Released{"k1", 1});
  EXPECT_GE(store->durable_sequence(), release);
  fs_.block_syncs();
  store->require_sync();
  store->submit();
  EXPECT_LT(store->durable_sequence(), release + 1);
  fs_.unblock_syncs();
  EXPECT_TRUE(wait_durable(*store, release + 1));
}

TEST_F(HorizonStoreTest, AKillLeavesAQuarantineUntilTheDurableHorizon) {
  auto store = open();
  ASSERT_TRUE(wait_durable(*store, grant(*store, 1)));
  grant(*store, 2);  // answered, maybe never written
  auto image = fs_.image_after(FakeFileSystem::Crash::kPowerLoss);
  clock_.advance(2'000);
  Result<DurableState> state = restart(image.get());
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->grants_closed_until, kStart + kLease + 1'000);
  EXPECT_GE(state->last_token, 1u + 100);  // the reserved block is never handed out again
  store->close();
}

TEST_F(HorizonStoreTest, AQuarantineThatAlreadyPassedIsNone) {
  auto store = open();
  ASSERT_TRUE(wait_durable(*store, grant(*store, 1)));
  auto image = fs_.image_after(FakeFileSystem::Crash::kKill);
  clock_.advance(kLease + 1'000);
  Result<DurableState> state = restart(image.get());
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->grants_closed_until, 0);
  store->close();
}

TEST_F(HorizonStoreTest, ACleanStopNeedsNoQuarantine) {
  auto store = open();
  grant(*store, 1);
  grant(*store, 2);
  store->close();
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->grants_closed_until, 0);
  EXPECT_EQ(state->holds.size(), 2u);
}

TEST_F(HorizonStoreTest, ACrashDuringAQuarantineKeepsItsEnd) {
  auto store = open();
  ASSERT_TRUE(wait_durable(*store, grant(*store, 1)));
  auto crashed = fs_.image_after(FakeFileSystem::Crash::kKill);
  store->close();
  // The second run recovers, renews nothing, grants nothing, and is killed too.
  clock_.advance(2'000);
  auto second = make(crashed.get());
  ASSERT_TRUE(second->recover().ok());
  auto again = crashed->image_after(FakeFileSystem::Crash::kKill);
  second->close();
  clock_.advance(2'000);
  Result<DurableState> state = restart(again.get());
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->grants_closed_until, kStart + kLease + 1'000);
}

TEST_F(HorizonStoreTest, ACleanStopDuringAQuarantineKeepsItsEnd) {
  auto store = open();
  ASSERT_TRUE(wait_durable(*store, grant(*store, 1)));
  auto crashed = fs_.image_after(FakeFileSystem::Crash::kKill);
  store->close();
  clock_.advance(2'000);
  auto second = make(crashed.get());
  ASSERT_TRUE(second->recover().ok());
  second->close();  // a clean stop, while the quarantine still runs
  clock_.advance(2'000);
  Result<DurableState> state = restart(crashed.get());
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->grants_closed_until, kStart + kLease + 1'000);
}

TEST_F(HorizonStoreTest, TheHorizonSurvivesASnapshotAndCompaction) {
  options_.snapshot_threshold_bytes = 4096;
  auto store = open();
  store->set_state_source(state_source_of([this] { return model_.live(); }));
  ASSERT_TRUE(wait_durable(*store, grant(*store, 1)));
  for (std::uint64_t t = 2; t < 60; ++t) grant(*store, t);
  ASSERT_TRUE(eventually([&] { return store->stats().snapshots >= 1; }));
  auto image = fs_.image_after(FakeFileSystem::Crash::kKill);
  clock_.advance(2'000);
  Result<DurableState> state = restart(image.get());
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->grants_closed_until, kStart + kLease + 1'000);
  store->close();
}

TEST_F(HorizonStoreTest, AQuarantineIsNoLongerThanTheLongestLease) {
  auto store = open();
  ASSERT_TRUE(wait_durable(*store, grant(*store, 1)));
  auto image = fs_.image_after(FakeFileSystem::Crash::kKill);
  clock_.advance(300);  // a restart quicker than the slack
  Result<DurableState> state = restart(image.get());
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->grants_closed_until, kStart + 300 + kLease);
  store->close();
}

}  // namespace
}  // namespace holdfast::wal::testing
