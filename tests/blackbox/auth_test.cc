// Identity: credentials, AUTH over RESP and Bearer over HTTP, roles, rate limits, SIGHUP.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include <fstream>

#include "support/auth_config.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class Auth : public ::testing::Test {
 protected:
  AuthConfig config{600};
  ServerProcess server{config.flags()};

  RespClient as(const std::string& token) {
    auto c = server.client();
    auto r = c.call({"AUTH", token});
    EXPECT_EQ(r.str, "OK") << r.debug();
    return c;
  }
};

TEST_F(Auth, LockCommandsNeedAuthentication) {
  auto c = server.client();
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"LOCK.TRY", "k", "TTL", "1000"},
        {"LOCK.STATUS", "k"},
        {"LOCK.LIST"},
        {"LOCK.RELEASE", "k", "h"},
        {"LOCK.ASSIGN", "k", "a"}}) {
    auto r = c.call(cmd);
    EXPECT_EQ(r.error_code(), "NOAUTH") << cmd[0] << " " << r.debug();
  }
  EXPECT_EQ(c.call({"PING"}).str, "PONG");
  EXPECT_EQ(c.call({"AUTH", "wrong"}).error_code(), "WRONGPASS");
  EXPECT_EQ(c.call({"AUTH", "bob", "alice-secret"}).error_code(), "WRONGPASS");
  EXPECT_EQ(c.call({"HELLO", "3"}).error_code(), "NOAUTH");
  EXPECT_EQ(c.call({"AUTH", "alice", "alice-secret"}).str, "OK");
  EXPECT_EQ(c.call({"LOCK.TRY", "k", "TTL", "1000"}).text("heldBy"), "user:alice");
}

TEST_F(Auth, HelloWithAuthSwitchesProtocolAndIdentity) {
  auto c = server.client();
  auto hello = c.call({"HELLO", "3", "AUTH", "importer", "fn-secret"});
  ASSERT_EQ(hello.type, RespValue::Type::kMap) << hello.debug();
  EXPECT_EQ(hello.text("mode"), "auth");
  EXPECT_EQ(c.call({"LOCK.TRY", "jobs:nightly", "TTL", "1000"}).text("heldBy"),
            "function:importer");
}

TEST_F(Auth, MembersReadStatusButOnlyAdminsAndFunctionsList) {
  auto alice = as("alice-secret");
  alice.call({"LOCK.TRY", "user:alice:x", "TTL", "60000", "OWNER", "run-1"});
  auto bob = as("bob-secret");
  auto status = bob.call({"LOCK.STATUS", "user:alice:x"});
  EXPECT_EQ(status.text("heldBy"), "user:alice");
  EXPECT_EQ(status.text("owner"), "run-1");
  EXPECT_EQ(bob.call({"LOCK.LIST"}).error_code(), "FORBIDDEN");
  auto root = as("root-secret");
  auto page = root.call({"LOCK.LIST"});
  ASSERT_EQ(page.type, RespValue::Type::kArray) << page.debug();
  EXPECT_EQ(page.items[1].items.size(), 1u);
  EXPECT_EQ(as("fn-secret").call({"LOCK.LIST"}).type, RespValue::Type::kArray);
}

TEST_F(Auth, RetakeNeedsTheSamePrincipalOfTheSameKind) {
  auto alice = as("alice-secret");
  ASSERT_FALSE(alice.call({"LOCK.TRY", "job", "TTL", "60000", "OWNER", "run-1"}).is_null());
  // bob presenting alice's owner string gets the ordinary contention result
  EXPECT_TRUE(
      as("bob-secret").call({"LOCK.TRY", "job", "TTL", "60000", "OWNER", "run-1"}).is_null());
  EXPECT_FALSE(
      as("alice-secret").call({"LOCK.TRY", "job", "TTL", "60000", "OWNER", "run-1"}).is_null());
  // a function's hold is not re-taken by a member with the same owner, and vice versa
  auto fn = as("fn-secret");
  ASSERT_FALSE(fn.call({"LOCK.TRY", "fjob", "TTL", "60000", "OWNER", "run-9"}).is_null());
  EXPECT_TRUE(alice.call({"LOCK.TRY", "fjob", "TTL", "60000", "OWNER", "run-9"}).is_null());
}

TEST_F(Auth, HttpNeedsABearerToken) {
  auto no_token =
      run({"curl", "-s", "-w", "\n%{http_code}", server.http_url() + "/v1/locks/status?key=k"});
  EXPECT_NE(no_token.out.find("UNAUTHENTICATED"), std::string::npos);
  EXPECT_EQ(no_token.out.substr(no_token.out.size() - 3), "401");
  auto wrong = run({"curl", "-s", "-H", "Authorization: Bearer nope", "-w", "\n%{http_code}",
                    server.http_url() + "/v1/locks/status?key=k"});
  EXPECT_EQ(wrong.out.substr(wrong.out.size() - 3), "401");
  auto ok = run({"curl", "-s", "-X", "POST", "-H", "Authorization: Bearer alice-secret", "-w",
                 "\n%{http_code}", server.http_url() + "/v1/locks/try-acquire", "-d",
                 R"({"key":"k","ttlMs":1000})"});
  EXPECT_NE(ok.out.find("\"heldBy\":\"user:alice\""), std::string::npos) << ok.out;
  auto list = run({"curl", "-s", "-H", "Authorization: Bearer bob-secret", "-w", "\n%{http_code}",
                   server.http_url() + "/v1/locks"});
  EXPECT_NE(list.out.find("FORBIDDEN"), std::string::npos);
  EXPECT_EQ(list.out.substr(list.out.size() - 3), "403");
  auto health = run({"curl", "-s", server.http_url() + "/healthz"});
  EXPECT_EQ(health.out, R"({"status":"ok"})");
}

// RFC 7235: the scheme name is case-insensitive, and a 401 says which scheme to use.
TEST_F(Auth, TheBearerSchemeIsCaseInsensitiveAndA401NamesIt) {
  for (const char* scheme : {"bearer", "BEARER", "BeArEr"}) {
    auto r = run({"curl", "-s", "-w", "\n%{http_code}", "-H",
                  std::string("Authorization: ") + scheme + " alice-secret",
                  server.http_url() + "/v1/locks/status?key=k"});
    EXPECT_EQ(r.out.substr(r.out.size() - 3), "200") << scheme << ": " << r.out;
  }
  auto refused = run({"curl", "-s", "-i", server.http_url() + "/v1/locks/status?key=k"});
  EXPECT_EQ(refused.out.rfind("HTTP/1.1 401", 0), 0u) << refused.out;
  EXPECT_NE(refused.out.find("\r\nWWW-Authenticate: Bearer realm=\"holdfast\"\r\n"),
            std::string::npos)
      << refused.out;
  auto fine = run({"curl", "-s", "-i", "-H", "Authorization: Bearer alice-secret",
                   server.http_url() + "/v1/locks/status?key=k"});
  EXPECT_EQ(fine.out.find("WWW-Authenticate"), std::string::npos) << fine.out;
}

TEST_F(Auth, SighupReloadsTheCredentials) {
  EXPECT_EQ(server.client().call({"AUTH", "carol-secret"}).error_code(), "WRONGPASS");
  config.add_member("carol", "carol-secret");
  ::kill(server.pid(), SIGHUP);
  bool accepted = false;
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (!accepted && std::chrono::steady_clock::now() < deadline)
    accepted = server.client().call({"AUTH", "carol-secret"}).str == "OK";
  EXPECT_TRUE(accepted);
  auto alice = server.client();  // existing credentials still work
  EXPECT_EQ(alice.call({"AUTH", "alice-secret"}).str, "OK");
}

TEST(OpenMode, RefusesANonLoopbackListener) {
  TempDir dir;
  auto r =
      run({HOLDFAST_BIN, "serve", "--data-dir", dir.path(), "--listen", "0.0.0.0:0", "--http", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("local open mode"), std::string::npos) << r.err;
}

class RateLimits : public ::testing::Test {
 protected:
  AuthConfig config{3};
  ServerProcess server{config.flags()};
};

TEST_F(RateLimits, TryOverTheCapIsRateLimitedWithRetryAfter) {
  auto alice = server.client();
  alice.call({"AUTH", "alice-secret"});
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(alice.call({"LOCK.TRY", "k" + std::to_string(i), "TTL", "60000"}).is_error());
  auto limited = alice.call({"LOCK.TRY", "k9", "TTL", "60000"});
  ASSERT_EQ(limited.error_code(), "RATE_LIMITED") << limited.debug();
  auto at = limited.str.find("retryAfterMs=");
  ASSERT_NE(at, std::string::npos);
  long long retry = std::stoll(limited.str.substr(at + 13));
  EXPECT_GT(retry, 0);
  EXPECT_LE(retry, 3'600'000);
  EXPECT_EQ(alice.call({"LOCK.STATUS", "k9"}).number("held"), 0);  // nothing changed
  // Another member has their own budget.
  auto bob = server.client();
  bob.call({"AUTH", "bob-secret"});
  EXPECT_FALSE(bob.call({"LOCK.TRY", "b", "TTL", "1000"}).is_error());
}

TEST_F(RateLimits, A429OverHttpCarriesRetryAfterInWholeSeconds) {
  auto try_acquire = [&](const std::string& key) {
    return run({"curl", "-s", "-i", "-X", "POST", "-H", "Authorization: Bearer alice-secret",
                server.http_url() + "/v1/locks/try-acquire", "-d",
                R"({"key":")" + key + R"(","ttlMs":60000})"});
  };
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(try_acquire("h" + std::to_string(i)).out.rfind("HTTP/1.1 200", 0), 0u);
  auto limited = try_acquire("h9");
  ASSERT_EQ(limited.out.rfind("HTTP/1.1 429", 0), 0u) << limited.out;
  const std::smatch m = [&] {
    std::smatch found;
    std::regex_search(limited.out, found, std::regex("\r\nRetry-After: ([0-9]+)\r\n"));
    return found;
  }();
  ASSERT_FALSE(m.empty()) << limited.out;
  const long seconds = std::stol(m[1]);
  std::smatch ms;
  ASSERT_TRUE(std::regex_search(limited.out, ms, std::regex("\"retryAfterMs\":([0-9]+)")));
  EXPECT_EQ(seconds, (std::stol(ms[1]) + 999) / 1000) << "rounded up from the body's retryAfterMs";
  EXPECT_GE(seconds, 1);
}

TEST_F(RateLimits, ABlockingAcquireOverTheCapWaitsAndEndsInLockTimeout) {
  auto alice = server.client();
  alice.call({"AUTH", "alice-secret"});
  for (int i = 0; i < 3; ++i) alice.call({"LOCK.TRY", "k" + std::to_string(i), "TTL", "60000"});
  auto start = std::chrono::steady_clock::now();
  auto r = alice.call({"LOCK.ACQUIRE", "free-key", "TTL", "1000", "TIMEOUT", "300"});
  EXPECT_EQ(r.str, "LOCK_TIMEOUT no grant within the timeout key=free-key timeoutMs=300");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(290));
}

TEST_F(RateLimits, FunctionsAreNotCapped) {
  auto fn = server.client();
  fn.call({"AUTH", "fn-secret"});
  for (int i = 0; i < 20; ++i)
    EXPECT_FALSE(fn.call({"LOCK.TRY", "f" + std::to_string(i), "TTL", "1000"}).is_error());
}

}  // namespace
}  // namespace holdfast::testing
