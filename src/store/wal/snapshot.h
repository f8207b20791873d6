// Snapshots: the live state at the start of a log segment, so recovery replays only the
// segments after it (docs/wal-format.md, sections 3 and 6).
//
//   snapshot := "HFSNAP5\n" body body_crc:u32 body_length:u64
//   body     := next_segment:u64 last_token:u64 hold_count:u64 value_count:u64 hold* value*
//               has_rule_set:u8 [name toml]
// (versions 1 to 4 have neither value_count nor values; value: store/wal/value_codec.h)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/hold.h"
#include "store/store.h"
#include "store/wal/file_system.h"

namespace holdfast::wal {

struct Snapshot {
  std::uint64_t next_segment = 0;  // replay starts with this segment
  DurableState state;
};

// A snapshot's state, its holds and values already encoded as they will be written.
struct EncodedState {
  std::uint64_t last_token = 0;  // at least every encoded hold's token
  std::uint64_t hold_count = 0;
  std::uint64_t value_count = 0;
  // hold_count records of append_hold(), then value_count of append_value(): the bytes a
  // snapshot has between its head and its rule set, written as one stream.
  std::string holds;
  std::optional<RuleSetPut> rule_set;
};

// Encodes what a state source hands it, on the loop thread: 0.18 s for a million holds where
// copying them into a DurableState took 0.37 s (docs/performance-log.md, "Snapshots encoded in
// place").
// Session-scoped holds are left out: they never survive a restart.
class SnapshotEncoder final : public StateSink {
 public:
  void last_token(std::uint64_t token) override;
  void rule_set(const RuleSetPut& rules) override;
  void expect_holds(std::size_t count) override;
  void hold(const HoldView& hold) override;
  void value(std::string_view key, const Value& value, Millis expires_at) override;
  EncodedState take() { return std::move(state_); }
  // The holds (and values) encoded since the last drain, swapped into `out` (whose old bytes are
  // dropped and whose capacity is reused): for a writer that sends them on piece by piece.
  void drain_holds(std::string& out) {
    out.clear();
    out.swap(state_.holds);
  }
  std::size_t pending_bytes() const { return state_.holds.size(); }

 private:
  EncodedState state_;
};

// What a SnapshotEncoder would answer but the holds' bytes, without encoding them: a first
// pass over the same state, for a writer that must name the count before it has the holds.
class SnapshotCounter final : public StateSink {
 public:
  void last_token(std::uint64_t token) override;
  void rule_set(const RuleSetPut& rules) override;
  void expect_holds(std::size_t) override {}
  void hold(const HoldView& hold) override;
  void value(std::string_view, const Value&, Millis) override { ++state_.value_count; }
  EncodedState take() { return std::move(state_); }

 private:
  EncodedState state_;
};

// A snapshot's state handed to the writer in order, its holds a piece at a time, so that the
// writer never needs them all in memory (a forked child's pipe, or an EncodedState).
class StateStream {
 public:
  virtual ~StateStream() = default;
  // First: the state with its holds' bytes left out (`holds` empty; the rest is final).
  virtual Result<EncodedState> head() = 0;
  // Then: the next piece of the holds' bytes (and the values' after them), valid until the
  // next call; empty once every piece has been handed out.
  virtual Result<std::string_view> holds() = 0;
  // Last, after the empty piece: whether the stream was whole.
  virtual Status finish() = 0;
};

// Writes snap-<next_segment>.snap into dir atomically: a .tmp file, fdatasync, rename, fsync of
// the directory. If the stream or the file system fails, the .tmp file is removed.
Status write_snapshot(FileSystem& fs, const std::string& dir, std::uint64_t next_segment,
                      StateStream& state);
// The same from a state encoded in memory.
Status write_snapshot(FileSystem& fs, const std::string& dir, std::uint64_t next_segment,
                      const EncodedState& state);
// The same from a whole state (tests and tools). Session-scoped holds are left out.
Status write_snapshot(FileSystem& fs, const std::string& dir, std::uint64_t next_segment,
                      const DurableState& state);

// Decodes and checks a snapshot file's bytes. Any damage (bad magic, length, checksum, a body
// that does not decode exactly, a next_segment other than `expected_next_segment`) is an
// error naming `path`.
Result<Snapshot> decode_snapshot(std::string_view data, const std::string& path,
                                 std::uint64_t expected_next_segment);

}  // namespace holdfast::wal
