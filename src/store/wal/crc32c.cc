// Two CRC32C implementations and the choice between them:
//  - SSE4.2's crc32 instruction computes exactly this polynomial, eight bytes per instruction;
//    compiled for that target in one function and used only if the CPU reports SSE4.2.
//  - Slicing-by-8: eight 256-entry tables, built at compile time, let the loop consume eight
//    input bytes per iteration with eight independent lookups instead of one byte per
//    dependent lookup. Table k holds the CRC of a byte followed by k zero bytes.
#include "store/wal/crc32c.h"

#include <array>
#include <cstddef>
#include <cstring>

namespace holdfast::wal::crc32c {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78u;  // Castagnoli, reflected

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    t[0][i] = crc;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu];
  return t;
}

constexpr Tables kTables = make_tables();

inline std::uint32_t load_le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t extend_sse42(std::uint32_t crc,
                                                             std::string_view data) {
  const char* p = data.data();
  std::size_t n = data.size();
  std::uint64_t c = ~crc;
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof word);
    c = __builtin_ia32_crc32di(c, word);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n > 0) {
    c32 = __builtin_ia32_crc32qi(c32, static_cast<unsigned char>(*p));
    ++p;
    --n;
  }
  return ~c32;
}
#endif

ExtendFn choose() {
  if (ExtendFn hardware = extend_hardware()) return hardware;
  return extend_portable;
}

}  // namespace

ExtendFn extend_hardware() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("sse4.2")) return extend_sse42;
#endif
  return nullptr;
}

std::uint32_t extend(std::uint32_t crc, std::string_view data) {
  static const ExtendFn chosen = choose();  // a function-local static: safe at any init order
  return chosen(crc, data);
}

std::uint32_t extend_portable(std::uint32_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t n = data.size();
  std::uint32_t c = ~crc;
  while (n >= 8) {
    const std::uint32_t lo = load_le32(p) ^ c;
    const std::uint32_t hi = load_le32(p + 4);
    c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
        kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xFF];
    ++p;
    --n;
  }
  return ~c;
}

}  // namespace holdfast::wal::crc32c
