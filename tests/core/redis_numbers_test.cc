// Numbers as Redis 7.0 reads and prints them (each case checked against redis-server 7.0.15).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

#include "core/values/redis_numbers.h"

namespace holdfast {
namespace {

TEST(RedisIntegers, AcceptOnlyWhatString2llAccepts) {
  EXPECT_EQ(parse_redis_integer("0"), 0);
  EXPECT_EQ(parse_redis_integer("-12"), -12);
  EXPECT_EQ(parse_redis_integer("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse_redis_integer("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
  for (const char* bad : {"", "-", "-0", "007", "+5", " 5", "5 ", "1e3", "1.0",
                          "9223372036854775808", "-9223372036854775809", "123456789012345678901"}) {
    EXPECT_FALSE(parse_redis_integer(bad)) << bad;
  }
}

TEST(RedisScores, StrtodOverTheWholeArgument) {
  EXPECT_EQ(parse_redis_score("1.5"), 1.5);
  EXPECT_EQ(parse_redis_score("1e3"), 1000);
  EXPECT_EQ(parse_redis_score("0x10"), 16);
  EXPECT_EQ(parse_redis_score("+inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_redis_score("-inf"), -std::numeric_limits<double>::infinity());
  for (const char* bad : {"", " 1", "1 ", "nan", "abc", "1e999", "1e-999", "(1"}) {
    EXPECT_FALSE(parse_redis_score(bad)) << bad;
  }
}

TEST(RedisScoreBounds, AreLenientAsZslParseRange) {
  EXPECT_EQ(parse_score_bound("(1")->value, 1);
  EXPECT_TRUE(parse_score_bound("(1")->exclusive);
  EXPECT_EQ(parse_score_bound("")->value, 0);
  EXPECT_EQ(parse_score_bound(" 2")->value, 2);
  EXPECT_TRUE(std::isinf(parse_score_bound("1e999")->value));
  EXPECT_FALSE(parse_score_bound("a"));
  EXPECT_FALSE(parse_score_bound("nan"));
  EXPECT_FALSE(parse_score_bound("1 "));
}

TEST(RedisScoreRanges, ExclusiveEndsAndEmptiness) {
  const ScoreRange r{{1, true}, {3, false}};
  EXPECT_FALSE(r.contains(1));
  EXPECT_TRUE(r.contains(3));
  EXPECT_TRUE((ScoreRange{{2, false}, {2, true}}).empty());
  EXPECT_FALSE((ScoreRange{{2, false}, {2, false}}).empty());
}

TEST(RedisDoubles, PrintAsPercent17g) {
  EXPECT_EQ(format_redis_double(0.1), "0.10000000000000001");
  EXPECT_EQ(format_redis_double(1.5), "1.5");
  EXPECT_EQ(format_redis_double(1000), "1000");
  EXPECT_EQ(format_redis_double(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_redis_double(-std::numeric_limits<double>::infinity()), "-inf");
}

// Whole numbers are read and printed without strtod and snprintf: the same results as theirs.
TEST(RedisDoubles, WholeNumbersMatchStrtodAndPercent17g) {
  std::vector<double> values = {0,
                                -0.0,
                                1,
                                -1,
                                7,
                                1700000000000,
                                -1700000000000,
                                1e14,
                                1e15,
                                -1e15,
                                1e16,
                                999999999999999,
                                -999999999999999,
                                0.5,
                                -2.5,
                                1e15 + 1};
  std::uint64_t x = 0x9e3779b97f4a7c15;
  for (int i = 0; i < 2000; ++i) {  // a fixed sequence of whole numbers across the range
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    values.push_back(static_cast<double>(static_cast<std::int64_t>(x % 2'000'000'000'000'000) -
                                         1'000'000'000'000'000) /
                     static_cast<double>(1ULL << (x % 7 == 0 ? 3 : 0)));
  }
  for (double v : values) {
    char expected[64];
    std::snprintf(expected, sizeof(expected), "%.17g", v);
    EXPECT_EQ(format_redis_double(v), expected) << v;
    const std::optional<double> score = parse_redis_score(expected);
    ASSERT_TRUE(score) << expected;
    EXPECT_EQ(*score, std::strtod(expected, nullptr)) << expected;
    EXPECT_EQ(std::signbit(*score), std::signbit(v)) << expected;
    const std::optional<ScoreBound> bound = parse_score_bound(expected);
    ASSERT_TRUE(bound) << expected;
    EXPECT_EQ(bound->value, *score) << expected;
    EXPECT_EQ(std::signbit(bound->value), std::signbit(v)) << expected;
  }
  for (const char* text :
       {"007", "-007", "-0", "123456789012345", "1234567890123456", "-1234567890123456"}) {
    const std::optional<double> score = parse_redis_score(text);
    ASSERT_TRUE(score) << text;
    EXPECT_EQ(*score, std::strtod(text, nullptr)) << text;
    EXPECT_EQ(std::signbit(*score), std::signbit(std::strtod(text, nullptr))) << text;
  }
}

}  // namespace
}  // namespace holdfast
