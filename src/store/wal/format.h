// The constants that the log writer, the log reader and the snapshot code share. The prose
// description of the format is docs/wal-format.md; change both together.
//
//   segment  := "HFWAL06\n" frame*     (older segments: "HFWAL05\n" to "HFWAL01\n")
//   frame    := header_crc:u32 body_length:u32 body_crc:u32 record_count:u32 body
//   record   := type:u8 payload_length:u32 payload
//   snapshot := "HFSNAP5\n" body body_crc:u32 body_length:u64   (older: "HFSNAP4\n" to "HFSNAP1\n")
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace holdfast::wal {

// --- log segments ---
// Version 2 adds the LeaseHorizon record; version 3 the mode of a shared or semaphore hold
// (kHoldModeFollows); version 4 a hold's lock-delay (kHoldDelayFollows); version 5 the
// GroupGranted record of a multi-key grant; version 6 the ValueEdit record of typed values.
// Older segments are read as before.
inline constexpr std::string_view kSegmentMagic = "HFWAL06\n";
inline constexpr std::string_view kSegmentMagicV5 = "HFWAL05\n";
inline constexpr std::string_view kSegmentMagicV4 = "HFWAL04\n";
inline constexpr std::string_view kSegmentMagicV3 = "HFWAL03\n";
inline constexpr std::string_view kSegmentMagicV2 = "HFWAL02\n";
inline constexpr std::string_view kSegmentMagicV1 = "HFWAL01\n";
inline constexpr std::size_t kSegmentHeaderSize = 8;
static_assert(kSegmentMagic.size() == kSegmentHeaderSize);
static_assert(kSegmentMagicV5.size() == kSegmentHeaderSize);
static_assert(kSegmentMagicV4.size() == kSegmentHeaderSize);
static_assert(kSegmentMagicV3.size() == kSegmentHeaderSize);
static_assert(kSegmentMagicV2.size() == kSegmentHeaderSize);
static_assert(kSegmentMagicV1.size() == kSegmentHeaderSize);

// In a hold's kind byte: a shared or semaphore hold's mode:u8 take:u32 permits:u32 follow
// (segment version 3 and snapshot version 2 on). An exclusive hold never sets it, so its bytes
// are the same as in older versions.
inline constexpr std::uint8_t kHoldModeFollows = 0x80;
// In a hold's kind byte: lock_delay_ms:u32 follows, after the mode tail if any (segment
// version 4 and snapshot version 3 on). A hold without a lock-delay never sets it.
inline constexpr std::uint8_t kHoldDelayFollows = 0x40;

// header_crc, body_length, body_crc, record_count.
inline constexpr std::size_t kFrameHeaderSize = 16;
// A batch bigger than this is written as several frames (u32 lengths, bounded reads).
inline constexpr std::size_t kMaxFrameBody = std::size_t{64} << 20;

// Torn writes (docs/wal-format.md, section 5): a crash loses whole sectors of this size, and a
// zero run inside one frame counts as a lost sector only from this length on.
inline constexpr std::size_t kTornWriteSector = 512;
inline constexpr std::size_t kMinLostSectorPiece = 16;

// type:u8 payload_length:u32
inline constexpr std::size_t kRecordHeaderSize = 5;

// The record types, one per Change alternative. 0 is never a type, so zero-filled space can
// never be read as a record.
enum class RecordType : std::uint8_t {
  kGranted = 1,
  kRenewed = 2,
  kReleased = 3,
  kRuleSetPut = 4,
  kRuleSetDeleted = 5,
  kLeaseHorizon = 6,  // segment version 2 on
  kGroupGranted = 7,  // segment version 5 on
  kValueEdit = 8,     // segment version 6 on: a change to a typed value (store/wal/value_codec.h)
};

// --- snapshots ---
// Version 2: holds may carry a mode (kHoldModeFollows); version 3 a lock-delay
// (kHoldDelayFollows). Version 4: holds of one multi-key group share a handle (an older reader
// would split the group). Version 5: a value_count after hold_count and the typed values after
// the holds. Older snapshots are read as before.
inline constexpr std::string_view kSnapshotMagic = "HFSNAP5\n";
inline constexpr std::string_view kSnapshotMagicV4 = "HFSNAP4\n";
inline constexpr std::string_view kSnapshotMagicV3 = "HFSNAP3\n";
inline constexpr std::string_view kSnapshotMagicV2 = "HFSNAP2\n";
inline constexpr std::string_view kSnapshotMagicV1 = "HFSNAP1\n";
inline constexpr std::size_t kSnapshotHeaderSize = 8;
static_assert(kSnapshotMagic.size() == kSnapshotHeaderSize);
static_assert(kSnapshotMagicV4.size() == kSnapshotHeaderSize);
static_assert(kSnapshotMagicV3.size() == kSnapshotHeaderSize);
static_assert(kSnapshotMagicV2.size() == kSnapshotHeaderSize);
static_assert(kSnapshotMagicV1.size() == kSnapshotHeaderSize);
// body_crc:u32 body_length:u64
inline constexpr std::size_t kSnapshotTrailerSize = 12;

// --- the data dir ---
inline constexpr std::string_view kLockFileName = "LOCK";
inline constexpr std::string_view kSegmentPrefix = "wal-";
inline constexpr std::string_view kSegmentSuffix = ".log";
inline constexpr std::string_view kSnapshotPrefix = "snap-";
inline constexpr std::string_view kSnapshotSuffix = ".snap";
inline constexpr std::string_view kTempSuffix = ".tmp";
// File numbers are printed with this many decimal digits so names sort in number order.
inline constexpr int kFileNumberDigits = 20;

// --- defaults of WalOptions ---
// The server encodes a snapshot of fewer holds than this on the loop (well under a millisecond
// of its time) rather than fork a child for it, whose copy-on-write faults cost the loop more.
inline constexpr std::size_t kEncodeInChildFromHolds = 4096;
inline constexpr std::uint64_t kDefaultSnapshotThresholdBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kDefaultSegmentBytes = std::uint64_t{16} << 20;
// Zero-filled space is written ahead of the frames this much at a time (fsync always).
inline constexpr std::uint64_t kReserveChunkBytes = std::uint64_t{1} << 20;

// For the static_assert of a std::visit's last branch over Change: a new alternative with no
// branch of its own fails to compile there.
template <class>
inline constexpr bool kUnhandled = false;

}  // namespace holdfast::wal
