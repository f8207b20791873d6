#include "core/validation.h"

#include <gtest/gtest.h>

namespace holdfast {
namespace {

TEST(Validation, KeyOfOneTo1024CleanUtf8BytesIsAccepted) {
  EXPECT_FALSE(check_key("a"));
  EXPECT_FALSE(check_key(std::string(1024, 'k')));
  EXPECT_FALSE(check_key("portfolio-import:user-123"));
  EXPECT_FALSE(check_key("caf\xc3\xa9:\xf0\x9f\x94\x92"));
}

TEST(Validation, BadKeysAreInvalidArgument) {
  for (std::string bad :
       {std::string(), std::string(1025, 'k'), std::string("a\nb"), std::string("a\x7f"),
        std::string("a\0b", 3), std::string("\xc3"), std::string("\xc0\xaf"),
        std::string("\xed\xa0\x80"), std::string("\xff")}) {
    auto err = check_key(bad);
    ASSERT_TRUE(err.has_value()) << bad;
    EXPECT_EQ(err->code, ErrorCode::kInvalidArgument);
  }
}

TEST(Validation, OwnerMustBeNonEmptyAndAtMost256Bytes) {
  EXPECT_FALSE(check_label("run-01", "owner"));
  EXPECT_FALSE(check_label(std::string(256, 'o'), "owner"));
  EXPECT_TRUE(check_label("", "owner"));
  auto err = check_label(std::string(257, 'o'), "owner");
  ASSERT_TRUE(err);
  EXPECT_NE(err->message.find("owner"), std::string::npos);
}

TEST(Validation, TtlPositiveTimeoutNonNegative) {
  EXPECT_TRUE(check_ttl(0));
  EXPECT_TRUE(check_ttl(-5));
  EXPECT_FALSE(check_ttl(1));
  EXPECT_FALSE(check_timeout(0));
  EXPECT_TRUE(check_timeout(-1));
}

TEST(Validation, ParseInt64IsStrict) {
  EXPECT_EQ(parse_int64("1000"), 1000);
  EXPECT_EQ(parse_int64("-3"), -3);
  EXPECT_EQ(parse_int64("9223372036854775807"), INT64_MAX);
  for (const char* bad :
       {"", "-", "1e3", "1.0", "+5", " 5", "5 ", "0x10", "9223372036854775808", "abc"})
    EXPECT_FALSE(parse_int64(bad).has_value()) << bad;
}

}  // namespace
}  // namespace holdfast
