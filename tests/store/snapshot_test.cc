// Snapshots: round trip, what is left out, damage detection, and a million holds.
#include "store/wal/snapshot.h"

#include <gtest/gtest.h>

#include "store/wal/fake_file_system.h"
#include "test_support.h"

namespace holdfast::wal {
namespace {
namespace snapshot {

using testing::kDir;
using testing::make_assigned;
using testing::make_hold;
using testing::snapshot_path;

DurableState sample_state() {
  DurableState s;
  s.last_token = 50;
  s.holds = {make_hold("a", 10), make_assigned("b", 11),
             make_hold("s", 12, testing::kStart + 1, Scope::kSession)};
  s.rule_set = RuleSetPut{"locks", "toml text"};
  return s;
}

Result<Snapshot> write_and_read(FakeFileSystem& fs, const DurableState& state, std::uint64_t n) {
  EXPECT_TRUE(write_snapshot(fs, kDir, n, state).ok());
  std::optional<std::string> bytes = fs.contents(snapshot_path(n));
  EXPECT_TRUE(bytes.has_value());
  return decode_snapshot(bytes.value_or(""), snapshot_path(n), n);
}

TEST(Snapshot, RoundTripKeepsLeaseHoldsAndRuleSetAndLeavesSessionHoldsOut) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  Result<Snapshot> snap = write_and_read(fs, sample_state(), 7);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->next_segment, 7u);
  EXPECT_EQ(snap->state.last_token, 50u);
  ASSERT_EQ(snap->state.holds.size(), 2u);
  EXPECT_EQ(snap->state.holds[0], make_hold("a", 10));
  EXPECT_EQ(snap->state.holds[1], make_assigned("b", 11));
  ASSERT_TRUE(snap->state.rule_set);
  EXPECT_EQ(snap->state.rule_set->toml, "toml text");
  EXPECT_FALSE(fs.exists(snapshot_path(7) + ".tmp"));
}

TEST(Snapshot, LastTokenCoversTheHoldsEvenIfTheSourceForgotThem) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  DurableState s;
  s.last_token = 3;
  s.holds = {make_hold("a", 90), make_hold("s", 99, testing::kStart + 1, Scope::kSession)};
  Result<Snapshot> snap = write_and_read(fs, s, 1);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->state.last_token, 99u);
  EXPECT_FALSE(snap->state.rule_set);
}

TEST(Snapshot, AnyDamageIsDetected) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  ASSERT_TRUE(write_snapshot(fs, kDir, 4, sample_state()).ok());
  const std::string good = *fs.contents(snapshot_path(4));
  for (std::size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x04);
    EXPECT_FALSE(decode_snapshot(bad, "s", 4).ok()) << "flip at " << at;
  }
  for (std::size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(decode_snapshot(std::string_view(good).substr(0, n), "s", 4).ok()) << n;
  const Result<Snapshot> renamed = decode_snapshot(good, "s", 5);
  ASSERT_FALSE(renamed.ok());
  EXPECT_NE(renamed.error().message.find("file name"), std::string::npos);
}

TEST(Snapshot, MillionHoldsLoadCorrectly) {
  constexpr std::uint64_t kHolds = 1'000'000;
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  DurableState state;
  state.last_token = kHolds + 5;
  state.holds.reserve(kHolds);
  for (std::uint64_t i = 0; i < kHolds; ++i)
    state.holds.push_back(make_hold("key/" + std::to_string(i), i + 1, testing::kStart + i));
  Result<Snapshot> snap = write_and_read(fs, state, 2);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->state.last_token, kHolds + 5);
  ASSERT_EQ(snap->state.holds.size(), kHolds);
  EXPECT_TRUE(snap->state.holds == state.holds);
}

// A stream over an encoded state that hands out its holds in pieces of `piece` bytes and can
// break at one of them.
class PiecewiseStream final : public StateStream {
 public:
  PiecewiseStream(EncodedState state, std::size_t piece, int fail_at_piece)
      : state_(std::move(state)),
        rest_(state_.holds),
        piece_(piece),
        fail_at_piece_(fail_at_piece) {}
  Result<EncodedState> head() override {
    return EncodedState{
        state_.last_token, state_.hold_count, state_.value_count, {}, state_.rule_set};
  }
  Result<std::string_view> holds() override {
    if (++pieces == fail_at_piece_) return Error(ErrorCode::kInternal, "the stream broke");
    const std::string_view piece = rest_.substr(0, piece_);
    rest_.remove_prefix(piece.size());
    return piece;
  }
  Status finish() override { return ok_status(); }
  int pieces = 0;  // asked for

 private:
  EncodedState state_;
  std::string_view rest_;
  std::size_t piece_;
  int fail_at_piece_;
};

EncodedState encoded_holds(std::uint64_t count) {
  SnapshotEncoder encoder;
  for (std::uint64_t i = 0; i < count; ++i)
    encoder.hold(view_of(make_hold("key/" + std::to_string(i), i + 1, testing::kStart + i)));
  encoder.rule_set(RuleSetPut{"locks", "toml text"});
  return encoder.take();
}

TEST(Snapshot, AStreamedStateIsSyncedEveryEightMiBAndReadsBackTheSame) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  const EncodedState state = encoded_holds(200'000);
  ASSERT_GT(state.holds.size(), std::size_t{16} << 20);  // more than two 8 MiB chunks
  PiecewiseStream stream(state, 1 << 20, /*fail_at_piece=*/0);
  const std::uint64_t syncs_before = fs.file_syncs();
  ASSERT_TRUE(write_snapshot(fs, kDir, 3, stream).ok());
  // One sync per 8 MiB written, and the last one of write_snapshot.
  EXPECT_EQ(fs.file_syncs() - syncs_before, state.holds.size() / (8u << 20) + 1);
  EXPECT_EQ(static_cast<std::size_t>(stream.pieces), (state.holds.size() >> 20) + 2);
  ASSERT_TRUE(write_snapshot(fs, kDir, 4, state).ok());
  const std::string streamed = *fs.contents(snapshot_path(3));
  const std::string whole = *fs.contents(snapshot_path(4));
  Result<Snapshot> read = decode_snapshot(streamed, snapshot_path(3), 3);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->state.holds.size(), 200'000u);
  ASSERT_TRUE(read->state.rule_set.has_value());
  // The same bytes but the segment number in the head, and so the checksum.
  EXPECT_EQ(streamed.size(), whole.size());
  EXPECT_EQ(streamed.substr(16, streamed.size() - 28), whole.substr(16, whole.size() - 28));
}

TEST(Snapshot, AStreamThatBreaksLeavesNoFileBehind) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir(kDir).ok());
  PiecewiseStream stream(encoded_holds(1'000), 1'000, /*fail_at_piece=*/2);
  const Status s = write_snapshot(fs, kDir, 3, stream);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "the stream broke");
  EXPECT_FALSE(fs.exists(snapshot_path(3)));
  EXPECT_FALSE(fs.exists(snapshot_path(3) + ".tmp"));
}

}  // namespace snapshot
}  // namespace
}  // namespace holdfast::wal
