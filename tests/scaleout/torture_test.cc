// Mutual exclusion across nodes under contention: many clients take a few keys through random
// nodes (blocking acquires and one-shot tries), each critical section records the interval
// from "grant reply received" to "release about to be sent". If any node ever granted a key
// while another client still held it, the second grant would be received before the first
// release was sent, and two intervals of that key would overlap.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "cluster.h"
#include "support/eventually.h"

namespace holdfast::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct Section {
  std::string key;
  Clock::time_point start, end;
  std::int64_t token = 0;
  int client = 0;
};

TEST(MutualExclusion, ManyClientsOnRandomNodesNeverOverlap) {
  Cluster cluster;
  constexpr int kClients = 12;
  constexpr int kRounds = 25;
  const std::vector<std::string> keys = {"hot:a", "hot:b", "hot:c"};
  // A lease and a wait that no scheduling delay outlasts: a LOCK_TIMEOUT here would be a
  // failure, and a lease that ended inside a section an overlap.
  const std::string wait = std::to_string(kEventuallyMs);
  std::mutex mu;
  std::vector<Section> sections;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int id = 0; id < kClients; ++id) {
    threads.emplace_back([&, id] {
      std::vector<RespClient> nodes;
      for (int n = 0; n < cluster.size(); ++n) nodes.push_back(cluster.node(n).client());
      std::mt19937 rng(static_cast<unsigned>(id) * 7919u + 1u);
      auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
      for (int round = 0; round < kRounds; ++round) {
        const std::string& key = keys[pick(keys.size())];
        RespClient& via = nodes[pick(nodes.size())];
        const bool blocking = pick(5) != 0;
        RespValue hold = blocking ? via.call({"LOCK.ACQUIRE", key, "TTL", "60000", "TIMEOUT", wait})
                                  : via.call({"LOCK.TRY", key, "TTL", "60000"});
        if (hold.is_null()) continue;  // a try that lost
        Section s{key, Clock::now(), {}, hold.number("token"), id};
        if (hold.is_error()) {
          std::lock_guard lock(mu);
          failures.push_back(hold.debug());
          continue;
        }
        // The critical section: long enough that other clients queue behind it.
        while (Clock::now() - s.start < std::chrono::microseconds(300)) {
        }
        s.end = Clock::now();
        auto released = nodes[pick(nodes.size())].call({"LOCK.RELEASE", key, hold.text("handle")});
        std::lock_guard lock(mu);
        if (released.number("released") != 1) failures.push_back("release: " + released.debug());
        sections.push_back(std::move(s));
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(failures.empty()) << failures.front();
  ASSERT_GE(sections.size(), static_cast<std::size_t>(kClients * kRounds / 2));

  std::sort(sections.begin(), sections.end(), [](const Section& a, const Section& b) {
    return a.key != b.key ? a.key < b.key : a.start < b.start;
  });
  int overlaps = 0;
  for (std::size_t i = 1; i < sections.size(); ++i) {
    const Section& prev = sections[i - 1];
    const Section& cur = sections[i];
    if (prev.key != cur.key) continue;
    if (cur.start < prev.end) {
      ++overlaps;
      ADD_FAILURE() << cur.key << ": client " << cur.client << " (token " << cur.token
                    << ") was granted while client " << prev.client << " (token " << prev.token
                    << ") still held it";
    }
    // Fencing: later holders of a key always carry larger tokens.
    EXPECT_GT(cur.token, prev.token) << cur.key;
  }
  EXPECT_EQ(overlaps, 0);
}

}  // namespace
}  // namespace holdfast::testing
