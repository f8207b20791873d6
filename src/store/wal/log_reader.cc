// The segment scan. For the frame at offset O (after the 8-byte magic):
//   1. fewer than 16 bytes left                         -> torn tail
//   2. header checksum wrong: all zeros from O on        -> torn tail, else corruption
//   3. body runs past the end of the file                -> torn tail (the header is intact,
//                                                           so the length is genuine)
//   4. body checksum wrong, records that do not decode,
//      or a record count that does not match            -> corruption
// "Torn tail" becomes corruption in a segment that is not the newest. A frame's records are
// decoded and checked before any of them is visited, so a bad frame contributes nothing.
#include "store/wal/log_reader.h"

#include <algorithm>
#include <vector>

#include "store/wal/coding.h"
#include "store/wal/crc32c.h"
#include "store/wal/format.h"
#include "store/wal/record.h"

namespace holdfast::wal {
namespace {

bool all_zero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

}  // namespace

Error corruption_error(const std::string& path, std::uint64_t offset, std::string_view what) {
  return Error(ErrorCode::kInternal, "corrupt write-ahead log " + path + " at offset " +
                                         std::to_string(offset) + ": " + std::string(what))
      .with("file", path)
      .with("offset", static_cast<std::int64_t>(offset));
}

Result<SegmentScan> read_segment(std::string_view data, const std::string& path,
                                 SegmentPosition position, const RecordVisitor& visit) {
  const bool newest = position == SegmentPosition::kNewest;
  SegmentScan scan;

  // The end of the log in this segment: fine in the newest segment, damage in any other.
  auto torn = [&](std::uint64_t offset, std::string_view what) -> Result<SegmentScan> {
    if (!newest)
      return corruption_error(path, offset,
                              std::string(what) + " in a segment that is not the newest");
    scan.valid_bytes = offset;
    scan.torn_tail = offset < data.size();
    return scan;
  };

  if (data.size() < kSegmentHeaderSize) {
    if (kSegmentMagic.starts_with(data)) return torn(0, "incomplete segment header");
    return corruption_error(path, 0, "not a holdfast log segment (bad magic)");
  }
  if (data.substr(0, kSegmentHeaderSize) != kSegmentMagic)
    return corruption_error(path, 0, "not a holdfast log segment (bad magic)");

  std::vector<Change> frame_changes;
  std::uint64_t offset = kSegmentHeaderSize;
  while (offset < data.size()) {
    const std::string_view rest = data.substr(offset);
    if (rest.size() < kFrameHeaderSize) return torn(offset, "incomplete frame header");
    const std::uint32_t header_crc = load_u32(rest.data());
    if (crc32c::unmask(header_crc) != crc32c::value(rest.substr(4, kFrameHeaderSize - 4))) {
      if (all_zero(rest)) return torn(offset, "zero-filled tail");
      return corruption_error(path, offset, "frame header checksum mismatch");
    }
    const std::uint32_t body_length = load_u32(rest.data() + 4);
    const std::uint32_t body_crc = load_u32(rest.data() + 8);
    const std::uint32_t record_count = load_u32(rest.data() + 12);
    if (body_length > rest.size() - kFrameHeaderSize) return torn(offset, "incomplete frame");
    std::string_view body = rest.substr(kFrameHeaderSize, body_length);
    if (crc32c::unmask(body_crc) != crc32c::value(body))
      return corruption_error(path, offset, "frame body checksum mismatch");

    frame_changes.clear();
    while (!body.empty()) {
      Result<RecordView> record = next_record(body);
      if (!record) return corruption_error(path, offset, record.error().message);
      Result<Change> change = decode_record(record->type, record->payload);
      if (!change) return corruption_error(path, offset, change.error().message);
      frame_changes.push_back(std::move(change).value());
    }
    if (frame_changes.size() != record_count)
      return corruption_error(path, offset,
                              "frame holds " + std::to_string(frame_changes.size()) +
                                  " records but its header says " + std::to_string(record_count));
    for (Change& change : frame_changes) visit(std::move(change));
    ++scan.frames;
    scan.records += record_count;
    offset += kFrameHeaderSize + body_length;
  }
  scan.valid_bytes = offset;
  return scan;
}

}  // namespace holdfast::wal
