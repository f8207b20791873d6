// Snapshots and compaction through WalStore: the log is cut at a snapshot, old segments go,
// and restarts before, during and after a compaction all see the same state.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>

#include "store/wal/data_dir.h"
#include "store/wal/snapshot.h"
#include "wal_store_fixture.h"

namespace holdfast::wal {
namespace {

using testing::kDir;
using testing::kStart;
using testing::make_hold;
using testing::segment_path;
using testing::snapshot_path;
using testing::WalStoreTest;

class CompactionTest : public WalStoreTest {
 protected:
  void SetUp() override {
    options_.snapshot_threshold_bytes = 4096;
    options_.segment_bytes = 1024;
  }

  std::unique_ptr<WalStore> open_with_source() {
    auto store = open();
    store->set_state_source(state_source_of([this] { return model_.live(); }));
    return store;
  }

  // A workload over a few keys: grants, renewals and releases. With `wait`, each operation
  // waits for its commit (a steady load); without, it is one burst.
  void churn(WalStore& store, int operations, std::uint64_t& token, bool wait = false) {
    for (int i = 0; i < operations; ++i) {
      const std::string key = "key/" + std::to_string(i % 37);
      const std::uint64_t t = ++token;
      std::uint64_t last = append(store, Granted{make_hold(key, t, kStart + 60'000 + i)});
      if (i % 3 == 0) last = append(store, Renewed{key, t, kStart + 90'000});
      if (i % 5 == 0) last = append(store, Released{key, t});
      if (wait) {
        ASSERT_TRUE(testing::wait_durable(store, last));
      }
    }
  }

  // A snapshot file that cannot be written (a full disk, say) is given up: nothing is
  // compacted, commits go on, and a later threshold takes another snapshot. Also when a child
  // encoded the state.
  void expect_a_failed_snapshot_write_is_skipped() {
    fs_.block_syncs(".snap.tmp");
    auto store = open_with_source();
    std::uint64_t token = 0;
    churn(*store, 200, token, /*wait=*/true);
    ASSERT_TRUE(fs_.wait_for_blocked_syncs(1, std::chrono::seconds(10)));
    fs_.fail_syncs(true);  // the snapshot's fdatasync fails once released
    fs_.unblock_syncs();
    ASSERT_TRUE(testing::eventually([&] { return store->stats().snapshots_skipped > 0; }));
    fs_.fail_syncs(false);
    EXPECT_EQ(store->stats().snapshots, 0u);
    EXPECT_FALSE(store->fault().has_value());
    EXPECT_TRUE(listing().snapshots.empty());
    EXPECT_EQ(listing().segments.front(), 1u);

    churn(*store, 400, token, /*wait=*/true);
    ASSERT_TRUE(testing::eventually([&] {
      const StoreStats s = store->stats();
      return s.snapshots > 0 && !s.snapshot_in_progress;
    }));
    store->close();
    EXPECT_EQ(listing().snapshots.size(), 1u);
    expect_restart_sees_model();
  }

  DirListing listing() {
    Result<DirListing> l = list_data_dir(fs_, kDir);
    EXPECT_TRUE(l.ok());
    return l.ok() ? *l : DirListing{};
  }
};

TEST_F(CompactionTest, SnapshotPlusTailRestoresTheState) {
  auto store = open_with_source();
  std::uint64_t token = 0;
  churn(*store, 400, token);
  append_all(*store, {RuleSetPut{"locks", "rules"}});
  store->close();
  EXPECT_GT(store->stats().snapshots, 0u);
  const DirListing files = listing();
  ASSERT_EQ(files.snapshots.size(), 1u);
  expect_restart_sees_model();
}

TEST_F(CompactionTest, CompactionRemovesOldSegmentsAndARestartSeesTheSameState) {
  auto store = open_with_source();
  std::uint64_t token = 0;
  churn(*store, 2000, token, /*wait=*/true);
  // A threshold reached while a snapshot is written is skipped, so a slow host may need more
  // churn for the same number of compactions.
  ASSERT_TRUE(testing::eventually([&] {
    churn(*store, 50, token, /*wait=*/true);
    return store->stats().snapshots > 3;
  }));
  // How much is appended while a snapshot is written depends on the scheduler, so the bound is
  // checked once the load stops: the first append past the threshold after the snapshot in
  // flight asks for one more, and when it is done the live log holds only what followed its cut.
  ASSERT_TRUE(testing::eventually([&] { return !store->stats().snapshot_in_progress; }));
  const std::uint64_t before = store->stats().snapshots;
  for (int i = 0; !store->stats().snapshot_in_progress && store->stats().snapshots == before; ++i) {
    ASSERT_LT(i, 1000) << "no snapshot asked for past the threshold";
    const std::uint64_t last =
        append(*store, Granted{make_hold("final/" + std::to_string(i), ++token)});
    ASSERT_TRUE(testing::wait_durable(*store, last));
  }
  store->close();
  const StoreStats stats = store->stats();
  EXPECT_EQ(stats.snapshots, before + 1);
  EXPECT_LT(stats.log_bytes, options_.segment_bytes) << "the live log is what followed the cut";

  const DirListing files = listing();
  ASSERT_EQ(files.snapshots.size(), 1u);
  ASSERT_FALSE(files.segments.empty());
  EXPECT_GE(files.segments.front(), files.snapshots.front())
      << "segments before the snapshot remain";
  EXPECT_TRUE(files.temp_files.empty());

  expect_restart_sees_model();
  expect_restart_sees_model();  // and again: the restart itself changed nothing
}

TEST_F(CompactionTest, SnapshotMayAlreadyContainChangesAppendedAfterItsCut) {
  // The lock table applies an operation, then reports its changes one by one: the snapshot
  // taken at the first of them already shows the second (release + hand-off to a waiter).
  options_.snapshot_threshold_bytes = 1;  // ask for a snapshot at every append
  auto store = open_with_source();
  std::uint64_t token = 1;
  std::mt19937 rng(7);
  append_all(*store, {Granted{make_hold("k", token)}});
  for (int i = 0; i < 300; ++i) {
    const std::uint64_t next = token + 1;
    const Change release = Released{"k", token};
    const Change hand_off = Granted{make_hold("k", next, kStart + 60'000 + i)};
    model_.apply(release);
    model_.apply(hand_off);
    store->append(release);
    if (rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
    store->append(hand_off);
    token = next;
  }
  ASSERT_TRUE(testing::wait_durable(*store, 601));
  store->close();
  EXPECT_GT(store->stats().snapshots, 0u);
  expect_restart_sees_model();
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok());
  ASSERT_EQ(state->holds.size(), 1u);
  EXPECT_EQ(state->holds[0].token, token);
}

TEST_F(CompactionTest, CrashAtAnyMomentOfACompactionLosesNothing) {
  auto store = open_with_source();
  std::uint64_t token = 0;
  // Crash images taken while snapshots and compactions run, each compared with the state
  // that was durable when the image was taken.
  for (int round = 0; round < 30; ++round) {
    churn(*store, 20, token);
    const std::uint64_t last = append(*store, Granted{make_hold("r", ++token)});
    ASSERT_TRUE(testing::wait_durable(*store, last));
    const DurableState expected = model_.after_restart(kStart);
    auto image = fs_.image_after(FakeFileSystem::Crash::kPowerLoss);
    Result<DurableState> state = restart(image.get());
    ASSERT_TRUE(state.ok()) << "round " << round << ": " << state.error().message;
    // Later changes may already be in the image too, but nothing before `last` may be lost;
    // with the syncer idle, the image holds exactly the durable state.
    testing::expect_same_state(*state, expected);
  }
}

TEST_F(CompactionTest, CommitsGoOnWhileASnapshotIsWrittenAndCompactionWaitsForIt) {
  fs_.block_syncs(".snap.tmp");  // the snapshot writer stops at its fdatasync
  auto store = open_with_source();
  std::uint64_t token = 0;
  churn(*store, 200, token, /*wait=*/true);  // passes the threshold: a snapshot starts
  ASSERT_TRUE(fs_.wait_for_blocked_syncs(1, std::chrono::seconds(10)));

  // Commits do not wait for the snapshot being written...
  churn(*store, 100, token, /*wait=*/true);
  const std::uint64_t last = append(*store, Granted{make_hold("during", ++token)});
  ASSERT_TRUE(testing::wait_durable(*store, last));
  // ...and nothing is compacted before it is durable: a power loss now keeps every segment.
  EXPECT_EQ(store->stats().snapshots, 0u);
  const DirListing during = listing();
  EXPECT_TRUE(during.snapshots.empty());
  ASSERT_FALSE(during.segments.empty());
  EXPECT_EQ(during.segments.front(), 1u);
  expect_restart_sees_model(fs_.image_after(FakeFileSystem::Crash::kPowerLoss).get());

  fs_.unblock_syncs();
  ASSERT_TRUE(testing::eventually([&] { return store->stats().snapshots >= 1; }));
  const DirListing after = listing();
  ASSERT_EQ(after.snapshots.size(), 1u);
  EXPECT_GE(after.segments.front(), after.snapshots.front()) << "segments before it remain";
  EXPECT_GT(after.snapshots.front(), 1u);
  store->close();
  expect_restart_sees_model();
}

TEST_F(CompactionTest, CloseWaitsForTheSnapshotBeingWritten) {
  fs_.set_sync_delay(std::chrono::microseconds(200));
  auto store = open_with_source();
  std::uint64_t token = 0;
  churn(*store, 60, token);  // one burst past the threshold, then close at once
  store->close();
  EXPECT_EQ(store->stats().snapshots, 1u);
  const DirListing files = listing();
  ASSERT_EQ(files.snapshots.size(), 1u);
  EXPECT_GE(files.segments.front(), files.snapshots.front());
  EXPECT_TRUE(files.temp_files.empty());
  expect_restart_sees_model(fs_.image_after(FakeFileSystem::Crash::kPowerLoss).get());
}

TEST_F(CompactionTest, FailedSnapshotWriteIsSkippedAndCompactsNothing) {
  expect_a_failed_snapshot_write_is_skipped();
}

TEST_F(CompactionTest, FailedWriteOfAChildsSnapshotIsSkipped) {
  options_.encode_snapshots_in_child = true;
  expect_a_failed_snapshot_write_is_skipped();
}

TEST_F(CompactionTest, SnapshotsEncodedInAChildRestoreTheSameState) {
  options_.encode_snapshots_in_child = true;
  auto store = open_with_source();
  std::uint64_t token = 0;
  churn(*store, 1000, token, /*wait=*/true);
  append_all(*store, {RuleSetPut{"locks", "rules"}});
  // A threshold reached while a child is still encoding is skipped, so how many snapshots a
  // fixed amount of churn takes depends on the host's speed: churn on until two more have been
  // taken after the rule set, which the last of them must carry.
  const std::uint64_t before_rules = store->stats().snapshots;
  ASSERT_TRUE(testing::eventually([&] {
    churn(*store, 50, token, /*wait=*/true);
    return store->stats().snapshots >= before_rules + 2 && store->stats().snapshots > 2;
  }));
  store->close();
  EXPECT_GT(store->stats().snapshots, 2u);
  ASSERT_EQ(listing().snapshots.size(), 1u);
  expect_restart_sees_model();
}

// A state of fewer holds than encode_in_child_from_holds is encoded on the loop; from there on,
// in a child. Either way the snapshot restores the same state.
TEST_F(CompactionTest, ASmallStateIsEncodedOnTheLoopALargeOneInAChild) {
  options_.encode_snapshots_in_child = true;
  options_.encode_in_child_from_holds = 100;
  auto store = open_with_source();
  std::size_t holds = 99;
  store->set_state_size([&] { return holds; });
  std::uint64_t token = 0;
  ASSERT_TRUE(testing::eventually([&] {
    churn(*store, 50, token, /*wait=*/true);
    return store->stats().snapshots > 0;
  }));
  EXPECT_EQ(store->stats().snapshots_in_child, 0u);
  holds = 100;
  const std::uint64_t before = store->stats().snapshots;
  ASSERT_TRUE(testing::eventually([&] {
    churn(*store, 50, token, /*wait=*/true);
    return store->stats().snapshots > before;
  }));
  EXPECT_GT(store->stats().snapshots_in_child, 0u);
  store->close();
  expect_restart_sees_model();
}

TEST_F(CompactionTest, AChildThatFailsSkipsItsSnapshotAndALaterOneIsTaken) {
  options_.encode_snapshots_in_child = true;
  std::atomic<bool> children_fail{true};
  auto store = open();
  store->set_state_source([&](StateSink& sink) {
    if (children_fail) ::_exit(1);  // runs in the child only
    hand_over(model_.live(), sink);
  });
  std::uint64_t token = 0;
  churn(*store, 300, token, /*wait=*/true);  // past the threshold: every snapshot is skipped
  ASSERT_TRUE(testing::eventually([&] { return store->stats().snapshots_skipped > 0; }));
  EXPECT_EQ(store->stats().snapshots, 0u);
  EXPECT_TRUE(listing().snapshots.empty());
  EXPECT_EQ(listing().segments.front(), 1u) << "nothing compacted without a snapshot";
  expect_restart_sees_model(fs_.image_after(FakeFileSystem::Crash::kPowerLoss).get());

  // A child forked before the switch may still be failing; the first threshold after it has
  // been given up forks one that succeeds.
  children_fail = false;
  ASSERT_TRUE(testing::eventually([&] {
    churn(*store, 10, token, /*wait=*/true);
    return store->stats().snapshots > 0;
  }));
  store->close();
  ASSERT_EQ(listing().snapshots.size(), 1u);
  EXPECT_GT(listing().segments.front(), 1u);
  expect_restart_sees_model();
}

// The lock table appends a release before it frees the key. A snapshot taken at that append
// would show the key held while the release sits before the cut, and compaction would then
// delete the only record of it: snapshots are taken at submit(), between operations.
class SnapshotBetweenOperations : public CompactionTest,
                                  public ::testing::WithParamInterface<bool> {};

TEST_P(SnapshotBetweenOperations, AChangeAppendedBeforeTheTableAppliesItIsNotLost) {
  options_.encode_snapshots_in_child = GetParam();
  options_.snapshot_threshold_bytes = std::uint64_t{1} << 30;
  auto store = open_with_source();
  std::uint64_t token = 0;
  for (int i = 0; i < 20; ++i) append(*store, Granted{make_hold("k" + std::to_string(i), ++token)});
  const StoreStats before = store->stats();
  store->close();
  options_.snapshot_threshold_bytes = 1;  // the next append is past the threshold
  store = open_with_source();
  for (int i = 0; i < 20; ++i) {
    // As the lock table does: append the release, then apply it, then the loop submits.
    const Released release{"k" + std::to_string(i), static_cast<std::uint64_t>(i + 1)};
    const std::uint64_t sequence = store->append(release);
    model_.apply(release);
    store->submit();
    ASSERT_TRUE(testing::wait_durable(*store, sequence));
    ASSERT_TRUE(testing::eventually([&] { return !store->stats().snapshot_in_progress; }));
  }
  store->close();
  EXPECT_GT(store->stats().snapshots, before.snapshots);
  ASSERT_EQ(listing().snapshots.size(), 1u);
  EXPECT_GT(listing().segments.front(), 2u) << "the releases' segments were compacted away";
  expect_restart_sees_model();
}

INSTANTIATE_TEST_SUITE_P(OnTheLoopOrInAChild, SnapshotBetweenOperations, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "InAChild" : "OnTheLoop"; });

TEST_F(CompactionTest, InterruptedCompactionLeftoversAreIgnoredAndCleanedUp) {
  auto store = open_with_source();
  std::uint64_t token = 0;
  churn(*store, 400, token);
  append_all(*store, {Granted{make_hold("z", ++token)}});
  store->close();
  const DirListing before = listing();
  ASSERT_EQ(before.snapshots.size(), 1u);
  const std::uint64_t snap = before.snapshots.front();
  // A segment the compaction did not get to delete, an older snapshot, a half-written one.
  fs_.set_contents(segment_path(snap - 1), "garbage that is never read");
  fs_.set_contents(snapshot_path(snap - 1), "an older, damaged snapshot");
  fs_.set_contents(snapshot_path(snap + 50) + ".tmp", "half a snapshot");
  expect_restart_sees_model();
  const DirListing after = listing();
  EXPECT_EQ(after.snapshots, std::vector<std::uint64_t>{snap});
  EXPECT_GE(after.segments.front(), snap);
  EXPECT_TRUE(after.temp_files.empty());
}

TEST_F(CompactionTest, DamagedSnapshotWithoutItsOldSegmentsRefusesToStart) {
  auto store = open_with_source();
  std::uint64_t token = 0;
  churn(*store, 400, token);
  store->close();
  const std::uint64_t snap = listing().snapshots.front();
  std::string bytes = *fs_.contents(snapshot_path(snap));
  bytes[bytes.size() / 2] ^= 0x40;
  fs_.set_contents(snapshot_path(snap), bytes);
  Result<DurableState> state = restart();
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find(snapshot_path(snap)), std::string::npos)
      << state.error().message;
  EXPECT_NE(state.error().message.find("checksum"), std::string::npos);
}

TEST_F(CompactionTest, DamagedNewestSnapshotFallsBackToAnOlderOneWithAllItsSegments) {
  options_.snapshot_threshold_bytes = std::uint64_t{1} << 30;  // no automatic snapshots
  auto store = open_with_source();
  std::uint64_t token = 0;
  churn(*store, 100, token);
  store->close();
  // Hand-made: a good snapshot covering nothing (the log starts at 1) and a damaged newer one.
  ASSERT_TRUE(write_snapshot(fs_, kDir, 1, DurableState{}).ok());
  fs_.set_contents(snapshot_path(3), "damaged");
  expect_restart_sees_model();
}

}  // namespace
}  // namespace holdfast::wal
