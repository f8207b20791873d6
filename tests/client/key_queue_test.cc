// The local per-key queue on its own: FIFO order, timeouts that leave the line, try_turn,
// and independence of keys.
#include <gtest/gtest.h>

#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "client/key_queue.h"

namespace holdfast::client_internal {
namespace {

using namespace std::chrono_literals;
auto in(std::chrono::milliseconds ms) { return std::chrono::steady_clock::now() + ms; }

// Spins (yielding) until `cond` holds; false after 5 s.
template <class F>
bool eventually(F cond) {
  auto deadline = in(5000ms);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(KeyQueue, WaitersGetTheTurnFirstInFirstOut) {
  KeyQueue q;
  auto first = q.wait_turn("k", in(1000ms));
  ASSERT_TRUE(first);
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto turn = q.wait_turn("k", in(10000ms));
      ASSERT_TRUE(turn);
      std::lock_guard lock(mu);
      order.push_back(i);
    });
    // Thread i is in line before thread i + 1 starts.
    ASSERT_TRUE(eventually([&] { return q.waiting() == static_cast<std::size_t>(i + 1); }));
  }
  first.reset();
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(KeyQueue, ATimedOutWaiterLeavesTheLine) {
  KeyQueue q;
  auto holder = q.wait_turn("k", in(1000ms));
  EXPECT_FALSE(q.wait_turn("k", in(30ms)));
  EXPECT_EQ(q.waiting(), 0u);
  holder.reset();
  EXPECT_TRUE(q.wait_turn("k", in(0ms))) << "a free key is granted even with no time left";
}

TEST(KeyQueue, TryTurnDoesNotWaitAndKeysAreIndependent) {
  KeyQueue q;
  auto a = q.try_turn("a");
  ASSERT_TRUE(a);
  EXPECT_FALSE(q.try_turn("a"));
  EXPECT_TRUE(q.try_turn("b"));
}

TEST(KeyQueue, InFlightHighWaterMark) {
  KeyQueue q;
  {
    auto one = q.in_flight("k");
    auto two = q.in_flight("k");
    auto other = q.in_flight("x");
  }
  EXPECT_EQ(q.max_in_flight_per_key(), 2u);
}

}  // namespace
}  // namespace holdfast::client_internal
