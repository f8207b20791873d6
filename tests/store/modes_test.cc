// Shared and semaphore holds on disk: their records and snapshots carry the mode, exclusive
// holds are written byte for byte as before, older segments and snapshots are still read, and
// the holds come back after a restart.
#include <gtest/gtest.h>

#include "core/lock_table.h"
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
using testing::segment_path;
using testing::snapshot_path;
using testing::wait_durable;
using testing::WalStoreTest;

HoldState make_share(std::string key, std::uint64_t token, LockMode mode, std::uint32_t take = 0,
                     std::uint32_t permits = 0) {
  HoldState h = make_hold(std::move(key), token);
  h.mode = mode;
  h.take = take;
  h.permits = permits;
  return h;
}

TEST(ModeRecords, SharedAndSemaphoreGrantsRoundTrip) {
  for (const HoldState& h :
       {make_share("k", 4, LockMode::kShared), make_share("s", 5, LockMode::kSemaphore, 2, 8)}) {
    Result<Change> back = round_trip(Granted{h});
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(std::get<Granted>(*back).hold, h);
  }
}

TEST(ModeRecords, AnExclusiveHoldIsEncodedExactlyAsBefore) {
  const HoldState h = make_hold("k", 4);
  std::string bytes;
  append_hold(bytes, h);
  EXPECT_EQ(bytes.size(), kMinHoldSize + h.key.size() + h.held_by.size() + h.owner.size());
  EXPECT_EQ(static_cast<std::uint8_t>(bytes.back()), 0);  // kind: handle, no mode follows
}

TEST(ModeRecords, AnUnknownModeIsAnError) {
  std::string bytes;
  append_record(bytes, Granted{make_share("k", 4, LockMode::kShared)});
  bytes[bytes.size() - 9] = 7;  // the mode byte
  std::string_view rest = bytes;
  Result<RecordView> view = next_record(rest);
  ASSERT_TRUE(view.ok());
  EXPECT_FALSE(decode_record(view->type, view->payload).ok());
}

TEST(ModeRecords, AVersionTwoSegmentIsStillRead) {
  std::string records;
  append_record(records, Granted{make_hold("k", 1)});
  const std::vector<Change> changes = testing::read_segment_of(kSegmentMagicV2, records);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(std::get<Granted>(changes[0]).hold, make_hold("k", 1));
}

TEST(ModeSnapshots, SharedAndSemaphoreHoldsRoundTrip) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  DurableState state;
  state.last_token = 9;
  state.holds = {make_hold("x", 3), make_share("k", 4, LockMode::kShared),
                 make_share("k", 5, LockMode::kShared),
                 make_share("s", 6, LockMode::kSemaphore, 3, 4)};
  ASSERT_TRUE(write_snapshot(fs, kDir, 2, state).ok());
  const std::string bytes = *fs.contents(snapshot_path(2));
  EXPECT_EQ(bytes.substr(0, kSnapshotHeaderSize), kSnapshotMagic);
  Result<Snapshot> snap = decode_snapshot(bytes, snapshot_path(2), 2);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->state.holds, state.holds);
}

TEST(ModeSnapshots, AVersionOneSnapshotIsStillRead) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  DurableState state;
  state.last_token = 9;
  state.holds = {make_hold("x", 3)};
  ASSERT_TRUE(write_snapshot(fs, kDir, 2, state).ok());
  std::string bytes = *fs.contents(snapshot_path(2));
  bytes = testing::older_snapshot(bytes, kSnapshotMagicV1);
  Result<Snapshot> snap = decode_snapshot(bytes, snapshot_path(2), 2);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->state.holds, state.holds);
}

using ModeRecoveryTest = WalStoreTest;

TEST_F(ModeRecoveryTest, SharedAndSemaphoreHoldsSurviveARestartIntoTheLockTable) {
  auto store = open();
  testing::ForwardToStore forward(*store);
  LockTable table(&forward);
  auto req = [](std::string_view key, std::string_view who, LockMode mode) {
    AcquireRequest r;
    r.key = key;
    r.ttl_ms = 60'000;
    r.held_by = who;
    r.session = 1;
    r.mode = mode;
    if (mode == LockMode::kSemaphore) {
      r.permits = 5;
      r.take = 2;
    }
    return r;
  };
  const Millis now = clock_.now_ms();
  auto a = table.acquire(req("k", "user:a", LockMode::kShared), now);
  auto b = table.acquire(req("k", "user:b", LockMode::kShared), now);
  auto c = table.acquire(req("k", "user:c", LockMode::kShared), now);
  auto s = table.acquire(req("s", "user:a", LockMode::kSemaphore), now);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && s.ok());
  ASSERT_TRUE(table.release("k", b->hold.handle.to_string(), now)->released);
  ASSERT_TRUE(table.renew("k", c->hold.handle.to_string(), 90'000, now)->renewed);
  ASSERT_TRUE(wait_durable(*store, forward.last));
  store->close();

  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  ASSERT_EQ(state->holds.size(), 3u);
  LockTable restored;
  restored.restore(*state, clock_.now_ms());
  auto k = restored.status("k", clock_.now_ms());
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->mode, LockMode::kShared);
  ASSERT_EQ(k->holders.size(), 2u);
  EXPECT_EQ(k->holders[0].token, a->hold.token);
  EXPECT_EQ(k->holders[1].token, c->hold.token);
  EXPECT_EQ(k->holders[1].lease_expires_at, now + 90'000);
  auto sem = restored.status("s", clock_.now_ms());
  EXPECT_EQ(sem->mode, LockMode::kSemaphore);
  EXPECT_EQ(sem->free_permits, 3u);
  // The handles still work, and a request with another limit is still refused.
  EXPECT_TRUE(restored.release("s", s->hold.handle.to_string(), clock_.now_ms())->released);
  auto other = req("k", "user:d", LockMode::kSemaphore);
  EXPECT_FALSE(restored.acquire(other, clock_.now_ms()).ok());
  EXPECT_EQ(restored.last_token(), s->hold.token);
}

TEST_F(ModeRecoveryTest, AShareReleasedInTheLogAfterASnapshotStaysReleased) {
  FakeFileSystem& fs = fs_;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  DurableState snap;
  snap.last_token = 6;
  snap.holds = {make_share("k", 4, LockMode::kShared), make_share("k", 5, LockMode::kShared)};
  ASSERT_TRUE(write_snapshot(fs, kDir, 1, snap).ok());
  auto store = open();
  append_all(*store, {Released{"k", 4}, Granted{make_share("k", 7, LockMode::kShared)}});
  store->close();
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  ASSERT_EQ(state->holds.size(), 2u);
  EXPECT_EQ(state->holds[0].token, 5u);
  EXPECT_EQ(state->holds[1].token, 7u);
  EXPECT_EQ(state->last_token, 7u);
}

}  // namespace
}  // namespace holdfast::wal
