// The Redis lock idiom over the lock keyspace (docs/redis-locks.md): SET NX PX takes a key as
// a hold with a token, GET/PTTL/EXISTS read it, DEL/PEXPIRE act on the caller's own holds, and
// the LOCK.* commands see the same keys.
#include <gtest/gtest.h>

#include <string>

#include "support/auth_config.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;

class RedisIdiom : public ::testing::Test {
 protected:
  ServerProcess server;
};

TEST_F(RedisIdiom, SetNxPxTakesAFreeKeyAsAHoldWithAFencingToken) {
  auto c = server.client();
  EXPECT_EQ(c.call({"SET", "r:a", "tok-1", "NX", "PX", "30000"}).str, "OK");
  EXPECT_EQ(c.call({"GET", "r:a"}).str, "tok-1");
  auto st = c.call({"LOCK.STATUS", "r:a"});
  EXPECT_EQ(st.number("held"), 1) << st.debug();
  EXPECT_EQ(st.text("owner"), "tok-1");
  EXPECT_EQ(st.text("kind"), "handle");
  EXPECT_GT(st.number("token"), 0);
  const auto pttl = c.call({"PTTL", "r:a"}).integer;
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, 30000);
  // Held: a second SET NX and a LOCK.TRY both find it taken, also for the same caller.
  EXPECT_TRUE(c.call({"SET", "r:a", "tok-2", "NX", "PX", "30000"}).is_null());
  EXPECT_TRUE(server.client().call({"LOCK.TRY", "r:a", "TTL", "1000"}).is_null());
  EXPECT_EQ(c.call({"GET", "r:a"}).str, "tok-1");
  EXPECT_EQ(c.call({"EXISTS", "r:a", "r:free", "r:a"}).integer, 2);
  EXPECT_TRUE(c.call({"GET", "r:free"}).is_null());
  EXPECT_EQ(c.call({"PTTL", "r:free"}).integer, -2);
  EXPECT_EQ(c.call({"DEL", "r:a", "r:free"}).integer, 1);
  EXPECT_EQ(c.call({"LOCK.STATUS", "r:a"}).number("held"), 0);
}

TEST_F(RedisIdiom, ASetWithoutExpiryLastsTheLongestLeaseAndPersistRenewsIt) {
  auto c = server.client();
  EXPECT_EQ(c.call({"SET", "r:b", "v"}).str, "OK");
  EXPECT_GT(c.call({"PTTL", "r:b"}).integer, kDayMs - 60'000);
  EXPECT_EQ(c.call({"PEXPIRE", "r:b", "10000"}).integer, 1);
  EXPECT_LE(c.call({"PTTL", "r:b"}).integer, 10000);
  EXPECT_EQ(c.call({"PERSIST", "r:b"}).integer, 1);
  EXPECT_GT(c.call({"TTL", "r:b"}).integer, kDayMs / 1000 - 60);
  // An expiry beyond the cap is lowered to it.
  EXPECT_EQ(c.call({"SET", "r:c", "v", "EX", "999999999"}).str, "OK");
  EXPECT_LE(c.call({"PTTL", "r:c"}).integer, kDayMs);
}

TEST_F(RedisIdiom, SetOptionsXxGetAndKeepTtl) {
  auto c = server.client();
  EXPECT_TRUE(c.call({"SET", "r:d", "v1", "XX", "PX", "30000"}).is_null());
  EXPECT_EQ(c.call({"EXISTS", "r:d"}).integer, 0);
  EXPECT_TRUE(c.call({"SET", "r:d", "v1", "NX", "GET", "PX", "30000"}).is_null());
  const auto first = c.call({"LOCK.STATUS", "r:d"}).number("token");
  EXPECT_EQ(c.call({"SET", "r:d", "v2", "GET", "KEEPTTL"}).str, "v1");
  EXPECT_EQ(c.call({"GET", "r:d"}).str, "v2");
  EXPECT_LE(c.call({"PTTL", "r:d"}).integer, 30000);
  EXPECT_GT(c.call({"LOCK.STATUS", "r:d"}).number("token"), first) << "a replaced hold fences";
  EXPECT_EQ(c.call({"SET", "r:d", "v3", "XX", "PX", "5000"}).str, "OK");
  EXPECT_EQ(c.call({"GET", "r:d"}).str, "v3");
}

TEST_F(RedisIdiom, SetWithTheSameValueMovesTheLeaseAndKeepsTheToken) {
  auto c = server.client();
  ASSERT_EQ(c.call({"SET", "r:n", "tok", "NX", "PX", "5000"}).str, "OK");
  const auto token = c.call({"LOCK.STATUS", "r:n"}).number("token");
  EXPECT_EQ(c.call({"SET", "r:n", "tok", "PX", "60000"}).str, "OK");
  EXPECT_GT(c.call({"PTTL", "r:n"}).integer, 5000);
  EXPECT_EQ(c.call({"LOCK.STATUS", "r:n"}).number("token"), token);
}

TEST_F(RedisIdiom, DelHandsTheKeyToTheFirstWaiterInItsQueue) {
  auto c = server.client();
  ASSERT_EQ(c.call({"SET", "r:e", "v", "NX", "PX", "60000"}).str, "OK");
  const auto set_token = c.call({"LOCK.STATUS", "r:e"}).number("token");
  auto waiter = server.client();
  waiter.send({"LOCK.ACQUIRE", "r:e", "TTL", "60000", "TIMEOUT", "30000"});
  ASSERT_TRUE(await_waiters(c, "r:e", 1));
  EXPECT_EQ(c.call({"DEL", "r:e"}).integer, 1);
  auto granted = waiter.read();
  EXPECT_EQ(granted.text("handle").size(), 26u) << granted.debug();
  EXPECT_GT(granted.number("token"), set_token);
  EXPECT_TRUE(c.call({"SET", "r:e", "v", "NX", "PX", "60000"}).is_null());
  EXPECT_EQ(c.call({"GET", "r:e"}).str, "") << "the waiter's hold has no owner";
}

TEST_F(RedisIdiom, PexpireConditionsAndAnEndAlreadyPastFreesTheKey) {
  auto c = server.client();
  ASSERT_EQ(c.call({"SET", "r:f", "v", "PX", "60000"}).str, "OK");
  EXPECT_EQ(c.call({"PEXPIRE", "r:f", "120000", "GT"}).integer, 1);
  EXPECT_GT(c.call({"PTTL", "r:f"}).integer, 60000);
  EXPECT_EQ(c.call({"PEXPIRE", "r:f", "1000", "GT"}).integer, 0);
  EXPECT_EQ(c.call({"PEXPIRE", "r:f", "50000", "LT"}).integer, 1);
  EXPECT_LE(c.call({"PTTL", "r:f"}).integer, 50000);
  EXPECT_EQ(c.call({"PEXPIRE", "r:f", "5000", "NX"}).integer, 0) << "the hold has an end";
  EXPECT_EQ(c.call({"EXPIRE", "r:f", "40", "XX"}).integer, 1);
  EXPECT_EQ(c.call({"TTL", "r:f"}).integer, 40);
  EXPECT_EQ(c.call({"PEXPIREAT", "r:f", "1"}).integer, 1);
  EXPECT_EQ(c.call({"EXISTS", "r:f"}).integer, 0);
  EXPECT_EQ(c.call({"PEXPIRE", "r:f", "1000"}).integer, 0);
  EXPECT_EQ(c.call({"PERSIST", "r:f"}).integer, 0);
}

TEST_F(RedisIdiom, LockCommandsAndSetShareTheKeys) {
  auto c = server.client();
  auto hold = c.call({"LOCK.TRY", "r:g", "TTL", "60000", "OWNER", "job-7"});
  ASSERT_EQ(hold.text("handle").size(), 26u) << hold.debug();
  EXPECT_EQ(c.call({"GET", "r:g"}).str, "job-7");
  EXPECT_TRUE(c.call({"SET", "r:g", "x", "NX", "PX", "1000"}).is_null());
  // A shared key answers its newest hold's value, as LOCK.STATUS shows that hold.
  ASSERT_FALSE(
      c.call({"LOCK.TRY", "r:s", "TTL", "60000", "MODE", "SHARED", "OWNER", "reader-1"}).is_null());
  ASSERT_FALSE(
      c.call({"LOCK.TRY", "r:s", "TTL", "60000", "MODE", "SHARED", "OWNER", "reader-2"}).is_null());
  EXPECT_EQ(c.call({"GET", "r:s"}).str, "reader-2");
  EXPECT_EQ(c.call({"LOCK.STATUS", "r:s"}).text("owner"), "reader-2");
  // A SET hold is re-taken by owner through LOCK.TRY, with a new handle and token.
  ASSERT_EQ(c.call({"SET", "r:h", "job-8", "NX", "PX", "60000"}).str, "OK");
  const auto set_token = c.call({"LOCK.STATUS", "r:h"}).number("token");
  auto retaken = c.call({"LOCK.TRY", "r:h", "TTL", "60000", "OWNER", "job-8"});
  EXPECT_EQ(retaken.text("handle").size(), 26u) << retaken.debug();
  EXPECT_GT(retaken.number("token"), set_token);
  EXPECT_EQ(c.call({"LOCK.RELEASE", "r:h", retaken.text("handle")}).number("released"), 1);
  EXPECT_EQ(c.call({"EXISTS", "r:h"}).integer, 0);
}

TEST_F(RedisIdiom, SetAndStatusInOneTransactionGiveTheToken) {
  auto c = server.client();
  c.call({"MULTI"});
  c.call({"SET", "r:i", "v", "NX", "PX", "30000"});
  c.call({"LOCK.STATUS", "r:i"});
  auto exec = c.call({"EXEC"});
  ASSERT_EQ(exec.items.size(), 2u) << exec.debug();
  EXPECT_EQ(exec.items[0].str, "OK");
  EXPECT_EQ(exec.items[1].text("owner"), "v");
  EXPECT_GT(exec.items[1].number("token"), 0);
}

TEST_F(RedisIdiom, BadInputIsRefusedAndChangesNothing) {
  auto c = server.client();
  // Redis's own commands answer bad input with Redis's -ERR lines.
  EXPECT_EQ(c.call({"SET", "r:j", "", "PX", "1000"}).str, "ERR value must not be empty");
  EXPECT_EQ(c.call({"SET", "r:j", "v", "PX", "0"}).str, "ERR invalid expire time in 'set' command");
  EXPECT_NE(c.call({"SET", "r:j", "v", "NX", "XX"}).str.find("syntax error"), std::string::npos);
  EXPECT_TRUE(c.call({"SET", "r:j", "v", "PX", "soon"}).is_error());
  EXPECT_TRUE(c.call({"SET", "r:j", "v", "PX", "1000", "EX", "1"}).is_error());
  EXPECT_TRUE(c.call({"SET", "r:j", std::string(257, 'v')}).is_error());
  EXPECT_TRUE(c.call({"PEXPIRE", "r:j", "10", "GT", "LT"}).is_error());
  EXPECT_EQ(c.call({"GET"}).str, "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(c.call({"DEL"}).str, "ERR wrong number of arguments for 'del' command");
  EXPECT_EQ(c.call({"PEXPIRE", "r:j", "ten"}).str, "ERR value is not an integer or out of range");
  EXPECT_EQ(c.call({"EXISTS", "r:j"}).integer, 0);
  EXPECT_EQ(c.call({"PING"}).str, "PONG");
}

TEST_F(RedisIdiom, AnAcknowledgedSetNxSurvivesAKill9) {
  auto c = server.client();
  ASSERT_EQ(c.call({"SET", "r:k", "tok", "NX", "PX", "600000"}).str, "OK");
  const auto token = c.call({"LOCK.STATUS", "r:k"}).number("token");
  server.kill9();
  server.start();
  auto after = server.client();
  EXPECT_EQ(after.call({"GET", "r:k"}).str, "tok");
  EXPECT_EQ(after.call({"LOCK.STATUS", "r:k"}).number("token"), token);
  EXPECT_TRUE(after.call({"SET", "r:k", "other", "NX", "PX", "1000"}).is_null());
}

class RedisIdiomAuth : public ::testing::Test {
 protected:
  AuthConfig config{3};
  ServerProcess server{config.flags()};

  RespClient as(const std::string& token) {
    auto c = server.client();
    EXPECT_EQ(c.call({"AUTH", token}).str, "OK");
    return c;
  }
};

TEST_F(RedisIdiomAuth, DelAndPexpireActOnlyOnTheCallersOwnHolds) {
  auto alice = as("alice-secret");
  auto bob = as("bob-secret");
  ASSERT_EQ(alice.call({"SET", "r:l", "a1", "PX", "60000"}).str, "OK");
  EXPECT_EQ(alice.call({"LOCK.STATUS", "r:l"}).text("heldBy"), "user:alice");
  // A plain SET replaces alice's own hold but not bob's view of it.
  EXPECT_EQ(alice.call({"SET", "r:l", "a2", "PX", "60000"}).str, "OK");
  EXPECT_EQ(bob.call({"SET", "r:l", "b1", "PX", "60000"}).error_code(), "LOCK_HELD");
  EXPECT_TRUE(bob.call({"SET", "r:l", "b1", "NX", "PX", "60000"}).is_null());
  EXPECT_EQ(bob.call({"DEL", "r:l"}).integer, 0);
  EXPECT_EQ(bob.call({"PEXPIRE", "r:l", "1"}).integer, 0);
  EXPECT_EQ(bob.call({"GET", "r:l"}).str, "a2");
  EXPECT_GT(bob.call({"PTTL", "r:l"}).integer, 1000);
  // An admin frees any key.
  EXPECT_EQ(as("root-secret").call({"DEL", "r:l"}).integer, 1);
  EXPECT_EQ(bob.call({"SET", "r:l", "b1", "NX", "PX", "60000"}).str, "OK");
}

TEST_F(RedisIdiomAuth, SetCountsAgainstTheAcquireRateLimit) {
  auto alice = as("alice-secret");
  // The cap is 3 per hour; the SET above the cap answers RATE_LIMITED and takes nothing.
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(alice.call({"SET", "r:m" + std::to_string(i), "v", "NX", "PX", "60000"}).str, "OK");
  EXPECT_EQ(alice.call({"SET", "r:m9", "v", "NX", "PX", "60000"}).error_code(), "RATE_LIMITED");
  EXPECT_EQ(alice.call({"EXISTS", "r:m9"}).integer, 0);
}

}  // namespace
}  // namespace holdfast::testing
