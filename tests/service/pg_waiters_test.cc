// LocalWaiters: a node's FIFO queues per key. Only the head attempts, and only with a reason;
// wake-ups are never lost; closing a connection wakes its waiters; queue lifetimes carry
// generations for the database registration; a multi-key waiter hears every one of its keys. No
// database: the queues are pure bookkeeping.
#include "service/postgres/pg_waiters.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace holdfast {
namespace {

using Wake = LocalWaiters::Wake;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A deadline that has passed: wait() answers at once with what it knows.
Clock::time_point now() { return Clock::now(); }
Clock::time_point soon() { return Clock::now() + milliseconds(2000); }

TEST(LocalWaiters, TheFirstWaiterAttemptsAtOnceAndOpensTheQueue) {
  LocalWaiters w;
  auto first = w.join("k", 1);
  EXPECT_TRUE(w.is_head(*first));
  EXPECT_NE(w.opened_generation(*first), 0u);
  EXPECT_EQ(w.wait(*first, soon()), Wake::kAttempt);
  auto second = w.join("k", 2);
  EXPECT_FALSE(w.is_head(*second));
  EXPECT_EQ(w.opened_generation(*second), 0u);
  EXPECT_EQ(w.count("k"), 2u);
}

// A release brings along only an attempt that goes through the commit batches: the head's.
TEST(LocalWaiters, OnlyABatchedHeadCanShareARelease) {
  LocalWaiters w;
  EXPECT_FALSE(w.head_attempts_batched("k"));  // no queue
  auto member = w.join("k", 1, /*batched=*/false);
  auto exclusive = w.join("k", 2, /*batched=*/true);
  EXPECT_FALSE(w.head_attempts_batched("k"));  // a batched waiter behind does not count
  w.leave(*member);
  EXPECT_TRUE(w.head_attempts_batched("k"));
  w.leave(*exclusive);
  EXPECT_FALSE(w.head_attempts_batched("k"));
}

TEST(LocalWaiters, OnlyTheHeadIsWokenByAPoke) {
  LocalWaiters w;
  auto head = w.join("k", 1);
  ASSERT_EQ(w.wait(*head, soon()), Wake::kAttempt);
  auto behind = w.join("k", 2);
  w.poke("k");
  EXPECT_EQ(w.wait(*behind, now()), Wake::kDeadline);  // not its turn
  EXPECT_EQ(w.wait(*head, soon()), Wake::kAttempt);
}

TEST(LocalWaiters, APokeDuringAnAttemptIsNotLost) {
  LocalWaiters w;
  auto head = w.join("k", 1);
  ASSERT_EQ(w.wait(*head, soon()), Wake::kAttempt);
  w.poke("k");  // the key freed while the head's statement ran
  w.retry_at(*head, Clock::now() + milliseconds(60000));
  EXPECT_EQ(w.wait(*head, soon()), Wake::kAttempt);
}

// What a NOTIFY from another node does (tests/scaleout shows the release sends it): a head
// asleep (or about to be) until a retry time ten minutes away attempts at once, not at its next
// look. Were the poke not to wake it, its wait would end at the deadline, a minute away, with
// kDeadline.
TEST(LocalWaiters, APokeWakesAHeadAsleepUntilItsRetryTime) {
  LocalWaiters w;
  auto head = w.join("k", 1);
  ASSERT_EQ(w.wait(*head, soon()), Wake::kAttempt);
  w.retry_at(*head, Clock::now() + std::chrono::minutes(10));  // the periodic look, far off
  std::thread notified([&] { w.poke("k"); });
  EXPECT_EQ(w.wait(*head, Clock::now() + std::chrono::minutes(1)), Wake::kAttempt);
  notified.join();
}

TEST(LocalWaiters, TheRetryTimeWakesTheHeadWithoutAPoke) {
  LocalWaiters w;
  auto head = w.join("k", 1);
  ASSERT_EQ(w.wait(*head, soon()), Wake::kAttempt);
  w.retry_at(*head, Clock::now() + milliseconds(20));
  const auto start = Clock::now();
  EXPECT_EQ(w.wait(*head, soon()), Wake::kAttempt);
  EXPECT_GE(Clock::now() - start, milliseconds(15));
}

TEST(LocalWaiters, WaitersBecomeHeadInTheOrderTheyJoined) {
  LocalWaiters w;
  std::vector<LocalWaiters::Ticket> tickets;
  for (SessionId s = 1; s <= 3; ++s) tickets.push_back(w.join("k", s));
  for (std::size_t i = 0; i < tickets.size(); ++i) {
    EXPECT_TRUE(w.is_head(*tickets[i])) << i;
    // Granted: the next one retries at the new lease's end (here: at once).
    w.leave(*tickets[i], Clock::now());
  }
  EXPECT_EQ(w.count("k"), 0u);
}

TEST(LocalWaiters, ANewHeadAttemptsAtOnceWhenTheOldOneLeftWithoutTheKey) {
  LocalWaiters w;
  auto head = w.join("k", 1);
  ASSERT_EQ(w.wait(*head, soon()), Wake::kAttempt);
  auto next = w.join("k", 2);
  head.reset();  // timed out or cancelled, having been poked: the key may be free
  EXPECT_EQ(w.wait(*next, now()), Wake::kAttempt);
}

TEST(LocalWaiters, ANewHeadInheritsTheRetryTimeOfAHeadThatTimedOut) {
  LocalWaiters w;
  auto head = w.join("k", 1);
  ASSERT_EQ(w.wait(*head, soon()), Wake::kAttempt);
  w.retry_at(*head, Clock::now() + milliseconds(60000));  // the holder's lease ends in a minute
  auto next = w.join("k", 2);
  head.reset();
  EXPECT_EQ(w.wait(*next, now()), Wake::kDeadline);  // no reason to ask again yet
}

TEST(LocalWaiters, ClosingASessionWakesItsWaitersAndRefusesItsNextCalls) {
  LocalWaiters w;
  ASSERT_TRUE(w.begin_call(7));
  auto head = w.join("k", 6);
  ASSERT_EQ(w.wait(*head, soon()), Wake::kAttempt);
  auto mine = w.join("k", 7);
  std::thread closer([&] { w.close_session(7); });
  EXPECT_EQ(w.wait(*mine, soon()), Wake::kCancelled);
  closer.join();
  EXPECT_TRUE(w.end_call(7));  // the call learns its connection closed: undo a grant
  EXPECT_FALSE(w.begin_call(7));
  EXPECT_EQ(w.wait(*w.join("k", 7), soon()), Wake::kCancelled);
  EXPECT_TRUE(w.begin_call(6));
  EXPECT_FALSE(w.end_call(6));
}

TEST(LocalWaiters, CloseSessionSaysWhetherItOwnedSessionHolds) {
  LocalWaiters w;
  EXPECT_FALSE(w.close_session(1));
  ASSERT_TRUE(w.begin_call(2));
  w.note_session_hold(2);
  EXPECT_FALSE(w.end_call(2));
  EXPECT_TRUE(w.close_session(2));
}

TEST(LocalWaiters, CloseAllWakesEveryoneAndRefusesNewCalls) {
  LocalWaiters w;
  auto head = w.join("a", 1);
  auto sleeper = w.join("", 2);  // a rate-limited acquire sleeping in no queue
  std::thread stopper([&] { w.close_all(); });
  EXPECT_EQ(w.wait(*sleeper, soon()), Wake::kCancelled);
  stopper.join();
  EXPECT_EQ(w.wait(*head, soon()), Wake::kCancelled);
  EXPECT_FALSE(w.begin_call(3));
}

TEST(LocalWaiters, TheLastWaiterOutReportsTheQueuesGeneration) {
  LocalWaiters w;
  std::vector<std::pair<std::string, std::uint64_t>> closed;
  w.on_queue_closed([&](const std::string& key, std::uint64_t generation) {
    closed.emplace_back(key, generation);
  });
  auto a = w.join("k", 1);
  auto b = w.join("k", 2);
  const auto generation = w.opened_generation(*a);
  a.reset();
  EXPECT_TRUE(closed.empty());
  b.reset();
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0], std::make_pair(std::string("k"), generation));
  // The next life of the queue has a newer generation.
  auto c = w.join("k", 3);
  EXPECT_GT(w.opened_generation(*c), generation);
}

TEST(LocalWaiters, AMultiKeyWaiterHearsEveryKeyAndHoldsNoQueueBack) {
  LocalWaiters w;
  std::vector<std::pair<std::string, std::uint64_t>> closed;
  w.on_queue_closed([&](const std::string& key, std::uint64_t generation) {
    closed.emplace_back(key, generation);
  });
  auto single = w.join("a", 1);
  auto group = w.watch({"a", "b"}, 2);
  // It opened b's queue only: a's was open already.
  const auto opened = w.opened_generations(*group);
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].first, "b");
  EXPECT_EQ(w.count("a"), 2u);
  EXPECT_EQ(w.count("b"), 1u);
  EXPECT_EQ(w.total(), 3u);        // the group once per key
  EXPECT_FALSE(w.has_queue("b"));  // it stands in no key's order
  EXPECT_TRUE(w.is_head(*single));
  EXPECT_EQ(w.wait(*group, soon()), Wake::kAttempt);  // at once
  EXPECT_EQ(w.wait(*group, now()), Wake::kDeadline);  // no reason to try again
  w.poke("b");
  EXPECT_EQ(w.wait(*group, soon()), Wake::kAttempt);
  ASSERT_EQ(w.wait(*single, soon()), Wake::kAttempt);
  w.poke("a");  // both hear it: the head of a's queue, and the group
  EXPECT_EQ(w.wait(*group, soon()), Wake::kAttempt);
  EXPECT_EQ(w.wait(*single, soon()), Wake::kAttempt);
  // Leaving closes the queue it kept open, with the generation it registered.
  const auto b_generation = opened[0].second;
  group.reset();
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0], std::make_pair(std::string("b"), b_generation));
  EXPECT_EQ(w.count("a"), 1u);
  // Closing its connection wakes it, as any waiter.
  auto again = w.watch({"c"}, 3);
  ASSERT_EQ(w.wait(*again, soon()), Wake::kAttempt);
  w.close_session(3);
  EXPECT_EQ(w.wait(*again, soon()), Wake::kCancelled);
}

}  // namespace
}  // namespace holdfast
