// Lock-delay across nodes (docs/lock-kinds.md, "Lock-delay"): the delay lives in the hold's
// row and is judged by the database clock, so a key closed by an expiry on one node is closed
// on every node, a waiter on another node gets it when the delay ends, and a node that dies
// with a session hold closes its key too once its sessions are freed.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cluster.h"
#include "support/eventually.h"

namespace holdfast::testing {
namespace {

const std::string kWait = std::to_string(kEventuallyMs);  // a blocking acquire's TIMEOUT

// The key's status once `done` says so (or an error, or the last one if it never does).
template <typename Done>
RespValue await_status(RespClient& c, const std::string& key, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  for (;;) {
    RespValue s = c.call({"LOCK.STATUS", key});
    if (s.is_error() || done(s) || std::chrono::steady_clock::now() > deadline) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

RespValue await_free(RespClient& c, const std::string& key) {
  return await_status(c, key, [](const RespValue& s) { return s.number("held") == 0; });
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
  auto next = b.call({"LOCK.ACQUIRE", "job", "TTL", "1000", "TIMEOUT", kWait});
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
  auto reader = b.call({"LOCK.ACQUIRE", "doc", "TTL", "1000", "TIMEOUT", kWait, "MODE", "SHARED"});
  ASSERT_FALSE(reader.is_error() || reader.is_null()) << reader.debug();
  EXPECT_GE(reader.number("acquiredAt"), until);
  EXPECT_GT(reader.number("token"), held.number("token"));
}

// A shared hold's expiry closes the key on every node, while the other shared holds go on.
TEST(LockDelayAcrossNodes, ASharedHoldsExpiryClosesTheKeyWhileTheOthersGoOn) {
  Cluster cluster(2);
  auto a = cluster.node(0).client();
  auto b = cluster.node(1).client();
  auto lapsing = a.call({"LOCK.TRY", "doc", "TTL", "300", "MODE", "SHARED", "LOCKDELAY", "2000"});
  ASSERT_FALSE(lapsing.is_error() || lapsing.is_null()) << lapsing.debug();
  EXPECT_EQ(lapsing.number("lockDelayMs"), 2000);
  auto staying = b.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  ASSERT_FALSE(staying.is_error() || staying.is_null()) << staying.debug();
  const std::int64_t until = lapsing.number("leaseExpiresAt") + 2000;
  // Until the lapsing hold ended, a reader is let in; from then on nobody is.
  auto s = await_status(b, "doc", [](const RespValue& v) { return v.has("lockDelayUntil"); });
  ASSERT_TRUE(s.has("lockDelayUntil")) << s.debug();
  EXPECT_EQ(s.number("lockDelayUntil"), until);
  EXPECT_EQ(s.number("held"), 1) << "the other reader still holds it";
  EXPECT_TRUE(b.call({"LOCK.TRY", "doc", "TTL", "1000", "MODE", "SHARED"}).is_null());
  EXPECT_TRUE(a.call({"LOCK.TRY", "doc", "TTL", "1000", "MODE", "SHARED"}).is_null());
  EXPECT_EQ(b.call({"LOCK.RENEW", "doc", staying.text("handle"), "TTL", "60000"}).number("renewed"),
            1);
  auto reader = a.call({"LOCK.ACQUIRE", "doc", "TTL", "1000", "TIMEOUT", kWait, "MODE", "SHARED"});
  ASSERT_FALSE(reader.is_error() || reader.is_null()) << reader.debug();
  EXPECT_GE(reader.number("acquiredAt"), until);
  // A release closes nothing: once the last reader lets go, a writer gets the key at once.
  ASSERT_EQ(b.call({"LOCK.RELEASE", "doc", staying.text("handle")}).number("released"), 1);
  ASSERT_EQ(a.call({"LOCK.RELEASE", "doc", reader.text("handle")}).number("released"), 1);
  EXPECT_FALSE(b.call({"LOCK.TRY", "doc", "TTL", "1000"}).is_null());
}

// The last semaphore hold's expiry keeps the key closed to an exclusive request too, and a
// multi-key request waits for it.
TEST(LockDelayAcrossNodes, ASemaphoreHoldsExpiryClosesTheKeyToEveryKindOfRequest) {
  Cluster cluster(2);
  auto a = cluster.node(0).client();
  auto b = cluster.node(1).client();
  auto held = a.call({"LOCK.TRY", "pool", "TTL", "300", "PERMITS", "3", "LOCKDELAY", "1500"});
  ASSERT_FALSE(held.is_error() || held.is_null()) << held.debug();
  const std::int64_t until = held.number("leaseExpiresAt") + 1500;
  auto s = await_free(b, "pool");
  ASSERT_EQ(s.number("held"), 0) << s.debug();
  EXPECT_EQ(s.number("lockDelayUntil"), until);
  EXPECT_TRUE(b.call({"LOCK.TRY", "pool", "TTL", "1000", "PERMITS", "3"}).is_null());
  EXPECT_TRUE(b.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "pool", "PERMITS", "3"}).is_null());
  auto group = b.call({"LOCK.ACQUIREALL", "TTL", "1000", "TIMEOUT", kWait, "KEY", "other", "KEY",
                       "pool", "PERMITS", "3"});
  ASSERT_FALSE(group.is_error() || group.is_null()) << group.debug();
  EXPECT_GE(group.number("leaseExpiresAt") - 1000, until);
}

// A shared SESSION hold whose connection closes closes the key from then, on every node.
TEST(LockDelayAcrossNodes, ASharedSessionHoldsEndClosesTheKey) {
  Cluster cluster(2);
  auto b = cluster.node(1).client();
  std::int64_t granted_at = 0;
  {
    auto a = cluster.node(0).client();
    auto held = a.call(
        {"LOCK.TRY", "doc", "TTL", "60000", "SESSION", "MODE", "SHARED", "LOCKDELAY", "30000"});
    ASSERT_FALSE(held.is_error() || held.is_null()) << held.debug();
    granted_at = held.number("acquiredAt");
  }  // the connection closes: the session ends
  auto s = await_free(b, "doc");
  ASSERT_EQ(s.number("held"), 0) << s.debug();
  EXPECT_GT(s.number("lockDelayUntil"), granted_at + 30000 - 1) << s.debug();
  EXPECT_LT(s.number("lockDelayUntil"), granted_at + 60000) << "counted from the session's end";
  EXPECT_TRUE(b.call({"LOCK.TRY", "doc", "TTL", "1000", "MODE", "SHARED"}).is_null());
  EXPECT_TRUE(b.call({"LOCK.TRY", "doc", "TTL", "1000"}).is_null());
}

}  // namespace
}  // namespace holdfast::testing
