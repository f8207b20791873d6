// Several keys at once across two nodes over one PostgreSQL (docs/lock-kinds.md, "Several keys
// at once"; docs/scale-out.md): a group taken through one node is seen and respected by the
// other, a group waiting on one node takes every key at once when the other node frees the
// last, crossing groups on two nodes both complete, release by any key frees all, and a SESSION
// group of a killed node is freed after the grace.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

#include "cluster.h"
#include "support/eventually.h"

namespace holdfast::testing {
namespace {

using Clock = std::chrono::steady_clock;

class TwoNodeGroups : public ::testing::Test {
 protected:
  Cluster cluster{2};
  RespClient client(int node) { return cluster.node(node).client(); }
  static std::int64_t held(RespClient& c, const std::string& key) {
    return c.call({"LOCK.STATUS", key}).number("held");
  }
};

TEST_F(TwoNodeGroups, AGroupOnOneNodeBlocksASingleAcquireOnTheOther) {
  auto a = client(0);
  auto b = client(1);
  auto g = a.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "g:2", "KEY", "g:1", "MODE", "SHARED",
                   "KEY", "g:3", "PERMITS", "2", "TAKE", "2"});
  ASSERT_FALSE(g.is_null() || g.is_error()) << g.debug();
  const auto& holds = g.get("holds")->items;
  ASSERT_EQ(holds.size(), 3u);
  EXPECT_EQ(holds[0].text("key"), "g:1");
  EXPECT_EQ(holds[1].text("key"), "g:2");
  EXPECT_LT(holds[0].number("token"), holds[1].number("token"));
  EXPECT_LT(holds[1].number("token"), holds[2].number("token"));
  // The other node sees every hold and grants none of them against the group.
  EXPECT_EQ(held(b, "g:2"), 1);
  EXPECT_EQ(b.call({"LOCK.STATUS", "g:2"}).number("token"), holds[1].number("token"));
  EXPECT_TRUE(b.call({"LOCK.TRY", "g:2", "TTL", "1000"}).is_null());
  EXPECT_TRUE(b.call({"LOCK.TRY", "g:1", "TTL", "1000"}).is_null());
  EXPECT_TRUE(b.call({"LOCK.TRY", "g:3", "TTL", "1000", "PERMITS", "2"}).is_null());
  auto t = b.call({"LOCK.ACQUIRE", "g:2", "TTL", "1000", "TIMEOUT", "100"});
  EXPECT_EQ(t.error_code(), "LOCK_TIMEOUT") << t.debug();
  // A reader may join the shared key; a key of another kind is refused as for a single key.
  auto reader = b.call({"LOCK.TRY", "g:1", "TTL", "1000", "MODE", "SHARED"});
  EXPECT_FALSE(reader.is_null() || reader.is_error()) << reader.debug();
  auto kind = b.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "g:3", "PERMITS", "5"});
  EXPECT_EQ(kind.str, "INVALID_ARGUMENT the key is a semaphore of 2 permits, not 5 key=g:3");
  // All or nothing: a group with one busy key takes none of its free ones.
  EXPECT_TRUE(b.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "free", "KEY", "g:2"}).is_null());
  EXPECT_EQ(held(a, "free"), 0);
}

TEST_F(TwoNodeGroups, AGroupWaitingOnOneNodeTakesEveryKeyWhenTheOtherReleases) {
  auto a = client(0);
  auto x = a.call({"LOCK.TRY", "w:x", "TTL", "60000"});
  auto y = a.call({"LOCK.TRY", "w:y", "TTL", "60000"});
  ASSERT_FALSE(x.is_null() || y.is_null());
  auto waiter = client(1);
  waiter.send({"LOCK.ACQUIREALL", "TTL", "60000", "TIMEOUT", std::to_string(kEventuallyMs), "KEY",
               "w:x", "KEY", "w:y"});
  auto watcher = client(1);
  ASSERT_TRUE(await_waiters(watcher, "w:x", 1));
  ASSERT_EQ(a.call({"LOCK.RELEASE", "w:x", x.text("handle")}).number("released"), 1);
  // One key free is not enough: the waiter holds nothing meanwhile.
  EXPECT_THROW(waiter.read(300), std::runtime_error) << "granted with w:y still held";
  EXPECT_EQ(held(a, "w:x"), 0);
  ASSERT_EQ(a.call({"LOCK.RELEASE", "w:y", y.text("handle")}).number("released"), 1);
  // The leases (a minute) are far off: a grant at all means the releases woke the waiter.
  auto g = waiter.read();
  ASSERT_FALSE(g.is_error() || g.is_null()) << g.debug();
  ASSERT_EQ(g.get("holds")->items.size(), 2u);
  EXPECT_GT(g.get("holds")->items[0].number("token"), y.number("token"));
  EXPECT_EQ(held(a, "w:x"), 1);
  EXPECT_EQ(held(a, "w:y"), 1);
  EXPECT_EQ(watcher.call({"LOCK.STATUS", "w:x"}).number("waiters"), 0);
}

TEST_F(TwoNodeGroups, CrossingGroupsOnTwoNodesBothComplete) {
  // Many rounds of {a,b} on one node against {b,a} on the other: each round both are granted,
  // one after the other; a deadlock would show as a LOCK_TIMEOUT or an error.
  auto first = client(0);
  auto second = client(1);
  const std::string timeout = std::to_string(kEventuallyMs);
  for (int round = 0; round < 20; ++round) {
    first.send({"LOCK.ACQUIREALL", "TTL", "60000", "TIMEOUT", timeout, "KEY", "c:a", "KEY", "c:b",
                "KEY", "c:m", "MODE", "SHARED"});
    second.send({"LOCK.ACQUIREALL", "TTL", "60000", "TIMEOUT", timeout, "KEY", "c:b", "KEY", "c:a",
                 "KEY", "c:m", "MODE", "SHARED"});
    // Whichever is granted first releases at once, so the other completes too.
    RespClient* clients[] = {&first, &second};
    int done = 0;
    const auto give_up = Clock::now() + 2 * kEventually;  // past both timeouts
    while (done < 2 && Clock::now() < give_up) {
      for (RespClient*& c : clients) {
        if (c == nullptr) continue;
        RespValue g;
        try {
          g = c->read(25);
        } catch (const std::runtime_error&) {
          continue;  // still waiting
        }
        ASSERT_FALSE(g.is_error() || g.is_null()) << "round " << round << ": " << g.debug();
        ASSERT_EQ(c->call({"LOCK.RELEASE", "c:a", g.text("handle")}).number("released"), 1);
        c = nullptr;
        ++done;
      }
    }
    ASSERT_EQ(done, 2) << "round " << round;
  }
  EXPECT_EQ(held(first, "c:a"), 0);
  EXPECT_EQ(held(first, "c:m"), 0);
}

TEST_F(TwoNodeGroups, ReleaseAndRenewByAnyKeyReachTheWholeGroupFromEitherNode) {
  auto a = client(0);
  auto b = client(1);
  auto g = a.call(
      {"LOCK.TRYALL", "TTL", "60000", "KEY", "r:1", "KEY", "r:2", "MODE", "SHARED", "KEY", "r:3"});
  ASSERT_FALSE(g.is_null() || g.is_error()) << g.debug();
  const std::string handle = g.text("handle");
  auto renewed = b.call({"LOCK.RENEW", "r:2", handle, "TTL", "120000"});
  ASSERT_EQ(renewed.number("renewed"), 1) << renewed.debug();
  for (const char* key : {"r:1", "r:3"}) {
    EXPECT_EQ(b.call({"LOCK.STATUS", key}).number("leaseExpiresAt"),
              renewed.number("leaseExpiresAt"))
        << key;
  }
  EXPECT_EQ(b.call({"LOCK.RELEASE", "r:3", handle}).number("released"), 1);
  for (const char* key : {"r:1", "r:2", "r:3"}) EXPECT_EQ(held(a, key), 0) << key;
  EXPECT_EQ(a.call({"LOCK.RELEASE", "r:1", handle}).number("released"), 0);
  // A handle of one group releases nothing on a key it does not hold.
  auto other = a.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "r:1", "KEY", "r:2"});
  ASSERT_FALSE(other.is_null() || other.is_error()) << other.debug();
  EXPECT_EQ(b.call({"LOCK.RELEASE", "r:3", other.text("handle")}).number("released"), 0);
  EXPECT_EQ(held(a, "r:1"), 1);
}

TEST_F(TwoNodeGroups, AReTakeByOwnerReplacesTheGroup) {
  auto a = client(0);
  auto b = client(1);
  auto g = a.call({"LOCK.TRYALL", "TTL", "60000", "OWNER", "job", "KEY", "o:1", "KEY", "o:2",
                   "PERMITS", "3", "TAKE", "2"});
  ASSERT_FALSE(g.is_null() || g.is_error()) << g.debug();
  // The same keys, modes and owner through the other node: a new group in its place.
  auto again = b.call({"LOCK.TRYALL", "TTL", "60000", "OWNER", "job", "KEY", "o:2", "PERMITS", "3",
                       "TAKE", "2", "KEY", "o:1"});
  ASSERT_FALSE(again.is_null() || again.is_error()) << again.debug();
  EXPECT_NE(again.text("handle"), g.text("handle"));
  EXPECT_GT(again.get("holds")->items[0].number("token"), g.get("holds")->items[1].number("token"));
  EXPECT_EQ(a.call({"LOCK.STATUS", "o:2"}).number("freePermits"), 1);
  EXPECT_EQ(a.call({"LOCK.RENEW", "o:1", g.text("handle"), "TTL", "1000"}).number("renewed"), 0);
  // Other keys, or another owner, are a new request: the keys are busy.
  EXPECT_TRUE(b.call({"LOCK.TRYALL", "TTL", "60000", "OWNER", "job", "KEY", "o:1"}).is_null());
  EXPECT_TRUE(b.call({"LOCK.TRYALL", "TTL", "60000", "OWNER", "other", "KEY", "o:1", "KEY", "o:2",
                      "PERMITS", "3", "TAKE", "2"})
                  .is_null());
}

TEST_F(TwoNodeGroups, ASessionGroupOfAKilledNodeIsFreedAfterTheGrace) {
  auto victim = client(1);
  auto g = victim.call(
      {"LOCK.TRYALL", "TTL", "600000", "SESSION", "KEY", "s:1", "KEY", "s:2", "MODE", "SHARED"});
  ASSERT_FALSE(g.is_null() || g.is_error()) << g.debug();
  EXPECT_EQ(g.get("holds")->items[1].text("scope"), "session");
  const std::int64_t last_heartbeat = cluster.last_heartbeat(1);  // a later one only helps
  cluster.node(1).kill9();
  auto other = client(0);
  EXPECT_EQ(held(other, "s:1"), 1);
  // The group's lease (10 minutes) is far off: a grant at all means the grace ended it.
  auto granted = other.call({"LOCK.ACQUIREALL", "TTL", "1000", "TIMEOUT",
                             std::to_string(kEventuallyMs), "KEY", "s:2", "KEY", "s:1"});
  ASSERT_FALSE(granted.is_error() || granted.is_null()) << granted.debug();
  // Not before the grace has passed from the dead node's last heartbeat (the database clock).
  EXPECT_GE(granted.get("holds")->items[0].number("acquiredAt"),
            last_heartbeat + Cluster::kSessionGraceMs);
  EXPECT_GT(granted.get("holds")->items[0].number("token"),
            g.get("holds")->items[1].number("token"));
}

}  // namespace
}  // namespace holdfast::testing
