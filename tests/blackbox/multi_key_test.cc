// Several keys at once over RESP and HTTP (docs/lock-kinds.md, "Several keys at once"), against
// the real server: all or nothing, one handle and a token per key, waiting in every key's
// queue without deadlock, the group released and renewed by any of its keys, the rules per
// key, precise errors that change nothing, and a group that survives kill -9. A node over
// PostgreSQL answers the same, except where docs/scale-out.md says its order differs (a
// waiting group reserves no key there).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>

#include "auth/credentials.h"
#include "support/curl_json.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

class MultiKey : public ::testing::Test {
 protected:
  ServerProcess server{{"--fsync", "always"}};
  RespClient c = server.client();
  bool over_postgres() const { return !server.store_url().empty(); }
  std::int64_t held(RespClient& client, const std::string& key) {
    return client.call({"LOCK.STATUS", key}).number("held");
  }
};

TEST_F(MultiKey, GrantsEveryKeyWithOneHandleAndATokenEachInKeyOrder) {
  auto g = c.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "b", "MODE", "SHARED", "KEY", "a", "KEY",
                   "pool", "PERMITS", "3", "TAKE", "2"});
  ASSERT_FALSE(g.is_error()) << g.debug();
  const std::string handle = g.text("handle");
  EXPECT_EQ(handle.size(), 26u);
  EXPECT_GT(g.number("leaseExpiresAt"), 0);
  const RespValue* holds = g.get("holds");
  ASSERT_NE(holds, nullptr);
  ASSERT_EQ(holds->items.size(), 3u) << g.debug();
  EXPECT_EQ(holds->items[0].text("key"), "a");
  EXPECT_EQ(holds->items[1].text("key"), "b");
  EXPECT_EQ(holds->items[2].text("key"), "pool");
  EXPECT_FALSE(holds->items[0].has("mode"));  // exclusive, as a single grant shows it
  EXPECT_EQ(holds->items[1].text("mode"), "shared");
  EXPECT_EQ(holds->items[2].text("mode"), "semaphore");
  EXPECT_EQ(holds->items[2].number("take"), 2);
  EXPECT_EQ(holds->items[2].number("permits"), 3);
  for (const RespValue& h : holds->items) EXPECT_EQ(h.text("handle"), handle);
  EXPECT_LT(holds->items[0].number("token"), holds->items[1].number("token"));
  EXPECT_LT(holds->items[1].number("token"), holds->items[2].number("token"));
  // Each key's status shows its hold; a reader may join the shared key.
  EXPECT_EQ(c.call({"LOCK.STATUS", "a"}).number("token"), holds->items[0].number("token"));
  EXPECT_EQ(c.call({"LOCK.STATUS", "pool"}).number("freePermits"), 1);
  EXPECT_FALSE(c.call({"LOCK.TRY", "b", "TTL", "1000", "MODE", "SHARED"}).is_null());
  // Renew by one key renews all; release by another releases all.
  auto r = c.call({"LOCK.RENEW", "pool", handle, "TTL", "120000"});
  ASSERT_EQ(r.number("renewed"), 1) << r.debug();
  EXPECT_EQ(c.call({"LOCK.STATUS", "a"}).number("leaseExpiresAt"), r.number("leaseExpiresAt"));
  EXPECT_EQ(c.call({"LOCK.RELEASE", "a", handle}).number("released"), 1);
  EXPECT_EQ(held(c, "a"), 0);
  EXPECT_EQ(held(c, "pool"), 0);
  EXPECT_EQ(c.call({"LOCK.STATUS", "b"}).get("holders")->items.size(), 1u);  // the reader's
  EXPECT_EQ(c.call({"LOCK.RELEASE", "pool", handle}).number("released"), 0);
}

TEST_F(MultiKey, AllOrNothing) {
  RespClient other = server.client();
  auto b = other.call({"LOCK.TRY", "b", "TTL", "60000"});
  ASSERT_FALSE(b.is_error()) << b.debug();
  EXPECT_TRUE(c.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "a", "KEY", "b"}).is_null());
  EXPECT_EQ(held(c, "a"), 0);
  auto t = c.call({"LOCK.ACQUIREALL", "TTL", "60000", "TIMEOUT", "50", "KEY", "a", "KEY", "b"});
  EXPECT_EQ(t.error_code(), "LOCK_TIMEOUT") << t.debug();
  EXPECT_EQ(held(c, "a"), 0);
  EXPECT_EQ(c.call({"LOCK.STATUS", "b"}).number("waiters"), 0);
}

TEST_F(MultiKey, AWaiterTakesEveryKeyWhenTheLastFrees) {
  auto b = c.call({"LOCK.TRY", "b", "TTL", "60000"});
  RespClient waiter = server.client();
  waiter.send({"LOCK.ACQUIREALL", "TTL", "60000", "TIMEOUT", "10000", "KEY", "a", "KEY", "b"});
  ASSERT_TRUE(await_waiters(c, "b", 1));
  EXPECT_EQ(c.call({"LOCK.STATUS", "a"}).number("waiters"), 1);
  if (over_postgres()) {
    // A waiting group reserves no key on a node over PostgreSQL: the free key is granted.
    auto a = c.call({"LOCK.TRY", "a", "TTL", "1000"});
    ASSERT_FALSE(a.is_null()) << a.debug();
    ASSERT_EQ(c.call({"LOCK.RELEASE", "a", a.text("handle")}).number("released"), 1);
  } else {
    // "a" is free but its first waiter is the multi-key request: no barging.
    EXPECT_TRUE(c.call({"LOCK.TRY", "a", "TTL", "1000"}).is_null());
  }
  ASSERT_EQ(c.call({"LOCK.RELEASE", "b", b.text("handle")}).number("released"), 1);
  auto g = waiter.read();
  ASSERT_FALSE(g.is_error()) << g.debug();
  EXPECT_EQ(g.get("holds")->items.size(), 2u);
  EXPECT_EQ(held(c, "a"), 1);
  EXPECT_EQ(held(c, "b"), 1);
}

TEST_F(MultiKey, CrossingRequestsAreGrantedOneAfterTheOther) {
  auto a = c.call({"LOCK.TRY", "a", "TTL", "60000"});
  auto b = c.call({"LOCK.TRY", "b", "TTL", "60000"});
  RespClient first = server.client();
  RespClient second = server.client();
  // Short leases: on a node over PostgreSQL either group may win (no order across groups
  // there), and the other then has both keys when the winner's lease ends.
  first.send({"LOCK.ACQUIREALL", "TTL", "1500", "TIMEOUT", "10000", "KEY", "a", "KEY", "b"});
  ASSERT_TRUE(await_waiters(c, "a", 1));
  second.send({"LOCK.ACQUIREALL", "TTL", "1500", "TIMEOUT", "10000", "KEY", "b", "KEY", "a"});
  ASSERT_TRUE(await_waiters(c, "a", 2));
  ASSERT_EQ(c.call({"LOCK.RELEASE", "a", a.text("handle")}).number("released"), 1);
  ASSERT_EQ(c.call({"LOCK.RELEASE", "b", b.text("handle")}).number("released"), 1);
  auto g1 = first.read();
  ASSERT_FALSE(g1.is_error()) << g1.debug();
  (void)c.call({"LOCK.RELEASE", "b", g1.text("handle")});  // gone already if it lost the race
  auto g2 = second.read();
  ASSERT_FALSE(g2.is_error()) << g2.debug();
  const auto& h1 = g1.get("holds")->items;
  const auto& h2 = g2.get("holds")->items;
  if (over_postgres()) {
    // Whichever came second took both keys after the first had released them.
    EXPECT_TRUE(h2[0].number("token") > h1[1].number("token") ||
                h1[0].number("token") > h2[1].number("token"));
  } else {
    EXPECT_GT(h2[0].number("token"), h1[1].number("token"));
  }
}

// DEL and PEXPIRE of the Redis idiom act on a group as a whole, whichever key they name.
TEST_F(MultiKey, DelAndPexpireOfOneKeyActOnTheWholeGroup) {
  auto g =
      c.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "a", "KEY", "b", "KEY", "c", "MODE", "SHARED"});
  ASSERT_FALSE(g.is_null() || g.is_error()) << g.debug();
  EXPECT_EQ(c.call({"PEXPIRE", "b", "120000"}).integer, 1);
  for (const char* key : {"a", "b", "c"}) {
    auto s = c.call({"LOCK.STATUS", key});
    EXPECT_GT(s.number("leaseExpiresAt"), g.number("leaseExpiresAt") + 30000) << key;
  }
  EXPECT_EQ(c.call({"DEL", "c"}).integer, 1);
  for (const char* key : {"a", "b", "c"}) EXPECT_EQ(held(c, key), 0) << key;
  EXPECT_EQ(c.call({"LOCK.RENEW", "a", g.text("handle"), "TTL", "1000"}).number("renewed"), 0);

  auto again = c.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "a", "KEY", "b"});
  ASSERT_FALSE(again.is_null() || again.is_error()) << again.debug();
  EXPECT_EQ(c.call({"PEXPIRE", "a", "0"}).integer, 1);  // an expiry that has come deletes
  EXPECT_EQ(held(c, "a"), 0);
  EXPECT_EQ(held(c, "b"), 0);

  auto shared = c.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "a", "KEY", "s", "MODE", "SHARED"});
  ASSERT_FALSE(shared.is_null() || shared.is_error()) << shared.debug();
  EXPECT_EQ(c.call({"PEXPIRE", "s", "120000"}).integer, 1);
  EXPECT_GT(c.call({"LOCK.STATUS", "a"}).number("leaseExpiresAt"),
            shared.number("leaseExpiresAt") + 30000)
      << "the shared key's group moved with it";
}

TEST_F(MultiKey, InsideATransactionABlockingRequestMakesOneAttempt) {
  RespClient other = server.client();
  ASSERT_FALSE(other.call({"LOCK.TRY", "q", "TTL", "60000"}).is_error());
  EXPECT_EQ(c.call({"MULTI"}).str, "OK");
  EXPECT_EQ(c.call({"LOCK.ACQUIREALL", "TTL", "1000", "TIMEOUT", "5000", "OWNER", "o", "KEY", "a",
                    "KEY", "q"})
                .str,
            "QUEUED");
  EXPECT_EQ(c.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "a", "KEY", "z"}).str, "QUEUED");
  auto exec = c.call({"EXEC"});
  ASSERT_EQ(exec.items.size(), 2u) << exec.debug();
  EXPECT_EQ(exec.items[0].error_code(), "LOCK_TIMEOUT") << exec.debug();
  EXPECT_EQ(exec.items[0].str.find("key=a"), exec.items[0].str.find("key="));  // the first key
  EXPECT_EQ(exec.items[1].get("holds")->items.size(), 2u) << exec.debug();
  EXPECT_EQ(c.call({"LOCK.STATUS", "q"}).number("waiters"), 0);
}

TEST_F(MultiKey, ASessionGroupEndsWithItsConnection) {
  {
    RespClient owner = server.client();
    auto g = owner.call({"LOCK.TRYALL", "TTL", "600000", "SESSION", "KEY", "s1", "KEY", "s2"});
    ASSERT_FALSE(g.is_error()) << g.debug();
    EXPECT_EQ(g.get("holds")->items[1].text("scope"), "session");
    EXPECT_EQ(held(c, "s2"), 1);
  }  // the connection closes
  RespClient waiter = server.client();
  // Granted once the closed connection's group is gone (its lease, 10 minutes, is far off).
  auto next = waiter.call({"LOCK.ACQUIREALL", "TTL", "1000", "TIMEOUT",
                           std::to_string(kEventuallyMs), "KEY", "s2", "KEY", "s1"});
  ASSERT_FALSE(next.is_error()) << next.debug();
  EXPECT_EQ(next.get("holds")->items.size(), 2u);
}

TEST_F(MultiKey, BadRequestsArePreciseAndChangeNothing) {
  // The request is checked before any backend sees it, so these are the same on both.
  EXPECT_EQ(c.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "a", "KEY", "a"}).str,
            "INVALID_ARGUMENT a key appears more than once in the request key=a");
  EXPECT_EQ(c.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "a", "MODE", "READ"}).str,
            "INVALID_ARGUMENT MODE must be SHARED or EXCLUSIVE key=a");
  EXPECT_EQ(c.call({"LOCK.TRYALL", "TTL", "1000", "OWNER", "x"}).str,
            "INVALID_ARGUMENT LOCK.TRYALL needs at least one KEY <key>");
  EXPECT_EQ(c.call({"LOCK.TRYALL", "KEY", "a"}).str,
            "INVALID_ARGUMENT TTL is required (milliseconds)");
  EXPECT_EQ(c.call({"LOCK.ACQUIREALL", "TTL", "1000", "KEY", "a", "KEY", "b"}).str,
            "INVALID_ARGUMENT TIMEOUT is required (milliseconds; 0 for one attempt)");
  EXPECT_EQ(c.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "a", "TIMEOUT", "5"}).error_code(),
            "INVALID_ARGUMENT");
  EXPECT_EQ(c.call({"LOCK.TRYALL", "TTL", "1000", "KEY"}).str,
            "INVALID_ARGUMENT KEY needs a value");
  std::vector<std::string> many = {"LOCK.TRYALL", "TTL", "1000"};
  for (int i = 0; i < 65; ++i) {
    many.push_back("KEY");
    many.push_back("k" + std::to_string(i));
  }
  EXPECT_EQ(c.call(many).str,
            "INVALID_ARGUMENT a multi-key request names 1 to 64 keys, not 65 field=keys");
  // One bad key refuses the request: the good ones are not taken.
  auto bad = c.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "good", "KEY", std::string(2000, 'x')});
  EXPECT_EQ(bad.error_code(), "INVALID_ARGUMENT") << bad.debug();
  // A key named KEY is a key.
  auto odd = c.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "KEY", "KEY", "MODE"});
  ASSERT_FALSE(odd.is_error()) << odd.debug();
  EXPECT_EQ(odd.get("holds")->items[0].text("key"), "KEY");
  EXPECT_EQ(odd.get("holds")->items[1].text("key"), "MODE");
  EXPECT_EQ(held(c, "a"), 0);
  EXPECT_EQ(held(c, "good"), 0);
}

class MultiKeyRules : public ::testing::Test {
 protected:
  TempDir dir;
  std::vector<std::string> flags() {
    std::ofstream(dir.path() + "/credentials.toml")
        << "[[member]]\nuserId = \"alice\"\ntokenSha256 = \"" << to_hex(sha256("alice-secret"))
        << "\"\n[[member]]\nuserId = \"root\"\nrole = \"admin\"\ntokenSha256 = \""
        << to_hex(sha256("root-secret")) << "\"\n";
    std::ofstream(dir.path() + "/holdfast.toml") << "[auth]\ncredentials = \"credentials.toml\"\n";
    return {"--config", dir.path() + "/holdfast.toml"};
  }
  ServerProcess server{flags()};
  RespClient as(const std::string& token) {
    auto c = server.client();
    EXPECT_EQ(c.call({"AUTH", token}).str, "OK");
    return c;
  }
};

TEST_F(MultiKeyRules, EveryKeyGoesThroughTheRules) {
  auto set = as("root-secret")
                 .call({"RULES.SET",
                        "[ruleSet]\nname = \"p\"\nresourceType = \"lock\"\n[rules.lock]\nacquire = "
                        "\"!record.key.startsWith('secret/')\"\n"});
  ASSERT_FALSE(set.is_error()) << set.debug();
  RespClient alice = as("alice-secret");
  auto denied = alice.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "open/1", "KEY", "secret/1"});
  EXPECT_EQ(denied.error_code(), "LOCK_ACCESS_DENIED") << denied.debug();
  EXPECT_NE(denied.str.find("key=secret/1"), std::string::npos) << denied.str;
  EXPECT_EQ(alice.call({"LOCK.STATUS", "open/1"}).number("held"), 0);
  EXPECT_FALSE(
      alice.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "open/1", "KEY", "open/2"}).is_error());
}

TEST_F(MultiKey, AGroupSurvivesKillNineAndStillActsAsOne) {
  auto g = c.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "x", "KEY", "y", "MODE", "SHARED"});
  ASSERT_FALSE(g.is_error()) << g.debug();
  server.kill9();
  server.start();
  RespClient again = server.client();
  EXPECT_EQ(again.call({"LOCK.STATUS", "x"}).number("token"),
            g.get("holds")->items[0].number("token"));
  EXPECT_EQ(again.call({"LOCK.STATUS", "y"}).text("mode"), "shared");
  EXPECT_EQ(again.call({"LOCK.RELEASE", "y", g.text("handle")}).number("released"), 1);
  EXPECT_EQ(held(again, "x"), 0);
  EXPECT_EQ(held(again, "y"), 0);
}

class HttpMultiKey : public ::testing::Test {
 protected:
  ServerProcess server;
  HttpReply post(const std::string& path, const std::string& body) {
    return curl_json({"-X", "POST", server.http_url() + path, "--data-binary", "@-"}, body);
  }
};

TEST_F(HttpMultiKey, AcquireAllTryAndReleaseByAnyKey) {
  auto g = post("/v1/locks/acquire-all",
                R"({"keys":[{"key":"b","mode":"shared"},{"key":"a"},{"key":"s","permits":2}],)"
                R"("ttlMs":60000,"timeoutMs":1000,"owner":"job"})");
  ASSERT_EQ(g.status, 200) << g.raw;
  const std::string handle(g.body.at("handle").as_string());
  const json::array& holds = g.body.at("holds").as_array();
  ASSERT_EQ(holds.size(), 3u);
  EXPECT_EQ(holds[0].at("key").as_string(), "a");
  EXPECT_EQ(holds[0].at("owner").as_string(), "job");
  EXPECT_EQ(holds[1].at("mode").as_string(), "shared");
  EXPECT_EQ(holds[2].at("permits").as_int64(), 2);
  EXPECT_EQ(holds[2].at("take").as_int64(), 1);
  EXPECT_EQ(holds[2].at("handle").as_string(), handle);
  auto none =
      post("/v1/locks/try-acquire-all", R"({"keys":[{"key":"a"},{"key":"c"}],"ttlMs":1000})");
  ASSERT_EQ(none.status, 200) << none.raw;
  EXPECT_TRUE(none.body.at("handle").is_null());
  // The hold object of one key, sent back as it is, releases the group.
  auto rel = post("/v1/locks/release", json::serialize(holds[2]));
  ASSERT_EQ(rel.status, 200) << rel.raw;
  EXPECT_TRUE(rel.body.at("released").as_bool());
  auto again =
      post("/v1/locks/try-acquire-all", R"({"keys":[{"key":"a"},{"key":"c"}],"ttlMs":1000})");
  EXPECT_TRUE(again.body.at("handle").is_string()) << again.raw;
}

TEST_F(HttpMultiKey, BadBodiesArePreciseErrors) {
  auto dup =
      post("/v1/locks/try-acquire-all", R"({"keys":[{"key":"a"},{"key":"a"}],"ttlMs":1000})");
  EXPECT_EQ(dup.status, 400) << dup.raw;
  EXPECT_EQ(dup.body.at("details").at("key").as_string(), "a") << dup.raw;
  auto unknown = post("/v1/locks/try-acquire-all",
                      R"({"keys":[{"key":"a"},{"key":"b","ttl":5}],"ttlMs":1000})");
  EXPECT_EQ(unknown.status, 400) << unknown.raw;
  EXPECT_EQ(unknown.body.at("details").at("index").as_int64(), 1) << unknown.raw;
  auto empty = post("/v1/locks/try-acquire-all", R"({"keys":[],"ttlMs":1000})");
  EXPECT_EQ(empty.status, 400) << empty.raw;
  EXPECT_EQ(empty.body.at("details").at("field").as_string(), "keys");
  auto not_objects = post("/v1/locks/try-acquire-all", R"({"keys":["a"],"ttlMs":1000})");
  EXPECT_EQ(not_objects.status, 400) << not_objects.raw;
  auto no_timeout = post("/v1/locks/acquire-all", R"({"keys":[{"key":"a"}],"ttlMs":1000})");
  EXPECT_EQ(no_timeout.status, 400) << no_timeout.raw;
  auto mode =
      post("/v1/locks/try-acquire-all", R"({"keys":[{"key":"a","mode":"read"}],"ttlMs":1})");
  EXPECT_EQ(mode.status, 400) << mode.raw;
  EXPECT_EQ(mode.body.at("details").at("key").as_string(), "a") << mode.raw;
}

}  // namespace
}  // namespace holdfast::testing
