// Numbers as Redis 7.0 reads and prints them (each case checked against redis-server 7.0.15).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

}  // namespace
}  // namespace holdfast
