// `holdfast locks` against a server with credentials: --token and HOLDFAST_TOKEN, and the exit
// codes of refusals (3 for authentication and access, 1 for the rate limit).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "support/auth_config.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

class LocksCliAuth : public ::testing::Test {
 protected:
  RunResult cli(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {HOLDFAST_BIN, "locks", "--server", server.url()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, "", env);
  }

  AuthConfig config{2};
  ServerProcess server{config.flags()};
};

TEST_F(LocksCliAuth, NoOrAWrongTokenExitsThree) {
  RunResult none = cli({"status", "k"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_NE(none.err.find("UNAUTHENTICATED"), std::string::npos) << none.err;
  RunResult wrong = cli({"status", "k", "--token", "nope", "--json"});
  EXPECT_EQ(wrong.exit_code, 3);
  EXPECT_EQ(json::parse(wrong.out).as_object()["errorCode"].as_string(), "UNAUTHENTICATED");
}

TEST_F(LocksCliAuth, TokenFromTheFlagOrTheEnvironment) {
  RunResult flag = cli({"acquire", "user:alice:1", "--token", "alice-secret", "--json"});
  ASSERT_EQ(flag.exit_code, 0) << flag.out << flag.err;
  EXPECT_EQ(json::parse(flag.out).as_object()["heldBy"].as_string(), "user:alice");
  RunResult env = cli({"status", "user:alice:1", "--json"}, {"HOLDFAST_TOKEN=bob-secret"});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(json::parse(env.out).as_object()["heldBy"].as_string(), "user:alice");
}

TEST_F(LocksCliAuth, ListNeedsAnAdmin) {
  RunResult member = cli({"list", "--token", "alice-secret"});
  EXPECT_EQ(member.exit_code, 3);
  EXPECT_NE(member.err.find("FORBIDDEN"), std::string::npos) << member.err;
  RunResult admin = cli({"list", "--token", "root-secret"});
  EXPECT_EQ(admin.exit_code, 0) << admin.err;
  EXPECT_EQ(admin.out, "no locks held\n");
}

TEST_F(LocksCliAuth, OverTheRateLimitExitsOneWithRetryAfter) {
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(cli({"acquire", "user:bob:" + std::to_string(i), "--token", "bob-secret"}).exit_code,
              0);
  RunResult limited = cli({"acquire", "user:bob:9", "--token", "bob-secret", "--json"});
  EXPECT_EQ(limited.exit_code, 1) << "rate limited: not acquired";
  json::object e = json::parse(limited.out).as_object();
  EXPECT_EQ(e["errorCode"].as_string(), "RATE_LIMITED");
  EXPECT_GT(e["details"].as_object()["retryAfterMs"].as_int64(), 0);
}

}  // namespace
}  // namespace holdfast::testing
