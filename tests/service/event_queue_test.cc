// The single server's queue of written lock events: oldest first, each event's key and JSON
// intact, across the cut of its told start while events keep coming.
#include "service/embedded/event_queue.h"

#include <gtest/gtest.h>

#include <string>

namespace holdfast {
namespace {

LockEvent event_of(std::uint64_t n) {
  LockEvent e;
  e.kind = n % 2 == 0 ? LockEventKind::kAcquired : LockEventKind::kReleased;
  e.key = "key:" + std::to_string(n);
  e.token = n + 1;
  e.held_by = "user:x";
  e.at = static_cast<Millis>(n);
  return e;
}

// What the queue must give back for event n: the JSON the event writes, and its key.
void expect_front(const EventQueue& q, std::uint64_t n) {
  ASSERT_FALSE(q.empty());
  EXPECT_EQ(q.front_sequence(), n);
  const WrittenEvent w = q.front();
  const LockEvent e = event_of(n);
  EXPECT_EQ(w.kind, e.kind);
  EXPECT_EQ(w.key, e.key);
  std::string json;
  append_event_json(json, 7, w.body);
  EXPECT_EQ(json, event_json(e, 7));
}

TEST(EventQueueTest, GivesEachEventBackOldestFirstAndIsEmptyOnceAllAreTold) {
  EventQueue q;
  EXPECT_TRUE(q.empty());
  for (std::uint64_t n = 0; n < 3; ++n) q.push(n, event_of(n));
  EXPECT_EQ(q.size(), 3U);
  for (std::uint64_t n = 0; n < 3; ++n) {
    expect_front(q, n);
    q.pop();
  }
  EXPECT_TRUE(q.empty());
  q.push(9, event_of(9));  // written again from the start of the block
  expect_front(q, 9);
}

TEST(EventQueueTest, EventsThatKeepComingWhileTheOldestWaitSurviveTheCutOfTheToldOnes) {
  // Never empty: each round adds three and tells two, so the told start is cut off again and
  // again (past 1024 told), and every event must still come back whole and in order.
  EventQueue q;
  std::uint64_t pushed = 0, told = 0;
  for (int round = 0; round < 3000; ++round) {
    for (int i = 0; i < 3; ++i, ++pushed) q.push(pushed, event_of(pushed));
    for (int i = 0; i < 2; ++i, ++told) {
      expect_front(q, told);
      q.pop();
    }
    ASSERT_EQ(q.size(), pushed - told);
  }
  while (!q.empty()) {
    expect_front(q, told++);
    q.pop();
  }
  EXPECT_EQ(told, pushed);
}

TEST(EventQueueTest, ClearForgetsEveryEvent) {
  EventQueue q;
  q.push(1, event_of(1));
  q.push(2, event_of(2));
  q.pop();
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0U);
}

}  // namespace
}  // namespace holdfast
