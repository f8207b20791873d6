// Recovery: from the files of a data dir to the durable state (docs/wal-format.md, section 5).
//
//  1. List the dir; leftovers of interrupted snapshot writes (*.tmp) are garbage.
//  2. Take the newest snapshot that checks out; without one, the log must start at segment 1.
//  3. Replay the segments from the snapshot's next_segment on, which must be consecutive.
//  4. Cut a torn tail off the newest segment (truncate + sync); refuse on any other damage.
//  5. Drop session holds and leases that ended by `now`.
// The caller holds the data dir's lock; this function only reads, truncates a torn tail, and
// tells the caller what to delete and where to go on writing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/hold.h"
#include "store/wal/file_system.h"

namespace holdfast::wal {

struct RecoveredLog {
  DurableState state;
  std::uint64_t snapshot_segment = 0;  // next_segment of the snapshot used; 0: none
  // The replayed segments that remain part of the log: (number, bytes after truncation).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> live_segments;
  // The number of the segment to write next. It may be the number of an existing newest
  // segment that had no complete header (creating it empties it).
  std::uint64_t next_segment = 1;
  std::vector<std::string> garbage;  // file names in the dir to delete
  std::uint64_t records_replayed = 0;
  bool truncated_torn_tail = false;
};

Result<RecoveredLog> recover_log(FileSystem& fs, const std::string& dir, Millis now);

}  // namespace holdfast::wal
