// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of log frames and
// snapshots. Written by hand so the store needs no extra library: the SSE4.2 crc32
// instruction where the CPU has it (chosen once at run time, ~10 GB/s), else slicing-by-8
// tables (~1-2 GB/s).
//
// Stored checksums are masked as in LevelDB: the CRC of a string that contains embedded CRCs
// is otherwise prone to degenerate values.
#pragma once

#include <cstdint>
#include <string_view>

namespace holdfast::wal::crc32c {

// The CRC32C of data appended to something whose CRC32C was `crc`.
// extend(extend(0, a), b) == value(a + b).
std::uint32_t extend(std::uint32_t crc, std::string_view data);

inline std::uint32_t value(std::string_view data) { return extend(0, data); }

// The two implementations behind extend(), for the tests that hold them to each other.
std::uint32_t extend_portable(std::uint32_t crc, std::string_view data);
// Null when the CPU has no crc32 instruction.
using ExtendFn = std::uint32_t (*)(std::uint32_t, std::string_view);
ExtendFn extend_hardware();

inline constexpr std::uint32_t kMaskDelta = 0xa282ead8u;

inline constexpr std::uint32_t mask(std::uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

inline constexpr std::uint32_t unmask(std::uint32_t masked) {
  const std::uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace holdfast::wal::crc32c
