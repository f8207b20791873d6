// Fuzzes the readers of the write-ahead log's files (docs/wal-format.md): a log segment and a
// snapshot. Any bytes must come back as records, a torn tail, or an error that names the
// damage; never a crash, a read out of bounds, or a count of records other than those visited.
//
// Checksums would stop almost every mutation at the first frame, so the first input byte picks
// how the rest is used:
//   0: the bytes are a segment (after the magic when bit 2 is set);
//   1: the bytes are frame bodies, each wrapped in a header with correct checksums, as the
//      writer frames them: u16 body length, u8 record count, body; bit 3 adds zero bytes at
//      the end, as preallocated space after a crash looks;
//   2: the bytes are a snapshot body, wrapped in magic and a correct trailer.
// Bit 4 makes the segment the newest one (a torn tail allowed) rather than an older one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "store/wal/coding.h"
#include "store/wal/crc32c.h"
#include "store/wal/format.h"
#include "store/wal/log_reader.h"
#include "store/wal/log_writer.h"
#include "store/wal/snapshot.h"

namespace {

using namespace holdfast::wal;

void check_segment(const std::string& segment, SegmentPosition position) {
  std::uint64_t visited = 0;
  auto scan = read_segment(segment, "fuzz.log", position, [&](holdfast::Change&&) { ++visited; });
  if (!scan.ok()) return;
  if (scan->valid_bytes > segment.size()) std::abort();
  if (scan->records != visited) std::abort();
  if (scan->torn_tail && position == SegmentPosition::kOlder) std::abort();
}

std::string framed(std::string_view in, bool zero_tail) {
  std::string segment(kSegmentMagic);
  while (in.size() >= 3) {
    const std::size_t length = static_cast<std::uint8_t>(in[0]) |
                               (static_cast<std::size_t>(static_cast<std::uint8_t>(in[1])) << 8);
    const std::uint32_t count = static_cast<std::uint8_t>(in[2]);
    in.remove_prefix(3);
    const std::string_view body = in.substr(0, length);
    in.remove_prefix(body.size());
    const FrameHeader header = encode_frame_header(body, count);
    segment.append(header.data(), header.size());
    segment.append(body);
  }
  if (zero_tail) segment.append(kTornWriteSector, '\0');
  return segment;
}

void check_snapshot(std::string_view body) {
  std::string file(kSnapshotMagic);
  file.append(body);
  put_u32(file, crc32c::mask(crc32c::value(body)));
  put_u64(file, body.size());
  // The segment number the body names, so that decoding goes past that check.
  std::uint64_t named = 0;
  if (body.size() >= 8) named = load_u64(body.data());
  (void)decode_snapshot(file, "fuzz.snap", named);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  const SegmentPosition position =
      (mode & 16) != 0 ? SegmentPosition::kNewest : SegmentPosition::kOlder;
  switch (mode % 3) {
    case 0:
      check_segment(
          (mode & 4) != 0 ? std::string(kSegmentMagic) + std::string(in) : std::string(in),
          position);
      break;
    case 1:
      check_segment(framed(in, (mode & 8) != 0), position);
      break;
    default:
      check_snapshot(in);
      break;
  }
  return 0;
}
