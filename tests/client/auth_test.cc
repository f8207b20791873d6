// The client against a server with credentials: tokens from the URL and from the options,
// and the typed errors of refusals only auth mode produces (UNAUTHENTICATED, FORBIDDEN,
// LOCK_ACCESS_DENIED, RATE_LIMITED).
#include <gtest/gtest.h>

#include "holdfast/client.h"
#include "support/auth_config.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using namespace std::chrono_literals;
using testing::AuthConfig;
using testing::ServerProcess;

class ClientAuth : public ::testing::Test {
 protected:
  std::string url(const std::string& userinfo) const {
    return "holdfast://" + userinfo + "@127.0.0.1:" + std::to_string(server.port());
  }

  AuthConfig config{3};
  ServerProcess server{config.flags()};
};

TEST_F(ClientAuth, ATokenFromTheUrlOrTheOptionsAuthenticates) {
  Client by_url(url(":alice-secret"));
  EXPECT_EQ(by_url.acquire("user:alice:1", {.ttl = 5000ms, .timeout = 0ms}).held_by, "user:alice");
  Client with_user(url("bob:bob-secret"));
  EXPECT_EQ(with_user.status("user:alice:1").hold->held_by, "user:alice");
  Client by_option(server.url(), {.token = "bob-secret"});
  EXPECT_EQ(by_option.try_acquire("user:bob:1", {.ttl = 5000ms})->held_by, "user:bob");
}

TEST_F(ClientAuth, MissingOrWrongTokenIsUnauthenticatedError) {
  Client anonymous(server.url());
  try {
    anonymous.status("k");
    FAIL();
  } catch (const UnauthenticatedError& e) {
    EXPECT_EQ(e.code(), "UNAUTHENTICATED");
  }
  EXPECT_THROW(Client(url(":wrong")).ping(), UnauthenticatedError);
  EXPECT_THROW(Client(url("bob:alice-secret")).ping(), UnauthenticatedError)
      << "the user must match";
}

TEST_F(ClientAuth, ServerInfoSaysTheServerChecksTokens) {
  EXPECT_EQ(Client(url(":alice-secret")).server_info().mode, "auth");
  EXPECT_THROW(Client(url(":wrong")).server_info(), UnauthenticatedError);
}

TEST_F(ClientAuth, ListIsForbiddenToMembers) {
  Client alice(url(":alice-secret"));
  EXPECT_THROW(alice.list(), ForbiddenError);
  Client root(url(":root-secret"));
  EXPECT_NO_THROW(root.list_all());
}

TEST_F(ClientAuth, ARuleThatDeniesIsAccessDeniedError) {
  auto admin = server.client();
  ASSERT_EQ(admin.call({"AUTH", "root-secret"}).str, "OK");
  auto set = admin.call({"RULES.SET",
                         "[ruleSet]\nname = \"lock-policy\"\nresourceType = \"lock\"\n\n"
                         "[rules.lock]\nacquire = \"record.key.startsWith('user:' + "
                         "user.userId + ':')\"\n"});
  ASSERT_FALSE(set.is_error()) << set.debug();
  Client alice(url(":alice-secret"));
  try {
    alice.try_acquire("jobs:nightly", {.ttl = 1000ms});
    FAIL();
  } catch (const AccessDeniedError& e) {
    EXPECT_EQ(e.code(), "LOCK_ACCESS_DENIED");
  }
  EXPECT_TRUE(alice.try_acquire("user:alice:x", {.ttl = 1000ms}));
}

TEST_F(ClientAuth, OverTheAcquireCapTryAcquireIsRateLimitedWithRetryAfter) {
  Client alice(url(":alice-secret"));
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(alice.try_acquire("user:alice:" + std::to_string(i), {.ttl = 5000ms}));
  try {
    alice.try_acquire("user:alice:3", {.ttl = 5000ms});
    FAIL() << "the fourth attempt within the hour is over the cap of 3";
  } catch (const RateLimitedError& e) {
    EXPECT_EQ(e.code(), "RATE_LIMITED");
    EXPECT_GT(e.retry_after(), 0ms);
    EXPECT_LE(e.retry_after(), 3600000ms);
  }
  EXPECT_THROW(alice.acquire("user:alice:4", {.ttl = 5000ms, .timeout = 200ms}), LockTimeoutError)
      << "a blocking acquire over the cap waits and times out";
}

}  // namespace
}  // namespace holdfast
