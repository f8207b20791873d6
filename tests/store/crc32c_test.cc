// CRC32C against the published test vectors (RFC 3720, appendix B.4) and its extend/mask laws.
#include "store/wal/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace holdfast::wal {
namespace {

TEST(Crc32c, MatchesPublishedVectors) {
  EXPECT_EQ(crc32c::value("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c::value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c::value(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(crc32c::value(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c::value(descending), 0x113FDB5Cu);
  EXPECT_EQ(crc32c::value(""), 0u);
}

TEST(Crc32c, ExtendingEqualsComputingTheWhole) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  const std::uint32_t whole = crc32c::value(data);
  for (std::size_t split = 0; split <= data.size(); split += 37) {
    const std::string_view v = data;
    EXPECT_EQ(crc32c::extend(crc32c::value(v.substr(0, split)), v.substr(split)), whole) << split;
  }
}

TEST(Crc32c, HardwareAndTableImplementationsAgree) {
  const crc32c::ExtendFn hardware = crc32c::extend_hardware();
  if (hardware == nullptr) {
    // Without the instruction extend() is the portable one; the vectors above cover it.
    EXPECT_EQ(crc32c::value("123456789"), crc32c::extend_portable(0, "123456789"));
    return;
  }
  std::string data;
  std::uint32_t x = 12345;
  for (int i = 0; i < 4099; ++i) {
    x = x * 1103515245u + 12345u;
    data.push_back(static_cast<char>(x >> 24));
  }
  const std::string_view v = data;
  for (std::size_t length = 0; length <= 40; ++length)  // every tail length, odd offsets
    for (std::size_t offset = 0; offset < 9; ++offset) {
      const std::string_view piece = v.substr(offset, length);
      EXPECT_EQ(hardware(7, piece), crc32c::extend_portable(7, piece)) << offset << "+" << length;
    }
  EXPECT_EQ(hardware(0, v), crc32c::extend_portable(0, v));
  EXPECT_EQ(hardware(0, "123456789"), 0xE3069283u);
}

TEST(Crc32c, MaskIsReversibleAndChangesTheValue) {
  for (const std::uint32_t crc : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu}) {
    EXPECT_NE(crc32c::mask(crc), crc);
    EXPECT_NE(crc32c::mask(crc32c::mask(crc)), crc);
    EXPECT_EQ(crc32c::unmask(crc32c::mask(crc)), crc);
  }
}

}  // namespace
}  // namespace holdfast::wal
