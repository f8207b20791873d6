// In-process queuing: callers of one Client that want the same key line up locally, so the
// server sees at most one acquire request per key from this process at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "holdfast/client.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using namespace std::chrono_literals;
using testing::ServerProcess;

// Yields until `cond` holds; false if it never does.
template <class F>
bool eventually(F cond) {
  auto deadline = std::chrono::steady_clock::now() + testing::kEventually;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

class LocalQueue : public ::testing::Test {
 protected:
  ServerProcess server;
  Client client{server.url()};
};

TEST_F(LocalQueue, EightThreadsOnOneKeyKeepOneRequestInFlight) {
  // Another process holds the key, so the first of our callers really waits at the server.
  auto outside = server.client();
  auto held = outside.call({"LOCK.TRY", "hot", "TTL", "60000"});
  std::atomic<int> inside{0}, max_inside{0}, done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      client.with_lock("hot", {.ttl = 10000ms, .timeout = 30000ms, .renew = false}, [&] {
        int now = ++inside;
        int seen = max_inside.load();
        while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
        }
        --inside;
        ++done;
      });
    });
  }
  // One caller waits on the server, seven on the local queue.
  auto watcher = server.client();
  ASSERT_TRUE(eventually([&] { return client.stats().local_waiters == 7; }));
  ASSERT_TRUE(testing::await_waiters(watcher, "hot", 1));
  EXPECT_EQ(watcher.call({"LOCK.STATUS", "hot"}).number("waiters"), 1)
      << "the server saw one request, not eight";
  EXPECT_EQ(done.load(), 0);

  outside.call({"LOCK.RELEASE", "hot", held.text("handle")});
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), 8);
  EXPECT_EQ(max_inside.load(), 1);
  EXPECT_EQ(client.stats().max_in_flight_per_key, 1u);
  EXPECT_EQ(client.stats().local_waiters, 0u);
  EXPECT_FALSE(client.status("hot").held());
}

TEST_F(LocalQueue, PlainAcquiresAlsoQueueLocally) {
  std::vector<std::thread> threads;
  std::atomic<int> granted{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      LockHandle h = client.acquire("plain", {.ttl = 10000ms, .timeout = 30000ms});
      ++granted;
      client.release(h);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 8);
  EXPECT_EQ(client.stats().max_in_flight_per_key, 1u);
}

TEST_F(LocalQueue, ALocalWaitThatTimesOutNeverReachesTheServer) {
  client.with_lock("busy", {.ttl = 10000ms, .timeout = 1000ms, .renew = false}, [&] {
    std::thread other([&] {
      try {
        client.acquire("busy", {.ttl = 1000ms, .timeout = 200ms});
        ADD_FAILURE() << "acquired a key held by another caller of this process";
      } catch (const LockTimeoutError& e) {
        EXPECT_EQ(e.key(), "busy");
        EXPECT_EQ(e.timeout(), 200ms);
      }
    });
    other.join();
    EXPECT_EQ(client.status("busy").waiters, 0) << "it waited locally, not at the server";
    EXPECT_FALSE(client.try_acquire("busy", {.ttl = 1000ms}))
        << "try_acquire does not wait behind the scope";
  });
  EXPECT_EQ(client.stats().max_in_flight_per_key, 1u);
}

TEST_F(LocalQueue, DifferentKeysDoNotWaitForEachOther) {
  client.with_lock("a", {.ttl = 10000ms, .renew = false}, [&] {
    auto b = client.acquire("b", {.ttl = 1000ms, .timeout = 0ms});
    EXPECT_TRUE(client.release(b));
  });
}

}  // namespace
}  // namespace holdfast
