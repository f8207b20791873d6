#include "auth/rate_limiter.h"

#include <gtest/gtest.h>

namespace holdfast {
namespace {

constexpr Millis kStart = 1'800'000'000'000;  // on a minute boundary
constexpr Millis kMinute = 60'000;

TEST(RateLimiter, AllowsUpToTheCapWithinAnHour) {
  RateLimiter limiter(3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.consume("alice", kStart + i * 1000).allowed);
  auto d = limiter.consume("alice", kStart + 5000);
  EXPECT_FALSE(d.allowed);
  // The first attempts were in the minute starting at kStart: they leave at kStart + 60 min.
  EXPECT_EQ(d.retry_after_ms, 60 * kMinute - 5000);
  EXPECT_TRUE(limiter.consume("bob", kStart + 5000).allowed);  // per user
}

TEST(RateLimiter, RefusedAttemptsDoNotCount) {
  RateLimiter limiter(1);
  EXPECT_TRUE(limiter.consume("a", kStart).allowed);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(limiter.consume("a", kStart + 1).allowed);
  EXPECT_TRUE(limiter.consume("a", kStart + 60 * kMinute).allowed);
}

TEST(RateLimiter, TheWindowRollsMinuteByMinute) {
  RateLimiter limiter(2);
  EXPECT_TRUE(limiter.consume("a", kStart).allowed);
  EXPECT_TRUE(limiter.consume("a", kStart + 30 * kMinute).allowed);
  EXPECT_FALSE(limiter.consume("a", kStart + 59 * kMinute).allowed);
  EXPECT_TRUE(limiter.consume("a", kStart + 60 * kMinute).allowed);  // the first left
  auto d = limiter.consume("a", kStart + 61 * kMinute);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after_ms, 29 * kMinute);  // the one at +30 min leaves at +90 min
}

TEST(RateLimiter, PeekDoesNotCount) {
  RateLimiter limiter(1);
  EXPECT_TRUE(limiter.peek("a", kStart).allowed);
  EXPECT_TRUE(limiter.consume("a", kStart).allowed);
  EXPECT_FALSE(limiter.peek("a", kStart).allowed);
}

TEST(RateLimiter, MemoryIsBoundedByActiveUsers) {
  RateLimiter limiter(600);
  for (int i = 0; i < 10000; ++i)
    ASSERT_TRUE(limiter.consume("user" + std::to_string(i), kStart).allowed);
  EXPECT_EQ(limiter.tracked_users(), 10000u);
  // An hour later the same 10 users keep calling; the sweep drops everyone else.
  for (int i = 0; i < 5000; ++i)
    limiter.consume("user" + std::to_string(i % 10), kStart + 61 * kMinute);
  EXPECT_LE(limiter.tracked_users(), 10u);
}

}  // namespace
}  // namespace holdfast
