// Why the loop has a second window while replies wait for the disk (Server::run_polling,
// kDiskPollFactor): a sync outlasts the gap between two commands, so the command window would
// give up on every one of them and the loop would pay a wake-up per durable reply.
#include <gtest/gtest.h>

#include "core/idle_poll.h"
#include "server/config.h"

namespace holdfast {
namespace {

// Waits that each end `wait_us` after they begin, the work found while polling if the window
// still runs then, else after a sleep. Returns how many of `n` were met by polling.
int met_while_polling(IdlePoll& p, IdlePoll::Micros wait_us, int n) {
  int met = 0;
  IdlePoll::Micros t = 0;
  for (int i = 0; i < n; ++i, t += 10'000) {
    IdlePoll::Micros now = t;
    while (now < t + wait_us && p.keep_polling(now)) ++now;
    if (now == t + wait_us) {
      p.found_work(now);
      ++met;
    } else {
      p.woke(t + wait_us);
    }
  }
  return met;
}

TEST(DiskPoll, SyncsOfTwiceTheCommandWindowAreMetByTheDiskWindowOnly) {
  constexpr IdlePoll::Micros kSyncUs = 2 * kDefaultIdlePollUs;  // 200 µs, this VM's slow side
  IdlePoll commands(kDefaultIdlePollUs);
  EXPECT_EQ(met_while_polling(commands, kSyncUs, 50), 0);
  EXPECT_EQ(commands.window(), 0) << "the command window gave up polling altogether";

  IdlePoll disk(kDefaultIdlePollUs * kDiskPollFactor);
  // The first waits grow the window (250 µs after one sleep); from then on each is polled.
  EXPECT_EQ(met_while_polling(disk, kSyncUs, 50), 49);
  EXPECT_GE(disk.window(), kSyncUs);
}

TEST(DiskPoll, ADiskSlowerThanTheDiskWindowStillLetsTheLoopSleep) {
  constexpr IdlePoll::Micros kSlowSyncUs = 20 * kDefaultIdlePollUs * kDiskPollFactor;  // 20 ms
  IdlePoll disk(kDefaultIdlePollUs * kDiskPollFactor);
  EXPECT_EQ(met_while_polling(disk, kSlowSyncUs, 20), 0);
  EXPECT_EQ(disk.window(), 0) << "a loop whose disk takes 20 ms per sync polled through them";
}

}  // namespace
}  // namespace holdfast
