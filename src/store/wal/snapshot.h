// Snapshots: the live state at the start of a log segment, so recovery replays only the
// segments after it (docs/wal-format.md, sections 3 and 6).
//
//   snapshot := "HFSNAP1\n" body body_crc:u32 body_length:u64
//   body     := next_segment:u64 last_token:u64 hold_count:u64 hold* has_rule_set:u8 [name toml]
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/hold.h"
#include "store/wal/file_system.h"

namespace holdfast::wal {

struct Snapshot {
  std::uint64_t next_segment = 0;  // replay starts with this segment
  DurableState state;
};

// Writes snap-<next_segment>.snap into dir atomically: a .tmp file, fdatasync, rename, fsync of
// the directory. Session-scoped holds in `state` are left out (they never survive a restart).
// Streams through a bounded buffer, so a million holds do not need a second copy in memory.
Status write_snapshot(FileSystem& fs, const std::string& dir, std::uint64_t next_segment,
                      const DurableState& state);

// Decodes and checks a snapshot file's bytes. Any damage (bad magic, length, checksum, a body
// that does not decode exactly, a next_segment other than `expected_next_segment`) is an
// error naming `path`.
Result<Snapshot> decode_snapshot(std::string_view data, const std::string& path,
                                 std::uint64_t expected_next_segment);

}  // namespace holdfast::wal
