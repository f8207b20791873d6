#include "core/handle.h"

#include <gtest/gtest.h>

#include <set>

namespace holdfast {
namespace {

TEST(Handle, PrintsAs26CrockfordCharactersAndParsesBack) {
  HandleSource source;
  for (int i = 0; i < 1000; ++i) {
    Handle h = source.next();
    std::string text = h.to_string();
    ASSERT_EQ(text.size(), kHandleChars);
    for (char c : text)
      EXPECT_NE(std::string("0123456789ABCDEFGHJKMNPQRSTVWXYZ").find(c), std::string::npos);
    auto back = Handle::parse(text);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, h);
  }
}

TEST(Handle, ParseIsCaseInsensitive) {
  HandleSource source;
  Handle h = source.next();
  std::string lower = h.to_string();
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_EQ(Handle::parse(lower), h);
}

TEST(Handle, RejectsWrongLengthAndForeignCharacters) {
  EXPECT_FALSE(Handle::parse("").has_value());
  EXPECT_FALSE(Handle::parse("0123").has_value());
  EXPECT_FALSE(Handle::parse(std::string(26, 'U')).has_value());        // U is not in the alphabet
  EXPECT_FALSE(Handle::parse("8" + std::string(25, '0')).has_value());  // above 128 bits
  EXPECT_FALSE(Handle::parse(std::string(25, '0') + "u").has_value());  // nor in lower case
  EXPECT_FALSE(Handle::parse(std::string(25, '0') + "i").has_value());
  EXPECT_FALSE(Handle::parse(std::string(26, '\0')).has_value());
  EXPECT_FALSE(Handle::parse(std::string(25, '0') + "\xff").has_value());
  EXPECT_TRUE(Handle::parse(std::string(25, '0') + "z").has_value());
}

TEST(Handle, ConsecutiveHandlesNeverRepeat) {
  HandleSource source;
  std::set<std::string> seen;
  for (int i = 0; i < 20000; ++i) EXPECT_TRUE(seen.insert(source.next().to_string()).second);
}

}  // namespace
}  // namespace holdfast
