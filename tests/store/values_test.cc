// Typed values on disk: the ValueEdit record of every edit round-trips and a damaged one is
// refused; snapshots carry the values (version 5) and older snapshots and segments still read;
// a restart brings back what the edits made, without what expired.
#include <gtest/gtest.h>

#include <limits>

#include "core/values/value_edit.h"
#include "core/values/value_text.h"
#include "store/wal/record.h"
#include "store/wal/replay.h"
#include "store/wal/snapshot.h"
#include "store/wal/value_codec.h"
#include "wal_store_fixture.h"

namespace holdfast::wal {
namespace {

using testing::kDir;
using testing::kStart;
using testing::snapshot_path;
using testing::WalStoreTest;

ValueEdit edit(std::string key, ValueEdit::Op op, std::vector<std::string> items = {},
               std::int64_t number = 0) {
  ValueEdit e;
  e.key = std::move(key);
  e.op = op;
  e.items = std::move(items);
  e.number = number;
  return e;
}

std::vector<ValueEdit> every_edit() {
  ValueEdit put = edit("z", ValueEdit::Op::kZSetPut, {"a", "", std::string("\0\xff", 2)});
  put.scores = {1.5, -std::numeric_limits<double>::infinity(), 0};
  put.fresh = true;
  ValueEdit push = edit("l", ValueEdit::Op::kListPush, {"x", "y"});
  push.right = true;
  ValueEdit pop = edit("l", ValueEdit::Op::kListPop, {}, 2);
  pop.right = true;
  return {
      edit("k", ValueEdit::Op::kDelete),
      edit("k", ValueEdit::Op::kExpire, {}, kStart + 5000),
      edit("c", ValueEdit::Op::kCounterSet, {}, std::numeric_limits<std::int64_t>::min()),
      put,
      edit("z", ValueEdit::Op::kZSetRemove, {"a"}),
      edit("h", ValueEdit::Op::kHashPut, {"f", "v", "g", ""}),
      edit("h", ValueEdit::Op::kHashRemove, {"f"}),
      push,
      pop,
      edit("l", ValueEdit::Op::kListRemove, {"x"}, -3),
  };
}

std::string payload_of(const ValueEdit& e) {
  std::string bytes;
  append_record(bytes, e);
  return bytes.substr(kRecordHeaderSize);
}

TEST(ValueRecords, EveryEditRoundTrips) {
  for (const ValueEdit& e : every_edit()) {
    std::string bytes;
    append_record(bytes, e);
    std::string_view rest = bytes;
    Result<RecordView> view = next_record(rest);
    ASSERT_TRUE(view.ok());
    EXPECT_EQ(view->type, RecordType::kValueEdit);
    Result<Change> change = decode_record(view->type, view->payload);
    ASSERT_TRUE(change.ok()) << change.error().message;
    EXPECT_EQ(std::get<ValueEdit>(*change), e) << static_cast<int>(e.op);
  }
}

TEST(ValueRecords, DamageIsRefused) {
  const std::string good = payload_of(every_edit()[3]);
  EXPECT_FALSE(decode_record(RecordType::kValueEdit, good.substr(0, good.size() - 1)).ok());
  std::string bad_op = good;
  bad_op[4 + 1] = 0x3f;  // after the key "z": an op that does not exist
  EXPECT_FALSE(decode_record(RecordType::kValueEdit, bad_op).ok());
  std::string inflated = good;
  inflated[4 + 1 + 1 + 8] = static_cast<char>(0x7f);  // the count: more items than the bytes
  EXPECT_FALSE(decode_record(RecordType::kValueEdit, inflated).ok());
  ValueEdit nan = edit("z", ValueEdit::Op::kZSetPut, {"a"});
  nan.scores = {std::numeric_limits<double>::quiet_NaN()};
  EXPECT_FALSE(decode_record(RecordType::kValueEdit, payload_of(nan)).ok());
}

TEST(ValueRecords, ReplayBuildsTheValuesAndDropsTheExpired) {
  ReplayState replay{DurableState{}};
  ValueEdit z = edit("z", ValueEdit::Op::kZSetPut, {"a", "b"});
  z.scores = {1, 2};
  replay.apply(z);
  replay.apply(edit("z", ValueEdit::Op::kZSetRemove, {"a"}));
  replay.apply(edit("c", ValueEdit::Op::kCounterSet, {}, 41));
  replay.apply(edit("c", ValueEdit::Op::kExpire, {}, kStart + 10));
  replay.apply(edit("gone", ValueEdit::Op::kCounterSet, {}, 1));
  replay.apply(edit("gone", ValueEdit::Op::kDelete));
  DurableState state = std::move(replay).finish(kStart + 10);
  ASSERT_EQ(state.values.size(), 1u);
  EXPECT_EQ(state.values[0].key, "z");
  EXPECT_EQ(*std::get<ZSet>(state.values[0].value.data).score("b"), 2);
  EXPECT_FALSE(std::get<ZSet>(state.values[0].value.data).score("a"));
}

TEST(ValueRecords, AFreshEditStartsFromNothing) {
  ReplayState replay{DurableState{}};
  replay.apply(edit("l", ValueEdit::Op::kListPush, {"old"}));
  replay.apply(edit("l", ValueEdit::Op::kExpire, {}, kStart + 1));
  ValueEdit again = edit("l", ValueEdit::Op::kListPush, {"new"});
  again.fresh = true;
  replay.apply(again);
  DurableState state = std::move(replay).finish(kStart + 100);
  ASSERT_EQ(state.values.size(), 1u);
  const List& l = std::get<List>(state.values[0].value.data);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l.at(0), "new");
  EXPECT_EQ(state.values[0].expires_at, kNever);
}

DurableState state_with_values() {
  DurableState s;
  s.last_token = 4;
  s.holds = {testing::make_hold("lock", 4)};
  ZSet z;
  z.put("m1", 1);
  z.put("m2", std::numeric_limits<double>::infinity());
  Hash h;
  h.put("f", "v");
  h.put("", "empty field");
  List l;
  l.push_back("a");
  l.push_back(std::string("\0b", 2));
  s.values.push_back(DurableValue{"z", Value{std::move(z)}, kStart + 60'000});
  s.values.push_back(DurableValue{"h", Value{std::move(h)}, kNever});
  s.values.push_back(DurableValue{"l", Value{std::move(l)}, kNever});
  s.values.push_back(DurableValue{"c", Value{std::int64_t{-7}}, kNever});
  return s;
}

TEST(ValueSnapshots, CarryEveryKindOfValue) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  const DurableState state = state_with_values();
  ASSERT_TRUE(write_snapshot(fs, kDir, 3, state).ok());
  const std::string bytes = *fs.contents(snapshot_path(3));
  EXPECT_EQ(bytes.substr(0, kSnapshotHeaderSize), kSnapshotMagic);
  Result<Snapshot> snap = decode_snapshot(bytes, snapshot_path(3), 3);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->state.holds, state.holds);
  ASSERT_EQ(snap->state.values.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(snap->state.values[i].key, state.values[i].key);
    EXPECT_EQ(snap->state.values[i].expires_at, state.values[i].expires_at);
    EXPECT_EQ(canonical_text(snap->state.values[i].value), canonical_text(state.values[i].value));
  }
}

TEST(ValueSnapshots, AVersionFourSnapshotIsStillRead) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  DurableState state;
  state.last_token = 9;
  state.holds = {testing::make_hold("x", 3)};
  ASSERT_TRUE(write_snapshot(fs, kDir, 2, state).ok());
  const std::string bytes =
      testing::older_snapshot(*fs.contents(snapshot_path(2)), kSnapshotMagicV4);
  Result<Snapshot> snap = decode_snapshot(bytes, snapshot_path(2), 2);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->state.holds, state.holds);
  EXPECT_TRUE(snap->state.values.empty());
}

TEST(ValueSnapshots, AVersionFiveSegmentIsStillRead) {
  std::string records;
  append_record(records, Granted{testing::make_hold("k", 1)});
  EXPECT_EQ(testing::read_segment_of(kSegmentMagicV5, records).size(), 1u);
}

using ValueRecoveryTest = WalStoreTest;

TEST_F(ValueRecoveryTest, EditsSurviveARestartAndExpiredValuesDoNot) {
  auto store = open();
  ValueEdit z = edit("z", ValueEdit::Op::kZSetPut, {"a", "b"});
  z.scores = {1, 2};
  z.fresh = true;
  std::uint64_t last = 0;
  for (const ValueEdit& e : {z, edit("z", ValueEdit::Op::kZSetRemove, {"b"}),
                             edit("c", ValueEdit::Op::kCounterSet, {}, 5),
                             edit("c", ValueEdit::Op::kExpire, {}, kStart + 1000),
                             edit("h", ValueEdit::Op::kHashPut, {"f", "1"})}) {
    last = store->append(e);
    store->submit();
  }
  ASSERT_TRUE(testing::wait_durable(*store, last));
  store->close();
  clock_.advance(999);
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->values.size(), 3u);
  clock_.advance(1);
  state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->values.size(), 2u);  // the counter's expiry has come
}

TEST_F(ValueRecoveryTest, ASnapshotAndCompactionKeepTheValues) {
  options_.snapshot_threshold_bytes = 1;  // a snapshot at the next submit
  auto store = open();
  // The state source is what the server would hand over: the values and the one edit below.
  DurableState live = state_with_values();
  live.values.push_back(DurableValue{"extra", Value{std::int64_t{1}}, kNever});
  store->set_state_source(state_source_of([&] { return live; }));
  const std::uint64_t last = store->append(edit("extra", ValueEdit::Op::kCounterSet, {}, 1));
  store->submit();
  ASSERT_TRUE(testing::wait_durable(*store, last));
  ASSERT_TRUE(testing::eventually([&] { return store->stats().snapshots >= 1; }));
  store->close();
  Result<DurableState> state = restart();
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_FALSE(fs_.exists(testing::segment_path(1)));  // compacted: the snapshot replaced it
  std::map<std::string, std::string> got;
  for (const DurableValue& v : state->values) got[v.key] = canonical_text(v.value);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got["h"], canonical_text(state_with_values().values[1].value));
  EXPECT_EQ(got["extra"], "1");
}

}  // namespace
}  // namespace holdfast::wal
