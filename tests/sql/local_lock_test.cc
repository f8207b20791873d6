// The in-process level: FIFO hand-over, deadlines, reentrancy, and slot clean-up. Threads are
// sequenced with waiters() (how many callers are queued), not with sleeps.
#include "local_lock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "holdfast/errors.h"

namespace holdfast::sql {
namespace {

using std::chrono::steady_clock;
constexpr auto kLong = std::chrono::seconds(30);

void wait_for_waiters(const LocalLockTable& table, std::string_view name, std::size_t n) {
  while (table.waiters(name) != n) std::this_thread::yield();
}

TEST(LocalLockTable, FreeNameIsTakenAtOnce) {
  LocalLockTable table;
  auto guard = table.acquire("a", steady_clock::now());  // deadline already passed: no wait
  EXPECT_TRUE(guard.has_value());
}

TEST(LocalLockTable, HeldNameTimesOutAtTheDeadlineNotBefore) {
  LocalLockTable table;
  auto holder = table.acquire("a", steady_clock::now() + kLong);
  std::optional<LocalLockTable::Guard> second;
  std::thread t([&] {
    const auto start = steady_clock::now();
    second = table.acquire("a", start + std::chrono::milliseconds(50));
    EXPECT_GE(steady_clock::now() - start, std::chrono::milliseconds(50));
  });
  t.join();
  EXPECT_FALSE(second.has_value());
  EXPECT_EQ(table.waiters("a"), 0u);  // the timed-out waiter left the queue
}

TEST(LocalLockTable, DifferentNamesDoNotContend) {
  LocalLockTable table;
  auto a = table.acquire("a", steady_clock::now() + kLong);
  std::optional<LocalLockTable::Guard> b;
  std::thread t([&] { b = table.acquire("b", steady_clock::now()); });
  t.join();
  EXPECT_TRUE(b.has_value());
}

TEST(LocalLockTable, WaitersAreServedInArrivalOrder) {
  LocalLockTable table;
  std::optional<LocalLockTable::Guard> holder = table.acquire("a", steady_clock::now() + kLong);
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto g = table.acquire("a", steady_clock::now() + kLong);
      ASSERT_TRUE(g.has_value());
      std::lock_guard lock(mu);
      order.push_back(i);
    });
    wait_for_waiters(table, "a", static_cast<std::size_t>(i + 1));  // i is queued before i+1
  }
  holder.reset();
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(LocalLockTable, ReleaseHandsOverSoALaterArrivalCannotBarge) {
  LocalLockTable table;
  std::optional<LocalLockTable::Guard> holder = table.acquire("a", steady_clock::now() + kLong);
  std::optional<LocalLockTable::Guard> queued;
  std::thread waiter([&] { queued = table.acquire("a", steady_clock::now() + kLong); });
  wait_for_waiters(table, "a", 1);
  holder.reset();  // granted to the queued waiter, even if it has not run yet
  std::optional<LocalLockTable::Guard> barger;
  std::thread late([&] { barger = table.acquire("a", steady_clock::now()); });
  late.join();
  waiter.join();
  EXPECT_TRUE(queued.has_value());
  EXPECT_FALSE(barger.has_value());
}

TEST(LocalLockTable, SameThreadAgainThrowsInsteadOfWaitingForItself) {
  LocalLockTable table;
  auto guard = table.acquire("a", steady_clock::now());
  EXPECT_THROW(table.acquire("a", steady_clock::now() + kLong), InvalidArgumentError);
}

TEST(LocalLockTable, HandedOverHolderIsAlsoProtectedAgainstReentry) {
  LocalLockTable table;
  std::optional<LocalLockTable::Guard> holder = table.acquire("a", steady_clock::now() + kLong);
  bool threw = false;
  std::thread t([&] {
    auto g = table.acquire("a", steady_clock::now() + kLong);
    try {
      table.acquire("a", steady_clock::now() + kLong);
    } catch (const InvalidArgumentError&) {
      threw = true;
    }
  });
  wait_for_waiters(table, "a", 1);
  holder.reset();
  t.join();
  EXPECT_TRUE(threw);
}

TEST(LocalLockTable, NameIsFreeAgainAfterRelease) {
  LocalLockTable table;
  { auto g = table.acquire("a", steady_clock::now()); }
  std::optional<LocalLockTable::Guard> again;
  std::thread t([&] { again = table.acquire("a", steady_clock::now()); });
  t.join();
  EXPECT_TRUE(again.has_value());
}

}  // namespace
}  // namespace holdfast::sql
