// Lock-delay against the real server (docs/lock-kinds.md, "Lock-delay"), over RESP and HTTP,
// on both backends: after an expiry or a session end the key stays closed for the delay the
// hold asked for (or the rule set's default); a release closes nothing; the delay survives
// kill -9. The server's clock is real here, so the tests poll it and use short leases.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <thread>

#include "support/curl_json.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

// Polls LOCK.STATUS until the key is no longer held (its lease ended); that status, or an
// error reply, or the last status if it never is.
RespValue await_free(RespClient& c, const std::string& key) {
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  for (;;) {
    RespValue s = c.call({"LOCK.STATUS", key});
    if (s.is_error() || s.number("held") == 0 || std::chrono::steady_clock::now() > deadline)
      return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

class LockDelay : public ::testing::Test {
 protected:
  ServerProcess server{{"--fsync", "always"}};
  RespClient c = server.client();
  RespClient other = server.client();
};

TEST_F(LockDelay, AnExpiryClosesTheKeyUntilTheLeaseEndPlusTheDelay) {
  // 3 s: the calls below that find the key closed must all come before the delay ends.
  auto held = c.call({"LOCK.ACQUIRE", "job", "TTL", "300", "TIMEOUT", "0", "LOCKDELAY", "3000"});
  ASSERT_FALSE(held.is_error()) << held.debug();
  EXPECT_EQ(held.number("lockDelayMs"), 3000);
  auto s = await_free(c, "job");
  ASSERT_EQ(s.number("held"), 0) << s.debug();
  const std::int64_t until = held.number("leaseExpiresAt") + 3000;
  EXPECT_EQ(s.number("lockDelayUntil"), until) << s.debug();
  // Closed to everyone, the Redis idiom included.
  EXPECT_TRUE(other.call({"LOCK.TRY", "job", "TTL", "1000"}).is_null());
  EXPECT_TRUE(other.call({"SET", "job", "v", "NX", "PX", "1000"}).is_null());
  auto set = other.call({"SET", "job", "v", "PX", "1000"});
  EXPECT_EQ(set.str.rfind("LOCK_HELD", 0), 0u) << set.debug();
  EXPECT_TRUE(c.call({"LOCK.TRY", "job", "TTL", "1000"}).is_null());
  // A blocking acquire waits for the delay to end.
  auto next =
      other.call({"LOCK.ACQUIRE", "job", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
  ASSERT_FALSE(next.is_error()) << next.debug();
  EXPECT_GE(next.number("acquiredAt"), until);
  EXPECT_GT(next.number("token"), held.number("token"));
  EXPECT_FALSE(next.has("lockDelayMs"));  // a hold without a delay shows no such field
  auto after = c.call({"LOCK.STATUS", "job"});
  EXPECT_FALSE(after.has("lockDelayUntil")) << after.debug();
}

TEST_F(LockDelay, AReleaseClosesNothing) {
  auto held = c.call({"LOCK.TRY", "job", "TTL", "60000", "LOCKDELAY", "60000"});
  ASSERT_FALSE(held.is_error()) << held.debug();
  ASSERT_EQ(c.call({"LOCK.RELEASE", "job", held.text("handle")}).number("released"), 1);
  auto next = other.call({"LOCK.TRY", "job", "TTL", "1000"});
  ASSERT_FALSE(next.is_null() || next.is_error()) << next.debug();
}

TEST_F(LockDelay, AWaiterWhoseTimeoutEndsDuringTheDelayTimesOut) {
  ASSERT_FALSE(c.call({"LOCK.TRY", "job", "TTL", "200", "LOCKDELAY", "30000"}).is_error());
  auto out = other.call({"LOCK.ACQUIRE", "job", "TTL", "1000", "TIMEOUT", "800"});
  EXPECT_EQ(out.str, "LOCK_TIMEOUT no grant within the timeout key=job timeoutMs=800");
  EXPECT_GT(c.call({"LOCK.STATUS", "job"}).number("lockDelayUntil"), 0);
}

TEST_F(LockDelay, ASessionEndClosesTheKey) {
  {
    RespClient session = server.client();
    auto held = session.call({"LOCK.TRY", "job", "TTL", "60000", "SESSION", "LOCKDELAY", "30000"});
    ASSERT_FALSE(held.is_error()) << held.debug();
  }  // the connection closes
  auto s = await_free(c, "job");
  ASSERT_EQ(s.number("held"), 0) << s.debug();
  EXPECT_GT(s.number("lockDelayUntil"), 0) << s.debug();
  EXPECT_TRUE(c.call({"LOCK.TRY", "job", "TTL", "1000"}).is_null());
}

TEST_F(LockDelay, ADelayOutOfRangeIsInvalidAndChangesNothing) {
  EXPECT_EQ(c.call({"LOCK.TRY", "job", "TTL", "1000", "LOCKDELAY", "60001"}).str,
            "INVALID_ARGUMENT lock-delay must be 0 to 60000 milliseconds field=lockDelayMs "
            "lockDelayMs=60001");
  EXPECT_EQ(c.call({"LOCK.ASSIGN", "job", "w1", "LOCKDELAY", "-1"}).str,
            "INVALID_ARGUMENT lock-delay must be 0 to 60000 milliseconds field=lockDelayMs "
            "lockDelayMs=-1");
  auto word = c.call({"LOCK.ACQUIRE", "job", "TTL", "1000", "TIMEOUT", "0", "LOCKDELAY", "soon"});
  ASSERT_TRUE(word.is_error());
  EXPECT_EQ(word.str.rfind("INVALID_ARGUMENT", 0), 0u) << word.str;
  EXPECT_EQ(c.call({"LOCK.STATUS", "job"}).number("held"), 0);
}

TEST_F(LockDelay, TheRuleSetsDefaultAppliesToRequestsThatAskForNone) {
  auto set = c.call({"RULES.SET",
                     "[ruleSet]\nname = \"delays\"\nresourceType = \"lock\"\nlockDelayMs = 4000\n"
                     "[rules.lock]\nacquire = \"true\"\nassign = \"true\"\n"});
  ASSERT_FALSE(set.is_error()) << set.debug();
  auto by_default = c.call({"LOCK.TRY", "a", "TTL", "1000"});
  EXPECT_EQ(by_default.number("lockDelayMs"), 4000) << by_default.debug();
  auto asked = c.call({"LOCK.TRY", "b", "TTL", "1000", "LOCKDELAY", "0"});
  EXPECT_FALSE(asked.has("lockDelayMs")) << asked.debug();
  auto assigned = c.call({"LOCK.ASSIGN", "c", "w1", "TTL", "1000"});
  EXPECT_EQ(assigned.number("lockDelayMs"), 4000) << assigned.debug();
  auto bad = c.call({"RULES.SET",
                     "[ruleSet]\nname = \"delays\"\nresourceType = \"lock\"\nlockDelayMs = 90000\n"
                     "[rules.lock]\nacquire = \"true\"\n"});
  EXPECT_EQ(bad.str,
            "INVALID_ARGUMENT rule set: [ruleSet] lockDelayMs must be an integer from 0 to 60000 "
            "(milliseconds)");
}

TEST_F(LockDelay, ADelayRunningAtKillNineKeepsTheKeyClosedUntilTheSameInstant) {
  auto held = c.call({"LOCK.TRY", "job", "TTL", "200", "LOCKDELAY", "6000"});
  ASSERT_FALSE(held.is_error()) << held.debug();
  const std::int64_t until = held.number("leaseExpiresAt") + 6000;
  ASSERT_EQ(await_free(c, "job").number("lockDelayUntil"), until);
  server.kill9();
  server.start();
  RespClient again = server.client();
  auto s = again.call({"LOCK.STATUS", "job"});
  EXPECT_EQ(s.number("held"), 0);
  EXPECT_EQ(s.number("lockDelayUntil"), until) << s.debug();
  EXPECT_TRUE(again.call({"LOCK.TRY", "job", "TTL", "1000"}).is_null());
  auto next =
      again.call({"LOCK.ACQUIRE", "job", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
  ASSERT_FALSE(next.is_error()) << next.debug();
  EXPECT_GE(next.number("acquiredAt"), until);
}

class HttpLockDelay : public ::testing::Test {
 protected:
  ServerProcess server;

  HttpReply post(const std::string& path, const std::string& body) {
    return curl_json({"-X", "POST", server.http_url() + path, "--data-binary", "@-"}, body);
  }
  HttpReply status(const std::string& key) {
    return curl_json({server.http_url() + "/v1/locks/status?key=" + key});
  }
};

TEST_F(HttpLockDelay, LockDelayMsClosesTheKeyAndStatusSaysUntilWhen) {
  auto a = post("/v1/locks/try-acquire", R"({"key":"job","ttlMs":300,"lockDelayMs":5000})");
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body.at("handle").at("lockDelayMs").as_int64(), 5000);
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  HttpReply s = status("job");
  while (s.status == 200 && s.body.at("held").as_bool() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    s = status("job");
  }
  ASSERT_EQ(s.status, 200) << s.raw;
  EXPECT_FALSE(s.body.at("held").as_bool());
  ASSERT_TRUE(s.body.at("lockDelayUntil").is_string()) << s.raw;  // an ISO-8601 time
  auto b = post("/v1/locks/try-acquire", R"({"key":"job","ttlMs":1000})");
  ASSERT_EQ(b.status, 200) << b.raw;
  EXPECT_TRUE(b.body.at("handle").is_null()) << b.raw;
}

TEST_F(HttpLockDelay, ABadLockDelayIs400AndNamesTheField) {
  auto over =
      post("/v1/locks/acquire", R"({"key":"job","ttlMs":1000,"timeoutMs":0,"lockDelayMs":60001})");
  EXPECT_EQ(over.status, 400) << over.raw;
  EXPECT_EQ(over.body.at("message").as_string(), "lock-delay must be 0 to 60000 milliseconds");
  EXPECT_EQ(over.body.at("details").at("field").as_string(), "lockDelayMs");
  auto text = post("/v1/locks/assign", R"({"key":"job","holderId":"w1","lockDelayMs":"5"})");
  EXPECT_EQ(text.status, 400) << text.raw;
  EXPECT_FALSE(status("job").body.at("held").as_bool());
}

}  // namespace
}  // namespace holdfast::testing
