// Lock-delay across nodes (docs/lock-kinds.md, "Lock-delay"): the delay lives in the hold's
// row and is judged by the database clock, so a key closed by an expiry on one node is closed
// on every node, a waiter on another node gets it when the delay ends, and a node that dies
// with a session hold closes its key too once its sessions are freed.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cluster.h"

namespace holdfast::testing {
namespace {

RespValue await_free(RespClient& c, const std::string& key) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    RespValue s = c.call({"LOCK.STATUS", key});
    if (s.is_error() || s.number("held") == 0 || std::chrono::steady_clock::now() > deadline)
      return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

TEST(LockDelayAcrossNodes, AnExpiryOnOneNodeClosesTheKeyOnEveryNode) {
  Cluster cluster(2);
  auto a = cluster.node(0).client();
  auto b = cluster.node(1).client();
  auto held = a.call({"LOCK.TRY", "job", "TTL", "300", "LOCKDELAY", "2000"});
  ASSERT_FALSE(held.is_error() || held.is_null()) << held.debug();
  const std::int64_t until = held.number("leaseExpiresAt") + 2000;
  auto s = await_free(b, "job");
  ASSERT_EQ(s.number("held"), 0) << s.debug();
  EXPECT_EQ(s.number("lockDelayUntil"), until);
  EXPECT_TRUE(b.call({"LOCK.TRY", "job", "TTL", "1000"}).is_null());
  EXPECT_TRUE(a.call({"LOCK.TRY", "job", "TTL", "1000"}).is_null());
  auto next = b.call({"LOCK.ACQUIRE", "job", "TTL", "1000", "TIMEOUT", "10000"});
  ASSERT_FALSE(next.is_error()) << next.debug();
  EXPECT_GE(next.number("acquiredAt"), until);
  EXPECT_GT(next.number("token"), held.number("token"));
}

TEST(LockDelayAcrossNodes, ANodeThatDiesWithASessionHoldClosesItsKey) {
  Cluster cluster(2);
  auto a = cluster.node(0).client();
  auto held = a.call({"LOCK.TRY", "job", "TTL", "60000", "SESSION", "LOCKDELAY", "30000"});
  ASSERT_FALSE(held.is_error() || held.is_null()) << held.debug();
  cluster.node(0).kill9();
  auto b = cluster.node(1).client();
  // The other node frees the dead node's session holds after the grace; the key then stays
  // closed for the delay instead of going to the next caller.
  auto s = await_free(b, "job");
  ASSERT_EQ(s.number("held"), 0) << s.debug();
  EXPECT_GT(s.number("lockDelayUntil"), 0) << s.debug();
  EXPECT_TRUE(b.call({"LOCK.TRY", "job", "TTL", "1000"}).is_null());
}

TEST(LockDelayAcrossNodes, AnExclusiveHoldsDelayClosesTheKeyToSharedAndSemaphoreRequests) {
  Cluster cluster(2);
  auto a = cluster.node(0).client();
  auto b = cluster.node(1).client();
  auto held = a.call({"LOCK.TRY", "doc", "TTL", "300", "LOCKDELAY", "2000"});
  ASSERT_FALSE(held.is_error() || held.is_null()) << held.debug();
  const std::int64_t until = held.number("leaseExpiresAt") + 2000;
  ASSERT_EQ(await_free(b, "doc").number("held"), 0);
  EXPECT_TRUE(b.call({"LOCK.TRY", "doc", "TTL", "1000", "MODE", "SHARED"}).is_null());
  EXPECT_TRUE(b.call({"LOCK.TRY", "doc", "TTL", "1000", "PERMITS", "2"}).is_null());
  auto reader =
      b.call({"LOCK.ACQUIRE", "doc", "TTL", "1000", "TIMEOUT", "10000", "MODE", "SHARED"});
  ASSERT_FALSE(reader.is_error() || reader.is_null()) << reader.debug();
  EXPECT_GE(reader.number("acquiredAt"), until);
  EXPECT_GT(reader.number("token"), held.number("token"));
}

TEST(LockDelayAcrossNodes, ASharedOrSemaphoreHoldCannotHaveALockDelay) {
  Cluster cluster(1);
  auto a = cluster.node(0).client();
  for (const auto& mode :
       std::vector<std::vector<std::string>>{{"MODE", "SHARED"}, {"PERMITS", "3"}}) {
    std::vector<std::string> cmd{"LOCK.TRY", "doc", "TTL", "1000", "LOCKDELAY", "500"};
    cmd.insert(cmd.end(), mode.begin(), mode.end());
    auto r = a.call(cmd);
    ASSERT_TRUE(r.is_error()) << r.debug();
    EXPECT_NE(r.str.find("INVALID_ARGUMENT"), std::string::npos) << r.str;
    EXPECT_NE(r.str.find("field=lockDelayMs"), std::string::npos) << r.str;
  }
  EXPECT_EQ(a.call({"LOCK.STATUS", "doc"}).number("held"), 0) << "a refused request holds nothing";
}

}  // namespace
}  // namespace holdfast::testing
