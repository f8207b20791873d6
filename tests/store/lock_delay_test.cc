// Lock-delay on disk (docs/wal-format.md): a hold's delay rides in its record (segment
// version 4, snapshot version 3) and a hold without one is written byte for byte as before;
// older segments and snapshots are still read; a hold whose lease ended while its delay runs
// survives recovery, so the lock table can keep the key closed until the same instant.
#include <gtest/gtest.h>

#include "core/lock_table.h"
#include "store/wal/horizon.h"
#include "store/wal/log_reader.h"
#include "store/wal/record.h"
#include "store/wal/snapshot.h"
#include "wal_store_fixture.h"

namespace holdfast::wal {
namespace {

using testing::kDir;
using testing::kStart;
using testing::make_hold;
using testing::round_trip;
using testing::snapshot_path;
using testing::WalStoreTest;

HoldState delayed_hold(std::string key, std::uint64_t token, Millis expires, Millis delay) {
  HoldState h = make_hold(std::move(key), token, expires);
  h.lock_delay_ms = delay;
  return h;
}

TEST(LockDelayRecords, AGrantWithADelayRoundTripsAloneAndWithAMode) {
  HoldState shared = delayed_hold("k", 5, kStart + 1000, 60'000);
  shared.mode = LockMode::kSemaphore;
  shared.take = 2;
  shared.permits = 3;
  for (const HoldState& h : {delayed_hold("k", 4, kStart + 1000, 1), shared}) {
    Result<Change> back = round_trip(Granted{h});
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(std::get<Granted>(*back).hold, h);
  }
}

TEST(LockDelayRecords, AHoldWithoutADelayIsEncodedExactlyAsBefore) {
  const HoldState h = make_hold("k", 4);
  std::string bytes;
  append_hold(bytes, h);
  EXPECT_EQ(bytes.size(), kMinHoldSize + h.key.size() + h.held_by.size() + h.owner.size());
  std::string delayed;
  append_hold(delayed, delayed_hold("k", 4, h.lease_expires_at, 250));
  EXPECT_EQ(delayed.size(), bytes.size() + kHoldDelaySize);
}

TEST(LockDelayRecords, ADelayOutsideTheAcceptedRangeIsAnError) {
  for (std::uint32_t bad : {0u, static_cast<std::uint32_t>(kMaxLockDelayMs + 1)}) {
    std::string bytes;
    append_record(bytes, Granted{delayed_hold("k", 4, kStart, 100)});
    const auto* raw = reinterpret_cast<const unsigned char*>(&bad);
    bytes.replace(bytes.size() - 4, 4, reinterpret_cast<const char*>(raw), 4);  // little-endian
    std::string_view rest = bytes;
    Result<RecordView> view = next_record(rest);
    ASSERT_TRUE(view.ok());
    EXPECT_FALSE(decode_record(view->type, view->payload).ok()) << bad;
  }
}

TEST(LockDelayRecords, AVersionThreeSegmentIsStillRead) {
  std::string records;
  append_record(records, Granted{make_hold("k", 1)});
  const std::vector<Change> changes = testing::read_segment_of(kSegmentMagicV3, records);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(std::get<Granted>(changes[0]).hold, make_hold("k", 1));
}

TEST(LockDelaySnapshots, HoldsWithDelaysRoundTripAndAVersionTwoSnapshotIsStillRead) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  DurableState state;
  state.last_token = 9;
  state.holds = {make_hold("x", 3), delayed_hold("k", 4, kStart + 5000, 700)};
  ASSERT_TRUE(write_snapshot(fs, kDir, 2, state).ok());
  std::string bytes = *fs.contents(snapshot_path(2));
  EXPECT_EQ(bytes.substr(0, kSnapshotHeaderSize), kSnapshotMagic);
  Result<Snapshot> snap = decode_snapshot(bytes, snapshot_path(2), 2);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->state.holds, state.holds);

  state.holds = {make_hold("x", 3)};
  ASSERT_TRUE(write_snapshot(fs, kDir, 3, state).ok());
  bytes = *fs.contents(snapshot_path(3));
  bytes = testing::older_snapshot(bytes, kSnapshotMagicV2);
  snap = decode_snapshot(bytes, snapshot_path(3), 3);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->state.holds, state.holds);
}

// The horizon mode (docs/horizon.md): a quarantine after an unclean stop must also cover the
// delays, so once a hold with one is granted every lease end counts the longest delay.
TEST(LockDelayHorizon, TheHorizonCoversTheLeaseEndPlusTheLongestDelay) {
  HorizonKeeper keeper(HorizonOptions{1'000, 500, 100});
  keeper.start(DurableState{});
  const Millis now = kStart;
  auto first = keeper.classify(Granted{delayed_hold("k", 1, now + 10'000, 30'000)}, now, 0);
  ASSERT_TRUE(first.record);
  EXPECT_TRUE(first.wait_for_sync);
  EXPECT_EQ(first.record->until, now + 10'000 + 30'000 + 1'000);
  keeper.appended(*first.record, 1);
  // A renewal of the same lease length, whose record does not name a delay, asks for as much.
  const Millis later = now + 20'000;
  auto renewed = keeper.classify(Renewed{"k", 1, later + 10'000}, later, 2);
  ASSERT_TRUE(renewed.record);
  EXPECT_EQ(renewed.record->until, later + 10'000 + 30'000 + 1'000);
}

using LockDelayRecoveryTest = WalStoreTest;

// The table's changes go to the store as the server sends them; a restart during the delay
// (from the log, then from a snapshot taken during it) keeps the key closed to the same instant.
TEST_F(LockDelayRecoveryTest, ARestartDuringTheDelayKeepsTheKeyClosedUntilTheSameInstant) {
  auto store = open();
  testing::ForwardToStore forward(*store);
  LockTable table(&forward);
  AcquireRequest r;
  r.key = "k";
  r.ttl_ms = 1'000;
  r.held_by = "user:a";
  r.session = 1;
  r.lock_delay_ms = 5'000;
  auto granted = table.acquire(r, clock_.now_ms());
  ASSERT_TRUE(granted.ok());
  const Millis opens = granted->hold.lease_expires_at + 5'000;
  ASSERT_TRUE(testing::wait_durable(*store, forward.last));
  store->close();

  clock_.advance(2'000);  // the lease ended 1 s ago; the delay runs 4 s more
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  ASSERT_EQ(state->holds.size(), 1u);
  LockTable restored;
  restored.restore(*state, clock_.now_ms());
  EXPECT_FALSE(restored.status("k", clock_.now_ms())->held);
  EXPECT_EQ(restored.status("k", clock_.now_ms())->lock_delay_until, opens);

  // A snapshot taken now carries the running delay; recovered from it alone, the same.
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  ASSERT_TRUE(write_snapshot(fs, kDir, 7, restored.snapshot(clock_.now_ms())).ok());
  Result<Snapshot> snap = decode_snapshot(*fs.contents(snapshot_path(7)), snapshot_path(7), 7);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  LockTable again;
  again.restore(snap->state, clock_.now_ms());
  EXPECT_EQ(again.status("k", clock_.now_ms())->lock_delay_until, opens);
  EXPECT_EQ(again.acquire(r, opens - 1)->kind, AcquireOutcome::Kind::kContended);
  EXPECT_EQ(again.acquire(r, opens)->kind, AcquireOutcome::Kind::kGranted);

  clock_.advance(4'000);  // the delay is over: nothing of the hold comes back
  state = restart();
  ASSERT_TRUE(state.ok());
  EXPECT_TRUE(state->holds.empty());
}

}  // namespace
}  // namespace holdfast::wal
