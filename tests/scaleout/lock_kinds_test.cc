// Shared locks and semaphores across two nodes over one PostgreSQL (docs/lock-kinds.md,
// docs/scale-out.md): holds taken through different nodes count together, a writer waiting on
// one node holds back readers of the other, and a semaphore's permits are the cluster's.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "cluster.h"
#include "support/eventually.h"

namespace holdfast::testing {
namespace {

class TwoNodes : public ::testing::Test {
 protected:
  Cluster cluster{2};
  RespClient client(int node) { return cluster.node(node).client(); }
  std::string queued(const std::string& key) {
    return sql_value(cluster.store_url(),
                     "SELECT count(*) FROM holdfast_queue WHERE key = '" + key + "'");
  }
  // Waits for `n` requests in the key's queue across nodes (a request is in its node's queue a
  // moment before its row is); false if they never are.
  bool await_queued(const std::string& key, int n) {
    const auto deadline = std::chrono::steady_clock::now() + kEventually;
    while (std::chrono::steady_clock::now() < deadline) {
      if (queued(key) == std::to_string(n)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

TEST_F(TwoNodes, SharedHoldersOnBothNodesHoldBackAWriterUntilBothRelease) {
  auto a = client(0);
  auto b = client(1);
  auto ra = a.call({"LOCK.TRY", "doc", "TTL", "600000", "MODE", "SHARED"});
  auto rb = b.call({"LOCK.TRY", "doc", "TTL", "600000", "MODE", "SHARED"});
  ASSERT_FALSE(ra.is_null() || ra.is_error()) << ra.debug();
  ASSERT_FALSE(rb.is_null() || rb.is_error()) << rb.debug();
  EXPECT_GT(rb.number("token"), ra.number("token"));
  // Both nodes see both holds.
  for (auto* c : {&a, &b}) {
    auto s = c->call({"LOCK.STATUS", "doc"});
    EXPECT_EQ(s.text("mode"), "shared");
    ASSERT_EQ(s.get("holders")->items.size(), 2u) << s.debug();
    EXPECT_EQ(s.get("holders")->items[0].number("token"), ra.number("token"));
  }
  EXPECT_TRUE(b.call({"LOCK.TRY", "doc", "TTL", "60000"}).is_null());

  auto writer = client(0);
  writer.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", std::to_string(kEventuallyMs)});
  ASSERT_TRUE(await_waiters(a, "doc", 1));
  // The writer takes its seat in the queue across nodes after its first refusal.
  ASSERT_TRUE(await_queued("doc", 1));
  // A reader arriving at the other node does not overtake it.
  EXPECT_TRUE(b.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"}).is_null());

  ASSERT_EQ(a.call({"LOCK.RELEASE", "doc", ra.text("handle")}).number("released"), 1);
  // Node 2's reader still holds the key: the writer waits on.
  EXPECT_THROW(writer.read(300), std::runtime_error) << "granted beside a reader";
  EXPECT_EQ(a.call({"LOCK.STATUS", "doc"}).get("holders")->items.size(), 1u);
  // The readers' leases (10 minutes) are far off: a grant at all means the release woke it.
  ASSERT_EQ(b.call({"LOCK.RELEASE", "doc", rb.text("handle")}).number("released"), 1);
  auto granted = writer.read();
  ASSERT_FALSE(granted.is_error() || granted.is_null()) << granted.debug();
  EXPECT_FALSE(granted.has("mode"));
  EXPECT_GT(granted.number("token"), rb.number("token"));
  EXPECT_EQ(queued("doc"), "0");
  // Readers on either node wait for the writer now, and are granted together when it goes.
  auto r1 = client(1);
  auto r2 = client(1);
  r1.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "20000", "MODE", "SHARED"});
  ASSERT_TRUE(await_waiters(b, "doc", 1));
  r2.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "20000", "MODE", "SHARED"});
  ASSERT_TRUE(await_waiters(b, "doc", 2));
  ASSERT_EQ(a.call({"LOCK.RELEASE", "doc", granted.text("handle")}).number("released"), 1);
  auto g1 = r1.read();
  auto g2 = r2.read();
  ASSERT_FALSE(g1.is_error() || g2.is_error()) << g1.debug() << g2.debug();
  EXPECT_EQ(a.call({"LOCK.STATUS", "doc"}).get("holders")->items.size(), 2u);
}

TEST_F(TwoNodes, ASemaphoresPermitsAreCountedAcrossNodes) {
  auto a = client(0);
  auto b = client(1);
  auto two = a.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3", "TAKE", "2"});
  ASSERT_FALSE(two.is_null() || two.is_error()) << two.debug();
  auto one = b.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"});
  ASSERT_FALSE(one.is_null() || one.is_error()) << one.debug();
  EXPECT_EQ(one.number("permits"), 3);
  EXPECT_EQ(one.number("take"), 1);
  EXPECT_TRUE(b.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  EXPECT_TRUE(a.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  for (auto* c : {&a, &b}) {
    auto s = c->call({"LOCK.STATUS", "pool"});
    EXPECT_EQ(s.number("permits"), 3);
    EXPECT_EQ(s.number("freePermits"), 0);
    EXPECT_EQ(s.get("holders")->items.size(), 2u) << s.debug();
  }
  EXPECT_EQ(b.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "4"}).str,
            "INVALID_ARGUMENT the key is a semaphore of 3 permits, not 4 key=pool");
  EXPECT_EQ(b.call({"LOCK.TRY", "pool", "TTL", "60000", "MODE", "SHARED"}).str,
            "INVALID_ARGUMENT the key is a semaphore of 3 permits; acquire it with PERMITS 3 "
            "key=pool");

  // A request for two waits on node 2; the permit node 2 frees is not enough for it, and a
  // request for one on node 1 must not overtake it.
  auto big = client(1);
  big.send(
      {"LOCK.ACQUIRE", "pool", "TTL", "60000", "TIMEOUT", "20000", "PERMITS", "3", "TAKE", "2"});
  ASSERT_TRUE(await_queued("pool", 1));
  ASSERT_EQ(b.call({"LOCK.RELEASE", "pool", one.text("handle")}).number("released"), 1);
  EXPECT_EQ(a.call({"LOCK.STATUS", "pool"}).number("freePermits"), 1);
  EXPECT_TRUE(a.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  ASSERT_EQ(a.call({"LOCK.RELEASE", "pool", two.text("handle")}).number("released"), 1);
  auto granted = big.read();
  ASSERT_FALSE(granted.is_error() || granted.is_null()) << granted.debug();
  EXPECT_EQ(granted.number("take"), 2);
  auto s = a.call({"LOCK.STATUS", "pool"});
  EXPECT_EQ(s.number("freePermits"), 1);
  EXPECT_FALSE(a.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  EXPECT_EQ(a.call({"LOCK.STATUS", "pool"}).number("freePermits"), 0);
}

TEST_F(TwoNodes, AMemberLeaseThatEndsFreesItsPermitsOnEveryNode) {
  auto a = client(0);
  auto b = client(1);
  ASSERT_FALSE(a.call({"LOCK.TRY", "pool", "TTL", "300", "PERMITS", "1"}).is_null());
  auto waiter = client(1);
  auto granted = waiter.call({"LOCK.ACQUIRE", "pool", "TTL", "60000", "TIMEOUT",
                              std::to_string(kEventuallyMs), "PERMITS", "1"});
  ASSERT_FALSE(granted.is_error() || granted.is_null()) << granted.debug();
  EXPECT_EQ(b.call({"LOCK.STATUS", "pool"}).get("holders")->items.size(), 1u);
}

TEST_F(TwoNodes, AQueuedRequestOfADeadNodeHoldsBackOthersOnlyUntilTheNodeIsDeclaredDead) {
  auto a = client(0);
  auto writer = a.call({"LOCK.TRY", "doc", "TTL", "60000"});
  ASSERT_FALSE(writer.is_null()) << writer.debug();
  auto reader = client(1);
  reader.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "60000", "MODE", "SHARED"});
  ASSERT_TRUE(await_queued("doc", 1));
  cluster.node(1).kill9();
  ASSERT_EQ(a.call({"LOCK.RELEASE", "doc", writer.text("handle")}).number("released"), 1);
  // The dead node's reader was first; its row goes with the node, after the session grace.
  EXPECT_TRUE(a.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"}).is_null());
  auto granted = a.call({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT",
                         std::to_string(kEventuallyMs), "MODE", "SHARED"});
  ASSERT_FALSE(granted.is_null() || granted.is_error()) << granted.debug();
  EXPECT_EQ(queued("doc"), "0");
}

// A node of an older schema version, still running during an upgrade, grants a freed shared key
// exclusively with a statement that does not know the mode column: the key is an exclusive
// hold all the same.
TEST_F(TwoNodes, AKeyGrantedByANodeOfTheLastVersionIsAnExclusiveHold) {
  auto a = client(0);
  auto r = a.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  ASSERT_FALSE(r.is_null() || r.is_error()) << r.debug();
  ASSERT_EQ(a.call({"LOCK.RELEASE", "doc", r.text("handle")}).number("released"), 1);
  sql_value(cluster.store_url(),
            "UPDATE holdfast_holds SET handle = '01ARZ3NDEKTSV4RRFFQ69G5FAV', token = "
            "nextval('holdfast_tokens'), held_by = 'user:old', acquired_at = holdfast_now_ms(), "
            "lease_expires_at = holdfast_now_ms() + 60000 WHERE key = 'doc'");
  EXPECT_TRUE(a.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"}).is_null());
  auto s = client(1).call({"LOCK.STATUS", "doc"});
  EXPECT_EQ(s.number("held"), 1);
  EXPECT_EQ(s.text("heldBy"), "user:old");
  EXPECT_FALSE(s.has("mode")) << s.debug();
  EXPECT_EQ(a.call({"DEL", "doc"}).integer, 1);
  EXPECT_FALSE(a.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"}).is_null());
}

}  // namespace
}  // namespace holdfast::testing
