// Snapshot writing takes holds already encoded (SnapshotEncoder, on the loop thread or in a
// forked child) as a stream and writes header, holds a chunk at a time, rule set and trailer
// (CRC and length; the length sits at the end so that the body can be streamed). Reading
// takes the whole file at once (one read) and decodes it in a flat loop into a reserved vector.
#include "store/wal/snapshot.h"

#include <algorithm>

#include "store/wal/coding.h"
#include "store/wal/crc32c.h"
#include "store/wal/data_dir.h"
#include "store/wal/format.h"
#include "store/wal/record.h"
#include "store/wal/value_codec.h"

namespace holdfast::wal {
namespace {

constexpr std::size_t kSyncedChunkBytes = std::size_t{8} << 20;

Status write_contents(WritableFile& file, std::uint64_t next_segment, StateStream& stream) {
  Result<EncodedState> state = stream.head();
  if (!state) return std::move(state).error();
  std::string head;
  put_u64(head, next_segment);
  put_u64(head, state->last_token);
  put_u64(head, state->hold_count);
  put_u64(head, state->value_count);
  std::uint32_t crc = crc32c::extend(0, head);
  const std::string_view first[] = {kSnapshotMagic, head};
  if (Status s = file.append(first); !s) return s;
  // Synced a chunk at a time: the log's commits share the disk, and a commit's fdatasync must
  // not queue behind the write-back of the whole snapshot (a million holds: 65-100 MB).
  std::uint64_t holds_bytes = 0;
  std::size_t unsynced = 0;
  for (;;) {
    Result<std::string_view> piece = stream.holds();
    if (!piece) return std::move(piece).error();
    if (piece->empty()) break;
    crc = crc32c::extend(crc, *piece);
    const std::string_view pieces[] = {*piece};
    if (Status s = file.append(pieces); !s) return s;
    holds_bytes += piece->size();
    unsynced += piece->size();
    if (unsynced >= kSyncedChunkBytes) {
      if (Status s = file.sync(); !s) return s;
      unsynced = 0;
    }
  }
  if (Status s = stream.finish(); !s) return s;
  std::string tail;
  put_u8(tail, state->rule_set ? 1 : 0);
  if (state->rule_set) {
    put_str(tail, state->rule_set->name);
    put_str(tail, state->rule_set->toml);
  }
  crc = crc32c::extend(crc, tail);
  std::string trailer;
  put_u32(trailer, crc32c::mask(crc));
  put_u64(trailer, head.size() + holds_bytes + tail.size());
  const std::string_view last[] = {tail, trailer};
  return file.append(last);
}

// An EncodedState in memory as a stream: its holds handed out in place, a chunk at a time.
class EncodedStateStream final : public StateStream {
 public:
  explicit EncodedStateStream(const EncodedState& state) : state_(state), rest_(state.holds) {}
  Result<EncodedState> head() override {
    return EncodedState{
        state_.last_token, state_.hold_count, state_.value_count, {}, state_.rule_set};
  }
  Result<std::string_view> holds() override {
    const std::string_view piece = rest_.substr(0, kSyncedChunkBytes);
    rest_.remove_prefix(piece.size());
    return piece;
  }
  Status finish() override { return ok_status(); }

 private:
  const EncodedState& state_;
  std::string_view rest_;
};

// Session-scoped holds are left out of snapshots: they never survive a restart.
bool in_snapshot(const HoldView& hold) { return hold.scope == Scope::kLease; }

Error snapshot_error(const std::string& path, std::string_view what) {
  return Error(ErrorCode::kInternal, "bad snapshot " + path + ": " + std::string(what))
      .with("file", path);
}

}  // namespace

void SnapshotEncoder::last_token(std::uint64_t token) {
  state_.last_token = std::max(state_.last_token, token);
}

void SnapshotEncoder::rule_set(const RuleSetPut& rules) { state_.rule_set = rules; }

void SnapshotEncoder::expect_holds(std::size_t count) {
  // A hold with a 20-byte key and a short principal encodes to about 80 bytes.
  state_.holds.reserve(state_.holds.size() + count * 96);
}

void SnapshotEncoder::hold(const HoldView& hold) {
  // A session hold is left out, but its token must not be handed out again after a restart.
  state_.last_token = std::max(state_.last_token, hold.token);
  if (!in_snapshot(hold)) return;
  ++state_.hold_count;
  append_hold(state_.holds, hold);
}

void SnapshotEncoder::value(std::string_view key, const Value& value, Millis expires_at) {
  ++state_.value_count;
  append_value(state_.holds, key, value, expires_at);
}

void SnapshotCounter::last_token(std::uint64_t token) {
  state_.last_token = std::max(state_.last_token, token);
}

void SnapshotCounter::rule_set(const RuleSetPut& rules) { state_.rule_set = rules; }

void SnapshotCounter::hold(const HoldView& hold) {
  state_.last_token = std::max(state_.last_token, hold.token);
  if (in_snapshot(hold)) ++state_.hold_count;
}

Status write_snapshot(FileSystem& fs, const std::string& dir, std::uint64_t next_segment,
                      const DurableState& state) {
  SnapshotEncoder encoder;
  hand_over(state, encoder);
  return write_snapshot(fs, dir, next_segment, encoder.take());
}

Status write_snapshot(FileSystem& fs, const std::string& dir, std::uint64_t next_segment,
                      const EncodedState& state) {
  EncodedStateStream stream(state);
  return write_snapshot(fs, dir, next_segment, stream);
}

Status write_snapshot(FileSystem& fs, const std::string& dir, std::uint64_t next_segment,
                      StateStream& state) {
  const std::string path = join_path(dir, snapshot_file_name(next_segment));
  const std::string temp = path + std::string(kTempSuffix);
  Result<std::unique_ptr<WritableFile>> file = fs.create_file(temp);
  if (!file) return std::move(file).error();
  Status written = write_contents(**file, next_segment, state);
  if (written) written = (*file)->sync();
  Status closed = (*file)->close();
  if (written && !closed) written = std::move(closed);
  if (!written) {
    (void)fs.remove_file(temp);
    return written;
  }
  if (Status s = fs.rename_file(temp, path); !s) return s;
  return fs.sync_dir(dir);
}

Result<Snapshot> decode_snapshot(std::string_view data, const std::string& path,
                                 std::uint64_t expected_next_segment) {
  if (data.size() < kSnapshotHeaderSize + kSnapshotTrailerSize)
    return snapshot_error(path, "file is too short");
  const std::string_view magic = data.substr(0, kSnapshotHeaderSize);
  if (magic != kSnapshotMagic && magic != kSnapshotMagicV4 && magic != kSnapshotMagicV3 &&
      magic != kSnapshotMagicV2 && magic != kSnapshotMagicV1)
    return snapshot_error(path, "not a holdfast snapshot (bad magic)");
  const bool with_values = magic == kSnapshotMagic;
  const char* trailer = data.data() + data.size() - kSnapshotTrailerSize;
  const std::uint32_t body_crc = load_u32(trailer);
  const std::uint64_t body_length = load_u64(trailer + 4);
  if (body_length != data.size() - kSnapshotHeaderSize - kSnapshotTrailerSize)
    return snapshot_error(path, "length in trailer does not match the file size (incomplete?)");
  const std::string_view body = data.substr(kSnapshotHeaderSize, body_length);
  if (crc32c::unmask(body_crc) != crc32c::value(body))
    return snapshot_error(path, "checksum mismatch");

  Decoder in(body);
  Snapshot snapshot;
  snapshot.next_segment = in.u64();
  snapshot.state.last_token = in.u64();
  const std::uint64_t hold_count = in.u64();
  const std::uint64_t value_count = with_values ? in.u64() : 0;
  // A count the remaining bytes cannot hold is damage, not a reason for a huge reserve().
  if (!in.ok() || hold_count > in.remaining() / kMinHoldSize ||
      value_count > in.remaining() / kMinValueSize)
    return snapshot_error(path, "bad header");
  // Headroom for the holds a log tail adds: untouched capacity costs address space, not
  // memory, while growing a vector of a million holds later would move all of them.
  snapshot.state.holds.reserve(hold_count + hold_count / 4 + 1024);
  for (std::uint64_t i = 0; i < hold_count && in.ok(); ++i)
    snapshot.state.holds.push_back(read_hold(in));
  snapshot.state.values.reserve(value_count);
  for (std::uint64_t i = 0; i < value_count && in.ok(); ++i)
    snapshot.state.values.push_back(read_value(in));
  const std::uint8_t has_rule_set = in.u8();
  if (has_rule_set == 1) {
    RuleSetPut rule_set;
    rule_set.name = in.str();
    rule_set.toml = in.str();
    snapshot.state.rule_set = std::move(rule_set);
  } else if (has_rule_set != 0) {
    in.fail();
  }
  if (!in.ok() || !in.done()) return snapshot_error(path, "body does not decode");
  if (snapshot.next_segment != expected_next_segment)
    return snapshot_error(path, "names segment " + std::to_string(snapshot.next_segment) +
                                    " inside but " + std::to_string(expected_next_segment) +
                                    " in its file name");
  return snapshot;
}

}  // namespace holdfast::wal
