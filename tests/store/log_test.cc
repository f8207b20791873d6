// The log writer and reader on the in-memory file system: round trips, torn tails of every
// length, bit flips, and where each counts as the end of the log or as corruption.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "store/wal/fake_file_system.h"
#include "store/wal/format.h"
#include "store/wal/log_reader.h"
#include "store/wal/log_writer.h"
#include "store/wal/record.h"
#include "test_support.h"

namespace holdfast::wal {
namespace {

using testing::every_kind_of_change;
using testing::make_hold;
using testing::same_change;

const std::string kPath = "/data/wal-00000000000000000001.log";

// Writes each batch as one frame; returns the segment bytes and the offset where each frame
// starts.
struct Written {
  std::string bytes;
  std::vector<std::uint64_t> frame_starts;
};

Written write_batches(const std::vector<std::vector<Change>>& batches) {
  FakeFileSystem fs;
  EXPECT_TRUE(fs.create_dir("/data").ok());
  auto writer = LogWriter::create(fs, "/data", kPath, true);
  EXPECT_TRUE(writer.ok());
  Written out;
  std::string buffer;
  for (const auto& batch : batches) {
    buffer.clear();
    for (const Change& c : batch) append_record(buffer, c);
    out.frame_starts.push_back((*writer)->size());
    EXPECT_TRUE((*writer)->add_records(buffer).ok());
    EXPECT_TRUE((*writer)->sync().ok());
  }
  out.bytes = *fs.contents(kPath);
  EXPECT_EQ(out.bytes.size(), (*writer)->size());
  return out;
}

struct Read {
  Result<SegmentScan> scan;
  std::vector<Change> changes;
};

Read read(std::string_view bytes, SegmentPosition position = SegmentPosition::kNewest) {
  std::vector<Change> changes;
  Result<SegmentScan> scan =
      read_segment(bytes, kPath, position, [&](Change&& c) { changes.push_back(std::move(c)); });
  return Read{std::move(scan), std::move(changes)};
}

std::vector<std::vector<Change>> three_batches() {
  return {{Granted{make_hold("a", 1)}, Granted{make_hold("b", 2)}},
          {Renewed{"a", 1, testing::kStart + 99}, Released{"b", 2}, RuleSetPut{"r", "x = 1"}},
          {Granted{make_hold("c", 3)}}};
}

std::size_t count(const std::vector<std::vector<Change>>& batches, std::size_t first_n) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < first_n; ++i) n += batches[i].size();
  return n;
}

TEST(Log, EveryChangeKindRoundTrips) {
  const std::vector<Change> changes = every_kind_of_change();
  const Written w = write_batches({changes, {changes[0]}});
  const Read r = read(w.bytes);
  ASSERT_TRUE(r.scan.ok()) << r.scan.error().message;
  EXPECT_FALSE(r.scan->torn_tail);
  EXPECT_EQ(r.scan->frames, 2u);
  EXPECT_EQ(r.scan->records, changes.size() + 1);
  EXPECT_EQ(r.scan->valid_bytes, w.bytes.size());
  ASSERT_EQ(r.changes.size(), changes.size() + 1);
  for (std::size_t i = 0; i < changes.size(); ++i)
    EXPECT_TRUE(same_change(r.changes[i], changes[i]));
  EXPECT_TRUE(same_change(r.changes.back(), changes[0]));
}

TEST(Log, SegmentWithOnlyItsMagicIsAnEmptyLog) {
  const Written w = write_batches({});
  ASSERT_EQ(w.bytes, kSegmentMagic);
  const Read r = read(w.bytes);
  ASSERT_TRUE(r.scan.ok());
  EXPECT_EQ(r.scan->records, 0u);
  EXPECT_EQ(r.scan->valid_bytes, kSegmentHeaderSize);
  EXPECT_FALSE(r.scan->torn_tail);
}

TEST(Log, EmptyOrHalfWrittenMagicInTheNewestSegmentIsAnEmptyLog) {
  for (std::size_t n = 0; n < kSegmentHeaderSize; ++n) {
    const Read r = read(kSegmentMagic.substr(0, n));
    ASSERT_TRUE(r.scan.ok()) << n;
    EXPECT_EQ(r.scan->valid_bytes, 0u);
    EXPECT_EQ(r.scan->torn_tail, n > 0);
  }
}

TEST(Log, TruncatedTrailingFrameIsIgnoredAtEveryLength) {
  const auto batches = three_batches();
  const Written w = write_batches(batches);
  const std::uint64_t last = w.frame_starts.back();
  for (std::uint64_t end = last + 1; end < w.bytes.size(); ++end) {
    const Read r = read(std::string_view(w.bytes).substr(0, end));
    ASSERT_TRUE(r.scan.ok()) << "cut at " << end << ": " << r.scan.error().message;
    EXPECT_TRUE(r.scan->torn_tail) << end;
    EXPECT_EQ(r.scan->valid_bytes, last) << end;
    EXPECT_EQ(r.changes.size(), count(batches, 2)) << end;
  }
}

TEST(Log, ZeroFilledTailIsTheEndOfTheLog) {
  const auto batches = three_batches();
  Written w = write_batches(batches);
  w.bytes += std::string(4096, '\0');  // the file grew but its data never reached the disk
  Read r = read(w.bytes);
  ASSERT_TRUE(r.scan.ok()) << r.scan.error().message;
  EXPECT_TRUE(r.scan->torn_tail);
  EXPECT_EQ(r.scan->valid_bytes, w.bytes.size() - 4096);
  EXPECT_EQ(r.changes.size(), count(batches, 3));

  // The same when the zeros replace the last frame.
  std::string zeroed = w.bytes.substr(0, w.frame_starts.back());
  zeroed += std::string(100, '\0');
  r = read(zeroed);
  ASSERT_TRUE(r.scan.ok());
  EXPECT_EQ(r.scan->valid_bytes, w.frame_starts.back());
}

TEST(Log, FlippedByteInTheMiddleIsReportedWithFileAndOffset) {
  const Written w = write_batches(three_batches());
  const std::uint64_t start = w.frame_starts[1];
  const std::uint64_t end = w.frame_starts[2];
  for (std::uint64_t at = start; at < end; ++at) {
    std::string damaged = w.bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x20);
    const Read r = read(damaged);
    ASSERT_FALSE(r.scan.ok()) << "flip at " << at << " went unnoticed";
    const Error& e = r.scan.error();
    EXPECT_NE(e.message.find(kPath), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("at offset " + std::to_string(start)), std::string::npos) << e.message;
    ASSERT_EQ(e.details.size(), 2u);
    EXPECT_EQ(std::get<std::string>(e.details[0].second), kPath);
    EXPECT_EQ(std::get<std::int64_t>(e.details[1].second), static_cast<std::int64_t>(start));
  }
}

TEST(Log, FlippedByteInTheLastCompleteFrameIsCorruptionNotATornTail) {
  // The last frame may have been acknowledged: a complete frame that fails its checksum is
  // never dropped quietly.
  const Written w = write_batches(three_batches());
  for (std::uint64_t at = w.frame_starts.back(); at < w.bytes.size(); ++at) {
    std::string damaged = w.bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x01);
    EXPECT_FALSE(read(damaged).scan.ok()) << at;
  }
}

TEST(Log, TornTailInAnOlderSegmentIsCorruption) {
  const Written w = write_batches(three_batches());
  const Read r =
      read(std::string_view(w.bytes).substr(0, w.bytes.size() - 1), SegmentPosition::kOlder);
  ASSERT_FALSE(r.scan.ok());
  EXPECT_NE(r.scan.error().message.find("not the newest"), std::string::npos);
  EXPECT_FALSE(read("", SegmentPosition::kOlder).scan.ok());
}

TEST(Log, BadMagicIsCorruption) {
  Written w = write_batches(three_batches());
  w.bytes[2] = 'X';
  EXPECT_FALSE(read(w.bytes).scan.ok());
  EXPECT_FALSE(read("garbage").scan.ok());
}

TEST(Log, AVersionOneSegmentIsStillRead) {
  std::string records;
  append_record(records, Released{"k", 1});
  const FrameHeader header = encode_frame_header(records, 1);
  std::string bytes(kSegmentMagicV1);  // frames did not change with version 2
  bytes.append(header.data(), header.size());
  bytes += records;
  const Read r = read(bytes);
  ASSERT_TRUE(r.scan.ok()) << r.scan.error().message;
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_TRUE(same_change(r.changes[0], Released{"k", 1}));
}

TEST(Log, FrameWhoseRecordsDoNotMatchItsCountIsCorruption) {
  std::string records;
  append_record(records, Released{"k", 1});
  const FrameHeader header = encode_frame_header(records, 2);
  std::string bytes(kSegmentMagic);
  bytes.append(header.data(), header.size());
  bytes += records;
  const Read r = read(bytes);
  ASSERT_FALSE(r.scan.ok());
  EXPECT_NE(r.scan.error().message.find("header says 2"), std::string::npos);
}

TEST(Log, BatchLargerThanTheFrameLimitIsSplitIntoSeveralFrames) {
  const std::string big(std::size_t{5} << 20, 'x');
  std::vector<Change> batch;
  for (int i = 0; i < 14; ++i) batch.push_back(RuleSetPut{"r" + std::to_string(i), big});
  const Written w = write_batches({batch});
  const Read r = read(w.bytes);
  ASSERT_TRUE(r.scan.ok()) << r.scan.error().message;
  EXPECT_EQ(r.scan->frames, 2u);
  ASSERT_EQ(r.changes.size(), batch.size());
  EXPECT_EQ(std::get<RuleSetPut>(r.changes.back()).name, "r13");
}

// --- preallocated segments: what a crash leaves in reserved (zero) space ---

// Three batches whose last frame spans several 512-byte sectors, followed by reserved space.
struct Preallocated {
  std::vector<std::vector<Change>> batches;
  Written written;
  std::string bytes;  // the segment as a reader sees it: frames, then zeros
};

Preallocated preallocated_segment() {
  Preallocated p;
  p.batches = three_batches();
  p.batches.back().push_back(RuleSetPut{"big", std::string(1500, 'r')});
  p.written = write_batches(p.batches);
  p.bytes = p.written.bytes + std::string(8192, '\0');
  return p;
}

TEST(Log, ReservedSpaceAfterTheLastFrameIsTheEndOfTheLog) {
  const Preallocated p = preallocated_segment();
  const Read r = read(p.bytes);
  ASSERT_TRUE(r.scan.ok()) << r.scan.error().message;
  EXPECT_EQ(r.scan->valid_bytes, p.written.bytes.size());
  EXPECT_TRUE(r.scan->torn_tail);  // recovery cuts the reserved space off
  EXPECT_EQ(r.changes.size(), count(p.batches, 3));
}

TEST(Log, LastFrameWithASectorThatNeverReachedTheDiskIsATornWrite) {
  const Preallocated p = preallocated_segment();
  const std::uint64_t last = p.written.frame_starts.back();
  const std::uint64_t end = p.written.bytes.size();
  ASSERT_GT(end - last, 3 * kTornWriteSector);
  int sectors = 0;
  for (std::uint64_t sector = last / kTornWriteSector * kTornWriteSector; sector < end;
       sector += kTornWriteSector) {
    const std::uint64_t from = std::max(sector, last);
    const std::uint64_t to = std::min<std::uint64_t>(sector + kTornWriteSector, p.bytes.size());
    if (std::min(to, end) - from < kMinLostSectorPiece) continue;
    std::string torn = p.bytes;
    testing::zero_range(torn, from, to);
    const Read r = read(torn);
    ASSERT_TRUE(r.scan.ok()) << "sector at " << sector << ": " << r.scan.error().message;
    EXPECT_TRUE(r.scan->torn_tail);
    EXPECT_EQ(r.scan->valid_bytes, last) << sector;
    EXPECT_EQ(r.changes.size(), count(p.batches, 2)) << sector;
    ++sectors;
  }
  EXPECT_GE(sectors, 3);
}

TEST(Log, LastFrameWhoseHeaderLostTheSectorAfterABoundaryIsATornWrite) {
  // The header straddles a sector boundary: its first bytes reached the disk, the rest did not.
  int cases = 0;
  for (std::size_t pad = 1; pad < 600; ++pad) {
    std::vector<std::vector<Change>> batches = three_batches();
    batches.front().push_back(RuleSetPut{"pad", std::string(pad, 'p')});
    batches.back().push_back(RuleSetPut{"big", std::string(1500, 'r')});
    const Written w = write_batches(batches);
    const std::uint64_t last = w.frame_starts.back();
    const std::uint64_t boundary = testing::next_sector(last);
    if (boundary <= last || boundary >= last + kFrameHeaderSize) continue;
    std::string disk = w.bytes + std::string(4096, '\0');
    testing::zero_range(disk, boundary, boundary + kTornWriteSector);
    const Read r = read(disk);
    ASSERT_TRUE(r.scan.ok()) << "pad " << pad << ": " << r.scan.error().message;
    EXPECT_TRUE(r.scan->torn_tail);
    EXPECT_EQ(r.scan->valid_bytes, last) << "pad " << pad;
    EXPECT_EQ(r.changes.size(), count(batches, 2)) << "pad " << pad;
    // A flipped bit in the same header is not a lost sector.
    std::string flipped = w.bytes + std::string(4096, '\0');
    flipped[last + 2] = static_cast<char>(flipped[last + 2] ^ 0x10);
    EXPECT_FALSE(read(flipped).scan.ok()) << "pad " << pad;
    ++cases;
  }
  EXPECT_GE(cases, 10);
}

TEST(Log, BitFlipInTheLastFrameBeforeReservedSpaceIsStillCorruption) {
  const Preallocated p = preallocated_segment();
  for (std::uint64_t at = p.written.frame_starts.back(); at < p.written.bytes.size(); at += 7) {
    std::string damaged = p.bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x04);
    const Read r = read(damaged);
    ASSERT_FALSE(r.scan.ok()) << "flip at " << at << " was taken for a torn write";
    EXPECT_NE(
        r.scan.error().message.find("at offset " + std::to_string(p.written.frame_starts.back())),
        std::string::npos);
  }
}

TEST(Log, ZeroedSectorFollowedByAnotherFrameIsCorruption) {
  // Frames after it were written, and so possibly acknowledged, after it: not a torn tail.
  Preallocated p = preallocated_segment();
  std::string bytes = p.written.bytes;
  const std::uint64_t last = p.written.frame_starts.back();
  bytes += bytes.substr(last);  // the big frame once more
  const std::uint64_t sector = testing::next_sector(last);
  testing::zero_range(bytes, sector, sector + kTornWriteSector);
  bytes += std::string(4096, '\0');
  const Read r = read(bytes);
  ASSERT_FALSE(r.scan.ok());
  EXPECT_NE(r.scan.error().message.find("at offset " + std::to_string(last)), std::string::npos);
  // The same with the header's sector lost.
  testing::zero_range(bytes, last, sector);
  EXPECT_FALSE(read(bytes).scan.ok());
}

TEST(Log, TornWriteInAnOlderSegmentIsCorruption) {
  const Preallocated p = preallocated_segment();
  std::string torn = p.bytes;
  const std::uint64_t sector = testing::next_sector(p.written.frame_starts.back());
  testing::zero_range(torn, sector, sector + kTornWriteSector);
  EXPECT_TRUE(read(torn).scan.ok());
  EXPECT_FALSE(read(torn, SegmentPosition::kOlder).scan.ok());
  EXPECT_FALSE(read(p.bytes, SegmentPosition::kOlder).scan.ok()) << "reserved space left over";
}

TEST(Log, ReservedSegmentWhoseMagicNeverReachedTheDiskIsAnEmptyLog) {
  const std::string zeros(4096, '\0');
  const Read r = read(zeros);
  ASSERT_TRUE(r.scan.ok()) << r.scan.error().message;
  EXPECT_EQ(r.scan->valid_bytes, 0u);
  EXPECT_TRUE(r.scan->torn_tail);
  EXPECT_FALSE(read(zeros, SegmentPosition::kOlder).scan.ok());
}

TEST(Log, WriterReservesSpaceAndAppendsFromTheStart) {
  FakeFileSystem fs;
  ASSERT_TRUE(fs.create_dir("/data").ok());
  auto writer = LogWriter::create(fs, "/data", kPath, true, 4096);
  ASSERT_TRUE(writer.ok());
  std::string records;
  append_record(records, Granted{make_hold("a", 1)});
  ASSERT_TRUE((*writer)->add_records(records).ok());
  ASSERT_TRUE((*writer)->sync().ok());
  std::string bytes = *fs.contents(kPath);
  ASSERT_EQ(bytes.size(), 4096u);
  const Read r = read(bytes);
  ASSERT_TRUE(r.scan.ok());
  EXPECT_EQ(r.scan->valid_bytes, (*writer)->size());
  EXPECT_EQ(r.changes.size(), 1u);
  // Writing on extends the zeros a chunk at a time, always half a chunk ahead.
  for (std::uint64_t t = 2; t < 200; ++t) {
    records.clear();
    append_record(records, Granted{make_hold("k" + std::to_string(t), t)});
    ASSERT_TRUE((*writer)->add_records(records).ok());
    bytes = *fs.contents(kPath);
    ASSERT_EQ(bytes.size() % 4096, 0u) << t;
    ASSERT_GE(bytes.size(), (*writer)->size() + 2048) << t;
  }
  ASSERT_GT((*writer)->size(), 3 * 4096u);
  const Read all = read(bytes);
  ASSERT_TRUE(all.scan.ok());
  EXPECT_EQ(all.changes.size(), 199u);
  // Finishing cuts the reserved space off: an older segment ends with its last frame.
  ASSERT_TRUE((*writer)->finish(true).ok());
  bytes = *fs.contents(kPath);
  EXPECT_EQ(bytes.size(), (*writer)->size());
  EXPECT_TRUE(read(bytes, SegmentPosition::kOlder).scan.ok());
}

// A randomized check of the torn-write rule: batches are acknowledged one by one, then a crash
// interrupts the next one so that any subset of its 512-byte sectors reached the disk (a sector
// that did not keeps what it held before: earlier frames, then zeros). Recovery must keep every
// acknowledged batch and take the interrupted one whole or not at all, or refuse to start;
// it may refuse only when the interrupted frame's header straddles a sector boundary and one
// half of it was lost, or when every lost piece of the frame is shorter than
// kMinLostSectorPiece. And a flipped bit anywhere in the acknowledged frames is corruption.
TEST(Log, RandomTornWritesNeverLoseAcknowledgedBatchesAndBitFlipsAreCaught) {
  std::uint32_t state = 2024;
  auto next = [&](std::uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  int accepted_without = 0, accepted_with = 0, refused = 0, flips = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::vector<Change>> batches;
    std::uint64_t token = 1;
    const std::uint32_t batch_count = 2 + next(4);
    for (std::uint32_t b = 0; b < batch_count; ++b) {
      std::vector<Change> batch;
      const std::uint32_t records = 1 + next(12);
      for (std::uint32_t r = 0; r < records; ++r, ++token) {
        switch (next(4)) {
          case 0:
            batch.push_back(Released{"key/" + std::to_string(next(50)), token});
            break;
          case 1:
            batch.push_back(RuleSetPut{"r", std::string(1 + next(900), 'x')});
            break;
          default:
            batch.push_back(Granted{make_hold("key/" + std::to_string(next(50)), token)});
        }
      }
      batches.push_back(std::move(batch));
    }
    const Written w = write_batches(batches);
    const std::uint64_t last = w.frame_starts.back();  // the interrupted batch's frame
    const std::uint64_t end = w.bytes.size();
    const std::size_t acknowledged = count(batches, batches.size() - 1);

    // The crash: each sector of the last frame landed or not.
    std::string disk = w.bytes + std::string(4096, '\0');
    bool all_landed = true, header_split_lost = false, long_piece_lost = false;
    for (std::uint64_t sector = last / kTornWriteSector * kTornWriteSector; sector < end;
         sector += kTornWriteSector) {
      if (next(3) != 0) continue;  // landed
      all_landed = false;
      const std::uint64_t from = std::max(sector, last);
      const std::uint64_t to = std::min<std::uint64_t>(sector + kTornWriteSector, end);
      if (to - from >= kMinLostSectorPiece) long_piece_lost = true;
      testing::zero_range(disk, from, to);
      const bool header_in_sector = from < last + kFrameHeaderSize;
      const bool header_straddles =
          last / kTornWriteSector != (last + kFrameHeaderSize - 1) / kTornWriteSector;
      if (header_in_sector && header_straddles) header_split_lost = true;
    }
    // A lost piece that held only zeros anyway (e.g. the last flags of a record) lost nothing.
    all_landed = disk.compare(last, end - last, w.bytes, last, end - last) == 0;
    const Read r = read(disk);
    if (!r.scan.ok()) {
      ++refused;
      // The documented refusals: the first part of a straddling header lost (the rest survived),
      // or only pieces too short to tell from data.
      EXPECT_TRUE(header_split_lost || !long_piece_lost)
          << "round " << round << ": " << r.scan.error().message;
    } else if (r.changes.size() == acknowledged) {
      ++accepted_without;
      EXPECT_FALSE(all_landed) << "round " << round << ": a whole batch was dropped";
      EXPECT_EQ(r.scan->valid_bytes, last);
    } else {
      ++accepted_with;
      EXPECT_TRUE(all_landed) << "round " << round;
      EXPECT_EQ(r.changes.size(), acknowledged + batches.back().size()) << "round " << round;
    }

    // A bit flip in what was acknowledged (the interrupted batch never written at all).
    std::string flipped = w.bytes.substr(0, last) + std::string(4096, '\0');
    const std::uint64_t at =
        kSegmentHeaderSize + next(static_cast<std::uint32_t>(last - kSegmentHeaderSize));
    flipped[at] = static_cast<char>(flipped[at] ^ (1 << next(8)));
    EXPECT_FALSE(read(flipped).scan.ok()) << "round " << round << ": flip at " << at << " missed";
    ++flips;
  }
  // The rounds cover every outcome.
  EXPECT_GT(accepted_without, 400);
  EXPECT_GT(accepted_with, 200);
  EXPECT_EQ(flips, 2000);
  std::printf("torn writes: %d cut, %d kept whole, %d refused\n", accepted_without, accepted_with,
              refused);
}

}  // namespace
}  // namespace holdfast::wal
