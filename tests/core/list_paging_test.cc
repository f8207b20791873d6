// LOCK.LIST paging helpers shared by both backends: the glob's literal prefix bounds a scan in
// key order, cursors are the hex of the last key.
#include <gtest/gtest.h>

#include "core/glob.h"
#include "core/list_cursor.h"

namespace holdfast {
namespace {

TEST(ListPaging, TheLiteralPrefixStopsAtTheFirstSpecialCharacter) {
  EXPECT_EQ(glob_literal_prefix("user:*"), "user:");
  EXPECT_EQ(glob_literal_prefix("a?c"), "a");
  EXPECT_EQ(glob_literal_prefix("[ab]x"), "");
  EXPECT_EQ(glob_literal_prefix("esc\\*aped"), "esc");
  EXPECT_EQ(glob_literal_prefix("plain"), "plain");
  EXPECT_EQ(glob_literal_prefix(""), "");
}

TEST(ListPaging, EveryKeyAGlobMatchesStartsWithItsPrefix) {
  for (const char* pattern : {"user:*", "a?c*", "jobs:[0-9]*", "x\\*y", "k"}) {
    const std::string prefix = glob_literal_prefix(pattern);
    for (const char* key : {"user:1", "abc", "abcd", "jobs:7", "x*y", "k", "zzz"}) {
      if (glob_match(pattern, key)) {
        EXPECT_TRUE(std::string(key).starts_with(prefix)) << pattern << " " << key;
      }
    }
  }
}

TEST(ListPaging, CursorsRoundTripAndForeignOnesAreRefused) {
  for (const std::string& key :
       {std::string("user:1"), std::string("\xc3\xa9t\xc3\xa9"), std::string(1024, 'k')}) {
    auto decoded = decode_list_cursor(encode_list_cursor(key));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, key);
  }
  EXPECT_EQ(encode_list_cursor("ab"), "6162");
  EXPECT_FALSE(decode_list_cursor("zz").has_value());
  EXPECT_FALSE(decode_list_cursor("abc").has_value());
  EXPECT_FALSE(decode_list_cursor("6G").has_value());
  EXPECT_FALSE(decode_list_cursor("6A").has_value());  // one spelling per key
  EXPECT_EQ(decode_list_cursor("0"), std::string());   // the start
  EXPECT_EQ(decode_list_cursor(""), std::string());
}

}  // namespace
}  // namespace holdfast
