#include "core/idle_poll.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace holdfast {
namespace {

// One idle spell that ends in a sleep: the loop polls from `start` until the window says stop,
// then sleeps, and work comes `idle` after `start` (or as it stops polling, if that is later).
// Returns how long it polled.
IdlePoll::Micros sleep_spell(IdlePoll& p, IdlePoll::Micros start, IdlePoll::Micros idle) {
  IdlePoll::Micros t = start;
  while (p.keep_polling(t)) ++t;
  p.woke(std::max(start + idle, t));
  return t - start;
}

TEST(IdlePoll, StartsBySleepingAtOnce) {
  IdlePoll p(100);
  EXPECT_EQ(p.window(), 0);
  EXPECT_FALSE(p.keep_polling(1000));
}

TEST(IdlePoll, WorkThatCameBackWithinTheMaximumGrowsTheWindowToItByDoubling) {
  IdlePoll p(100);
  sleep_spell(p, 0, 40);
  EXPECT_EQ(p.window(), 25);  // a quarter of the maximum first
  sleep_spell(p, 1000, 40);
  EXPECT_EQ(p.window(), 50);
  sleep_spell(p, 2000, 80);
  EXPECT_EQ(p.window(), 100);
  sleep_spell(p, 3000, 100);
  EXPECT_EQ(p.window(), 100);  // never past the maximum
}

TEST(IdlePoll, PollsForTheWholeWindowThenSleeps) {
  IdlePoll p(100);
  for (int i = 0; i < 3; ++i) sleep_spell(p, i * 1000, 10);
  ASSERT_EQ(p.window(), 100);
  EXPECT_TRUE(p.keep_polling(5000));
  EXPECT_TRUE(p.keep_polling(5099));
  EXPECT_FALSE(p.keep_polling(5100));
}

TEST(IdlePoll, LongSleepsHalveTheWindowAndThenTurnPollingOff) {
  IdlePoll p(100);
  for (int i = 0; i < 3; ++i) sleep_spell(p, i * 1000, 10);
  ASSERT_EQ(p.window(), 100);
  sleep_spell(p, 10'000, 5'000);
  EXPECT_EQ(p.window(), 50);
  sleep_spell(p, 20'000, 5'000);
  EXPECT_EQ(p.window(), 25);
  sleep_spell(p, 30'000, 5'000);
  EXPECT_EQ(p.window(), 0);
  EXPECT_FALSE(p.keep_polling(40'000));
}

TEST(IdlePoll, WorkFoundWhilePollingKeepsTheWindow) {
  IdlePoll p(100);
  for (int i = 0; i < 2; ++i) sleep_spell(p, i * 1000, 10);
  ASSERT_EQ(p.window(), 50);
  for (int i = 0; i < 5; ++i) {
    const IdlePoll::Micros start = 10'000 + i * 1000;
    EXPECT_TRUE(p.keep_polling(start));
    EXPECT_TRUE(p.idle());
    EXPECT_TRUE(p.keep_polling(start + 20));
    p.found_work(start + 20);
    EXPECT_FALSE(p.idle());
  }
  EXPECT_EQ(p.window(), 50);
}

TEST(IdlePoll, WorkArrivingFurtherApartThanTheMaximumNeverCostsAPoll) {
  IdlePoll p(100);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sleep_spell(p, i * 1000, 500), 0) << "spell " << i;
  EXPECT_EQ(p.polled_total(), 0);
}

TEST(IdlePoll, CountsTheTimeSpentPollingWhetherItFoundWorkOrNot) {
  IdlePoll p(100);
  for (int i = 0; i < 3; ++i) sleep_spell(p, i * 1000, 10);  // polled 0, 25, 50
  EXPECT_EQ(p.polled_total(), 75);
  ASSERT_TRUE(p.keep_polling(5000));
  p.found_work(5030);
  EXPECT_EQ(p.polled_total(), 105);
}

TEST(IdlePoll, ZeroTurnsPollingOff) {
  IdlePoll p(0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(sleep_spell(p, i * 1000, 1), 0);
  EXPECT_EQ(p.window(), 0);
  EXPECT_EQ(p.polled_total(), 0);
}

}  // namespace
}  // namespace holdfast
