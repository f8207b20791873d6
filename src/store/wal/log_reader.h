// Reading one log segment back (docs/wal-format.md, section 5): every record of every intact
// frame, in order, and a verdict on what follows the last intact frame.
//
// The verdict is the heart of "never silently drop an acknowledged record":
//  - a torn tail (an incomplete frame at the end of the file, nothing but zeros from some
//    offset on, or a last frame with a zeroed sector: a write a crash cut short in
//    preallocated space) is the end of the log; it is allowed only in the newest segment;
//  - anything else that does not check out is corruption, reported with file and offset.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/hold.h"

namespace holdfast::wal {

enum class SegmentPosition : std::uint8_t {
  kNewest,  // the segment written last: a torn tail is expected after a crash
  kOlder,   // synced before the next one was started: must be complete
};

struct SegmentScan {
  // End of the last intact frame: where the log ends in this segment. 0 if the segment has
  // not even a complete magic (a crash right after creating it).
  std::uint64_t valid_bytes = 0;
  bool torn_tail = false;  // bytes after valid_bytes are a torn tail (to be truncated)
  std::uint64_t frames = 0;
  std::uint64_t records = 0;
};

using RecordVisitor = std::function<void(Change&& change)>;

// Scans a segment's bytes, calling visit for each record of each intact frame, in order.
// The error (corruption) names `path` and the offset, also as details "file" and "offset".
Result<SegmentScan> read_segment(std::string_view data, const std::string& path,
                                 SegmentPosition position, const RecordVisitor& visit);

// The error read_segment and recovery return for damaged data.
Error corruption_error(const std::string& path, std::uint64_t offset, std::string_view what);

}  // namespace holdfast::wal
