// Records: the binary form of one Change (docs/wal-format.md, "Record types"), and of a
// HoldState, which Granted records and snapshots share.
//
//   record := type:u8 payload_length:u32 payload
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/hold.h"
#include "store/wal/coding.h"
#include "store/wal/format.h"

namespace holdfast::wal {

RecordType record_type_of(const Change& change);
std::string_view record_type_name(RecordType type);
// nullopt for a byte that is not a known type.
std::optional<RecordType> parse_record_type(std::uint8_t byte);

// Appends the record of `change` (header and payload) to `out`; returns its size in bytes.
// Appending to a reused buffer is the point: see coding.h.
std::size_t append_record(std::string& out, const Change& change);

// The smallest `hold` encoding (all strings empty): bounds counts read from damaged files.
inline constexpr std::size_t kMinHoldSize = 4 + 16 + 8 + 4 + 4 + 4 + 8 + 8 + 1 + 1;
// The mode tail of a shared or semaphore hold: mode:u8 take:u32 permits:u32.
inline constexpr std::size_t kHoldModeSize = 1 + 4 + 4;
// The lock-delay tail of a hold that has one: lock_delay_ms:u32.
inline constexpr std::size_t kHoldDelaySize = 4;

// Appends the `hold` encoding (without a record header).
void append_hold(std::string& out, const HoldView& hold);
inline void append_hold(std::string& out, const HoldState& hold) {
  append_hold(out, view_of(hold));
}

// Reads a `hold`; on malformed input marks `in` failed (check in.ok()).
HoldState read_hold(Decoder& in);

// Decodes the payload of a record of the given type. The error message says what is wrong;
// the caller adds where (file and offset).
Result<Change> decode_record(RecordType type, std::string_view payload);

// One record split off the front of a frame body.
struct RecordView {
  RecordType type;
  std::string_view payload;
};

// Splits the next record off `body` (advancing it). An error if the header is cut short, the
// payload runs past the body or the type is unknown.
Result<RecordView> next_record(std::string_view& body);

}  // namespace holdfast::wal
