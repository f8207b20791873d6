// Multi-key groups on disk: one GroupGranted record holds the whole group (so replay has all of
// it or none), damaged records are refused, version 3 segments and version 2 snapshots are still
// read, and a group comes back after a restart with its one handle working on every key.
#include <gtest/gtest.h>

#include "core/lock_table.h"
#include "store/wal/log_reader.h"
#include "store/wal/record.h"
#include "store/wal/replay.h"
#include "store/wal/snapshot.h"
#include "wal_store_fixture.h"

namespace holdfast::wal {
namespace {

using testing::kDir;
using testing::make_hold;
using testing::snapshot_path;
using testing::wait_durable;
using testing::WalStoreTest;

GroupGranted make_group() {
  HoldState a = make_hold("g/a", 10);
  HoldState b = make_hold("g/b", 11);
  b.handle = a.handle;
  b.mode = LockMode::kSemaphore;
  b.take = 2;
  b.permits = 3;
  return GroupGranted{{a, b}};
}

TEST(GroupRecords, RoundTripAsOneRecord) {
  std::string bytes;
  append_record(bytes, make_group());
  std::string_view rest = bytes;
  Result<RecordView> view = next_record(rest);
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(view->type, RecordType::kGroupGranted);
  Result<Change> change = decode_record(view->type, view->payload);
  ASSERT_TRUE(change.ok()) << change.error().message;
  EXPECT_EQ(std::get<GroupGranted>(*change).holds, make_group().holds);
}

TEST(GroupRecords, ACutOrInflatedRecordIsRefused) {
  std::string bytes;
  append_record(bytes, make_group());
  const std::string_view payload = std::string_view(bytes).substr(kRecordHeaderSize);
  EXPECT_FALSE(
      decode_record(RecordType::kGroupGranted, payload.substr(0, payload.size() - 3)).ok());
  std::string inflated(payload);
  inflated[0] = 9;  // the count: more holds than the payload has
  EXPECT_FALSE(decode_record(RecordType::kGroupGranted, inflated).ok());
  std::string empty(payload);
  empty.replace(0, 4, std::string(4, '\0'));
  EXPECT_FALSE(decode_record(RecordType::kGroupGranted, empty).ok());
}

TEST(GroupRecords, ReplayAppliesEveryHoldOfTheGroup) {
  ReplayState replay{DurableState{}};
  replay.apply(make_group());
  DurableState state = std::move(replay).finish(testing::kStart);
  ASSERT_EQ(state.holds.size(), 2u);
  EXPECT_EQ(state.last_token, 11u);
}

TEST(GroupRecords, AVersionFourSegmentIsStillRead) {
  std::string records;
  append_record(records, Granted{make_hold("k", 1)});
  const std::vector<Change> changes = testing::read_segment_of(kSegmentMagicV4, records);
  ASSERT_EQ(changes.size(), 1u);
}

TEST(GroupSnapshots, AVersionThreeSnapshotIsStillRead) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  DurableState state;
  state.last_token = 9;
  state.holds = {make_hold("x", 3)};
  ASSERT_TRUE(write_snapshot(fs, kDir, 2, state).ok());
  std::string bytes = *fs.contents(snapshot_path(2));
  EXPECT_EQ(bytes.substr(0, kSnapshotHeaderSize), kSnapshotMagic);
  bytes = testing::older_snapshot(bytes, kSnapshotMagicV3);
  Result<Snapshot> snap = decode_snapshot(bytes, snapshot_path(2), 2);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->state.holds, state.holds);
}

using GroupRecoveryTest = WalStoreTest;

TEST_F(GroupRecoveryTest, AGroupSurvivesARestartAndStillActsAsOne) {
  auto store = open();
  testing::ForwardToStore forward(*store);
  LockTable table(&forward);
  const Millis now = clock_.now_ms();
  AcquireAllRequest r;
  r.keys = {KeyRequest{"a", LockMode::kExclusive}, KeyRequest{"b", LockMode::kShared},
            KeyRequest{"s", LockMode::kSemaphore, 4, 2}};
  r.ttl_ms = 60'000;
  r.held_by = "user:a";
  r.session = 1;
  auto granted = table.acquire_all(r, now);
  ASSERT_TRUE(granted.ok());
  ASSERT_EQ(granted->kind, AcquireOutcome::Kind::kGranted);
  const std::string handle = granted->group.handle.to_string();
  ASSERT_TRUE(table.renew("b", handle, 90'000, now)->renewed);
  ASSERT_TRUE(wait_durable(*store, forward.last));
  store->close();

  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  ASSERT_EQ(state->holds.size(), 3u);
  LockTable restored;
  restored.restore(*state, clock_.now_ms());
  auto a = restored.status("a", clock_.now_ms());
  EXPECT_TRUE(a->held);
  EXPECT_EQ(a->hold.token, granted->group.holds[0].token);
  EXPECT_EQ(a->hold.lease_expires_at, now + 90'000);
  EXPECT_EQ(restored.status("s", clock_.now_ms())->free_permits, 2u);
  // One handle still releases the whole group, by any of its keys.
  ASSERT_TRUE(restored.release("s", handle, clock_.now_ms())->released);
  EXPECT_FALSE(restored.status("a", clock_.now_ms())->held);
  EXPECT_FALSE(restored.status("b", clock_.now_ms())->held);
  EXPECT_EQ(restored.last_token(), granted->group.holds[2].token);
}

}  // namespace
}  // namespace holdfast::wal
