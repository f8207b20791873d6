// WalStore recovery on the in-memory file system: what comes back after a restart, torn
// tails, corruption, crashes at awkward moments, and the data dir lock.
#include <gtest/gtest.h>

#include <unistd.h>

#include "store/wal/log_reader.h"
#include "store/wal/snapshot.h"
#include "wal_store_fixture.h"

namespace holdfast::wal {
namespace {

using testing::every_kind_of_change;
using testing::kDir;
using testing::kStart;
using testing::make_assigned;
using testing::make_hold;
using testing::segment_path;
using testing::WalStoreTest;

using RecoveryTest = WalStoreTest;

TEST_F(RecoveryTest, FreshDataDirRecoversNothing) {
  auto store = open();
  EXPECT_EQ(recovered_.last_token, 0u);
  EXPECT_TRUE(recovered_.holds.empty());
  EXPECT_FALSE(recovered_.rule_set);
  EXPECT_TRUE(fs_.exists("/data/LOCK"));
  EXPECT_EQ(fs_.contents(segment_path(1)), std::string(kSegmentMagic));
  EXPECT_EQ(store->durable_sequence(), 0u);
}

TEST_F(RecoveryTest, EveryChangeKindSurvivesARestart) {
  auto store = open();
  append_all(*store, every_kind_of_change());
  append_all(*store, {Granted{make_hold("x", 20)}, RuleSetPut{"locks", "v2"},
                      Renewed{"x", 20, kStart + 500'000}});
  store->close();
  expect_restart_sees_model();
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok());
  ASSERT_EQ(state->holds.size(), 2u);  // shard/9 (assigned, no TTL) and x
  EXPECT_EQ(state->rule_set->toml, "v2");
}

TEST_F(RecoveryTest, SessionHoldsAndEndedLeasesAreDroppedButTheirTokensCount) {
  auto store = open();
  append_all(*store,
             {Granted{make_hold("long", 1, kStart + 60'000)},
              Granted{make_hold("short", 2, kStart + 10'000)}, Granted{make_assigned("forever", 3)},
              Granted{make_hold("session", 9, kStart + 60'000, Scope::kSession)},
              Granted{make_hold("released", 12)}, Released{"released", 12}});
  store->close();
  clock_.advance(20'000);
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->last_token, 12u);
  const auto holds = testing::sorted_holds(state->holds);
  ASSERT_EQ(holds.size(), 2u);
  EXPECT_EQ(holds[0].key, "forever");
  EXPECT_EQ(holds[1].key, "long");

  clock_.advance(40'000);  // exactly at the end of "long": ended
  state = restart();
  ASSERT_TRUE(state.ok());
  ASSERT_EQ(state->holds.size(), 1u);
  EXPECT_EQ(state->holds[0].key, "forever");
  EXPECT_EQ(state->last_token, 12u);
}

TEST_F(RecoveryTest, SequenceNumbersStartAtOneInEveryProcessAndTheLogGoesOn) {
  auto store = open();
  EXPECT_EQ(store->append(Granted{make_hold("a", 1)}), 1u);
  EXPECT_EQ(store->append(Granted{make_hold("b", 2)}), 2u);
  store->close();
  store = open();
  EXPECT_EQ(recovered_.holds.size(), 2u);
  EXPECT_EQ(append(*store, Released{"a", 1}), 1u);
  ASSERT_TRUE(testing::wait_durable(*store, 1));
  store->close();
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok());
  ASSERT_EQ(state->holds.size(), 1u);
  EXPECT_EQ(state->holds[0].key, "b");
}

TEST_F(RecoveryTest, TornTailOfEveryLengthOfTheLastRecordIsTruncated) {
  auto store = open();
  append_all(*store, {Granted{make_hold("a", 1)}, Granted{make_hold("b", 2)}, Released{"a", 1}});
  const DurableState before_last = model_.after_restart(kStart);
  const std::size_t intact = fs_.contents(segment_path(1))->size();
  append_all(*store, {Granted{make_hold("c", 3, kStart + 1'000)}});
  store->close();
  const std::string full = *fs_.contents(segment_path(1));
  ASSERT_GT(full.size(), intact + kFrameHeaderSize);

  for (std::size_t end = intact + 1; end < full.size(); ++end) {
    FakeFileSystem disk;
    ASSERT_TRUE(disk.create_dir(kDir).ok());
    disk.set_contents(segment_path(1), full.substr(0, end));
    auto reopened = make(&disk);
    Result<DurableState> state = reopened->recover();
    ASSERT_TRUE(state.ok()) << "cut at " << end << ": " << state.error().message;
    testing::expect_same_state(*state, before_last);
    EXPECT_EQ(disk.contents(segment_path(1))->size(), intact) << "torn tail not truncated";
    EXPECT_TRUE(disk.exists(segment_path(2)));
    // The log goes on after the cut.
    const std::uint64_t seq = reopened->append(Granted{make_hold("d", 4)});
    ASSERT_TRUE(testing::wait_durable(*reopened, seq));
    reopened->close();
    Result<DurableState> again = restart(&disk);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->holds.size(), before_last.holds.size() + 1);
    EXPECT_EQ(again->last_token, 4u);
  }
}

TEST_F(RecoveryTest, FlippedByteInTheMiddleRefusesToStartAndNamesFileAndOffset) {
  auto store = open();
  append_all(*store, {Granted{make_hold("a", 1)}});
  const std::size_t second = fs_.contents(segment_path(1))->size();
  append_all(*store, {Granted{make_hold("b", 2)}});
  append_all(*store, {Granted{make_hold("c", 3)}});
  store->close();
  std::string bytes = *fs_.contents(segment_path(1));
  bytes[second + kFrameHeaderSize + 3] ^= 0x10;
  fs_.set_contents(segment_path(1), bytes);

  Result<DurableState> state = restart();
  ASSERT_FALSE(state.ok());
  const std::string& message = state.error().message;
  EXPECT_NE(message.find(segment_path(1)), std::string::npos) << message;
  EXPECT_NE(message.find("at offset " + std::to_string(second)), std::string::npos) << message;
  EXPECT_NE(message.find("refusing to start"), std::string::npos) << message;
  EXPECT_EQ(*fs_.contents(segment_path(1)), bytes) << "a refused log must be left as it was";
  EXPECT_FALSE(fs_.exists(segment_path(2)));
  // The lock was given back: fixing the file is enough to start.
  bytes[second + kFrameHeaderSize + 3] ^= 0x10;
  fs_.set_contents(segment_path(1), bytes);
  expect_restart_sees_model();
}

TEST_F(RecoveryTest, CorruptionInAnOlderSegmentRefusesToStart) {
  options_.segment_bytes = 1;  // every commit starts a new segment
  auto store = open();
  for (std::uint64_t t = 1; t <= 4; ++t) append_all(*store, {Granted{make_hold("k", t)}});
  store->close();
  std::string bytes = *fs_.contents(segment_path(2));
  bytes.back() ^= 0x01;
  fs_.set_contents(segment_path(2), bytes);
  Result<DurableState> state = restart();
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find(segment_path(2)), std::string::npos);
}

TEST_F(RecoveryTest, MissingSegmentRefusesToStart) {
  options_.segment_bytes = 1;
  auto store = open();
  for (std::uint64_t t = 1; t <= 3; ++t) append_all(*store, {Granted{make_hold("k", t)}});
  store->close();
  ASSERT_TRUE(fs_.remove_file(segment_path(2)).ok());
  Result<DurableState> state = restart();
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find(segment_path(2) + " is missing"), std::string::npos)
      << state.error().message;

  ASSERT_TRUE(fs_.remove_file(segment_path(1)).ok());  // now the log starts at 3
  state = restart();
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find(segment_path(1) + " is missing"), std::string::npos)
      << state.error().message;
}

TEST_F(RecoveryTest, KillDuringASyncKeepsWhatWasWrittenAndPowerLossKeepsWhatWasSynced) {
  auto store = open();
  std::vector<Change> first;
  for (std::uint64_t t = 1; t <= 10; ++t)
    first.emplace_back(std::in_place_type<Granted>, make_hold("k" + std::to_string(t), t));
  append_all(*store, first);
  const DurableState durable = model_.after_restart(kStart);

  fs_.block_syncs();
  std::uint64_t last = 0;
  for (std::uint64_t t = 11; t <= 15; ++t)
    last = append(*store, Granted{make_hold("k" + std::to_string(t), t)});
  ASSERT_TRUE(fs_.wait_for_blocked_syncs(1, std::chrono::seconds(10)));
  EXPECT_LT(store->durable_sequence(), last);

  auto power_loss = fs_.image_after(FakeFileSystem::Crash::kPowerLoss);
  Result<DurableState> after_power_loss = restart(power_loss.get());
  ASSERT_TRUE(after_power_loss.ok()) << after_power_loss.error().message;
  // Everything acknowledged is there; what was in flight may or may not be.
  for (const HoldState& h : durable.holds)
    EXPECT_NE(std::find(after_power_loss->holds.begin(), after_power_loss->holds.end(), h),
              after_power_loss->holds.end())
        << h.key;

  fs_.unblock_syncs();
  ASSERT_TRUE(testing::wait_durable(*store, last));
  auto killed = fs_.image_after(FakeFileSystem::Crash::kKill);
  store->close();
  expect_restart_sees_model(killed.get());
}

// With preallocated segments (fsync always): reserved space is the end of the log, a crash
// inside it loses only the write in flight, and every older segment is cut to its frames.
TEST_F(RecoveryTest, PreallocatedSegmentsSurvivePowerLossTornWritesAndRolls) {
  options_.preallocate_segments = true;
  options_.segment_bytes = 2048;
  auto store = open();
  EXPECT_EQ(fs_.contents(segment_path(1))->size(), kReserveChunkBytes) << "no zeros ahead";
  std::uint64_t token = 0;
  for (int batch = 0; batch < 12; ++batch) {  // several rolls
    std::vector<Change> changes;
    for (int i = 0; i < 4; ++i, ++token)
      changes.push_back(Granted{make_hold("k" + std::to_string(token % 9), token + 1)});
    append_all(*store, changes);
  }
  std::uint64_t newest = 1;
  while (fs_.exists(segment_path(newest + 1))) ++newest;
  ASSERT_GT(newest, 2u);
  for (std::uint64_t n = 1; n < newest; ++n) {  // older segments end with their last frame
    const std::string older = *fs_.contents(segment_path(n));
    Result<SegmentScan> scan =
        read_segment(older, segment_path(n), SegmentPosition::kOlder, [](Change&&) {});
    ASSERT_TRUE(scan.ok()) << scan.error().message;
    EXPECT_EQ(scan->valid_bytes, older.size()) << "segment " << n << " kept reserved space";
  }
  const DurableState durable = model_.after_restart(kStart);

  // A write in flight when the power went: one of its sectors never reached the disk.
  fs_.block_syncs();
  const std::string before = *fs_.contents(segment_path(newest));
  // Where the last intact frame ends (not the last non-zero byte: a frame may end in zeros).
  Result<SegmentScan> scanned =
      read_segment(before, segment_path(newest), SegmentPosition::kNewest, [](Change&&) {});
  ASSERT_TRUE(scanned.ok()) << scanned.error().message;
  const std::uint64_t frame = scanned->valid_bytes;
  append(*store, RuleSetPut{"in-flight", std::string(1200, 'x')});
  ASSERT_TRUE(fs_.wait_for_blocked_syncs(1, std::chrono::seconds(10)));
  auto image = fs_.image_after(FakeFileSystem::Crash::kKill);
  std::string torn = *image->contents(segment_path(newest));
  const std::uint64_t sector = testing::next_sector(frame);
  ASSERT_LT(sector + kTornWriteSector, torn.find_last_not_of('\0'));
  testing::zero_range(torn, sector, sector + kTornWriteSector);
  image->set_contents(segment_path(newest), torn);
  Result<DurableState> state = restart(image.get());
  ASSERT_TRUE(state.ok()) << state.error().message;
  testing::expect_same_state(*state, durable);
  EXPECT_EQ(image->contents(segment_path(newest))->size(), frame) << "torn write not cut off";

  // Without the damage, the same image keeps the write too (it reached the page cache).
  fs_.unblock_syncs();
  store->close();
  expect_restart_sees_model();
}

TEST_F(RecoveryTest, SecondServerOnTheSameDataDirRefuses) {
  auto first = open();
  auto second = make();
  Result<DurableState> state = second->recover();
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().message, "data dir /data is in use by another holdfast server (pid " +
                                       std::to_string(::getpid()) + ")");
  EXPECT_EQ(state.error().code, ErrorCode::kUnavailable);
  first->close();
  auto third = make();
  EXPECT_TRUE(third->recover().ok()) << "close() must release the lock";
}

TEST_F(RecoveryTest, DestructorReleasesTheLockAndCommitsPendingChanges) {
  {
    auto store = open();
    for (std::uint64_t t = 1; t <= 100; ++t)
      append(*store, Granted{make_hold("k" + std::to_string(t), t)});
  }
  expect_restart_sees_model();
}

TEST_F(RecoveryTest, RecoverTwiceIsAnErrorAndCloseIsIdempotent) {
  auto store = open();
  EXPECT_FALSE(store->recover().ok());
  store->close();
  store->close();
  EXPECT_FALSE(store->recover().ok());
}

TEST_F(RecoveryTest, EmptyNewestSegmentLeftByACrashIsReused) {
  auto store = open();
  append_all(*store, {Granted{make_hold("a", 1)}});
  store->close();
  fs_.set_contents(segment_path(3), "HFW");  // a crash while starting segment 3
  fs_.set_contents(segment_path(2), std::string(kSegmentMagic));
  store = open();
  EXPECT_EQ(recovered_.holds.size(), 1u);
  EXPECT_EQ(fs_.contents(segment_path(3)), std::string(kSegmentMagic));
  EXPECT_FALSE(fs_.exists(segment_path(4)));
  append_all(*store, {Granted{make_hold("b", 2)}});
  store->close();
  expect_restart_sees_model();
}

TEST_F(RecoveryTest, MillionHoldSnapshotWithALogTailRecoversExactly) {
  constexpr std::uint64_t kHolds = 1'000'000;
  DurableState snapshot;
  snapshot.last_token = kHolds;
  snapshot.holds.reserve(kHolds);
  for (std::uint64_t i = 0; i < kHolds; ++i)  // odd ones have ended by the restart
    snapshot.holds.push_back(
        make_hold("key/" + std::to_string(i), i + 1, i % 2 == 0 ? kStart + 60'000 : kStart - 1));
  ASSERT_TRUE(write_snapshot(fs_, kDir, 1, snapshot).ok());
  snapshot = DurableState{};
  auto store = open();
  ASSERT_EQ(recovered_.holds.size(), kHolds / 2);
  EXPECT_EQ(recovered_.last_token, kHolds);
  const std::uint64_t t = 2 * kHolds;
  append_all(*store, {Released{"key/0", 1}, Granted{make_hold("key/2", t)},
                      Renewed{"key/4", 5, kStart + 99'000}, Granted{make_hold("new", t + 1)},
                      Granted{make_hold("key/1", t + 2)}, Released{"key/7", 8},
                      Granted{make_hold("key/6", 3)} /* stale: key/6 holds token 7 */});
  store->close();

  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->last_token, t + 2);
  ASSERT_EQ(state->holds.size(), kHolds / 2 + 1);
  std::map<std::string, HoldState> by_key;
  for (HoldState& h : state->holds) by_key.emplace(h.key, std::move(h));
  EXPECT_FALSE(by_key.contains("key/0"));
  EXPECT_EQ(by_key.at("key/2").token, t);
  EXPECT_EQ(by_key.at("key/4").lease_expires_at, kStart + 99'000);
  EXPECT_EQ(by_key.at("new").token, t + 1);
  EXPECT_EQ(by_key.at("key/1").token, t + 2);
  EXPECT_EQ(by_key.at("key/6").token, 7u);
  EXPECT_FALSE(by_key.contains("key/3"));
  EXPECT_EQ(by_key.at("key/999998"), make_hold("key/999998", 999'999, kStart + 60'000));
}

}  // namespace
}  // namespace holdfast::wal
