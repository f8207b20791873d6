// The segment scan. For the frame at offset O (after the 8-byte magic):
//   1. nothing but zeros from O on                       -> end of the log (torn tail)
//   2. fewer than 16 bytes left                          -> torn tail
//   3. header checksum wrong: a torn write if the header is all zeros (its sector never
//      reached the disk), or it straddles a sector boundary and the sector after that boundary
//      reads as zeros (the first part of the header reached the disk, the rest did not), and in
//      both cases no intact frame starts anywhere after it; otherwise corruption
//   4. body runs past the end of the file                -> torn tail (the header is intact,
//                                                           so the length is genuine)
//   5. body checksum wrong: a torn write if one 512-byte sector of the frame reads as zeros
//      and nothing but zeros follows the frame (what a crash leaves in preallocated space),
//      otherwise corruption
//   6. records that do not decode, or a count that does not match -> corruption
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

// Whether the frame at [begin, end) of the file has a sector that never reached the disk: the
// part of some kTornWriteSector-aligned sector inside the frame is all zeros and at least
// kMinLostSectorPiece bytes long (a shorter zero run can be ordinary data, e.g. the high bytes
// of a token; a bit flip never zeroes a sector).
bool has_lost_sector(std::string_view file, std::uint64_t begin, std::uint64_t end) {
  std::uint64_t piece_begin = begin;
  while (piece_begin < end) {
    const std::uint64_t sector_end = (piece_begin / kTornWriteSector + 1) * kTornWriteSector;
    const std::uint64_t piece_end = std::min(end, sector_end);
    if (piece_end - piece_begin >= kMinLostSectorPiece &&
        all_zero(file.substr(piece_begin, piece_end - piece_begin)))
      return true;
    piece_begin = piece_end;
  }
  return false;
}

// Whether the frame header at `offset` lost its end with a sector: the header straddles a
// kTornWriteSector boundary, and from that boundary on its sector (or the file, if shorter)
// reads as at least kMinLostSectorPiece zeros. A genuine header is followed by a record's
// non-zero type byte, so its own zero high bytes cannot pass for this.
bool header_lost_its_end(std::string_view file, std::uint64_t offset) {
  const std::uint64_t boundary = (offset / kTornWriteSector + 1) * kTornWriteSector;
  if (boundary >= offset + kFrameHeaderSize || boundary >= file.size()) return false;
  const std::uint64_t piece_end = std::min<std::uint64_t>(file.size(), boundary + kTornWriteSector);
  return piece_end - boundary >= kMinLostSectorPiece &&
         all_zero(file.substr(boundary, piece_end - boundary));
}

bool intact_frame_header(std::string_view header) {
  return crc32c::unmask(load_u32(header.data())) ==
         crc32c::value(header.substr(4, kFrameHeaderSize - 4));
}

// Whether a frame that passes both checksums starts anywhere after `from`: proof that data
// was written (and maybe acknowledged) after the damage, which then cannot be a torn tail.
// Runs only on damage, over the bytes up to the last non-zero one.
bool intact_frame_after(std::string_view file, std::uint64_t from) {
  const std::size_t last_nonzero = file.find_last_not_of('\0');
  if (last_nonzero == std::string_view::npos) return false;
  for (std::uint64_t at = from; at <= last_nonzero && at + kFrameHeaderSize <= file.size(); ++at) {
    const std::string_view header = file.substr(at, kFrameHeaderSize);
    if (!intact_frame_header(header)) continue;
    const std::uint32_t body_length = load_u32(header.data() + 4);
    if (body_length > file.size() - at - kFrameHeaderSize) continue;
    const std::string_view body = file.substr(at + kFrameHeaderSize, body_length);
    if (crc32c::unmask(load_u32(header.data() + 8)) == crc32c::value(body)) return true;
  }
  return false;
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

  // A segment whose magic never reached the disk (created and preallocated, then a crash).
  if (all_zero(data) && !data.empty()) return torn(0, "zero-filled segment");
  if (data.size() < kSegmentHeaderSize) {
    if (kSegmentMagic.starts_with(data) || kSegmentMagicV5.starts_with(data) ||
        kSegmentMagicV4.starts_with(data) || kSegmentMagicV3.starts_with(data) ||
        kSegmentMagicV2.starts_with(data) || kSegmentMagicV1.starts_with(data))
      return torn(0, "incomplete segment header");
    return corruption_error(path, 0, "not a holdfast log segment (bad magic)");
  }
  const std::string_view magic = data.substr(0, kSegmentHeaderSize);
  if (magic != kSegmentMagic && magic != kSegmentMagicV5 && magic != kSegmentMagicV4 &&
      magic != kSegmentMagicV3 && magic != kSegmentMagicV2 && magic != kSegmentMagicV1)
    return corruption_error(path, 0, "not a holdfast log segment (bad magic)");

  std::vector<Change> frame_changes;
  std::uint64_t offset = kSegmentHeaderSize;
  while (offset < data.size()) {
    const std::string_view rest = data.substr(offset);
    if (all_zero(rest)) return torn(offset, "zero-filled tail");
    if (rest.size() < kFrameHeaderSize) return torn(offset, "incomplete frame header");
    if (!intact_frame_header(rest.substr(0, kFrameHeaderSize))) {
      if ((all_zero(rest.substr(0, kFrameHeaderSize)) || header_lost_its_end(data, offset)) &&
          !intact_frame_after(data, offset + kFrameHeaderSize))
        return torn(offset, "torn frame (its header never reached the disk)");
      return corruption_error(path, offset, "frame header checksum mismatch");
    }
    const std::uint32_t body_length = load_u32(rest.data() + 4);
    const std::uint32_t body_crc = load_u32(rest.data() + 8);
    const std::uint32_t record_count = load_u32(rest.data() + 12);
    if (body_length > rest.size() - kFrameHeaderSize) return torn(offset, "incomplete frame");
    std::string_view body = rest.substr(kFrameHeaderSize, body_length);
    if (crc32c::unmask(body_crc) != crc32c::value(body)) {
      const std::uint64_t end = offset + kFrameHeaderSize + body_length;
      if (all_zero(data.substr(end)) && has_lost_sector(data, offset, end))
        return torn(offset, "torn frame (a sector of it never reached the disk)");
      return corruption_error(path, offset, "frame body checksum mismatch");
    }

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
