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

TEST_F(LocksCliAuth, NoOrAWrongTokenExitsThreeNamingTheFlag) {
  RunResult none = cli({"status", "k"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_EQ(none.err,
            "holdfast locks: the server needs a token: pass --token or set HOLDFAST_TOKEN\n");
  RunResult wrong = cli({"status", "k", "--token", "nope"});
  EXPECT_EQ(wrong.exit_code, 3);
  EXPECT_EQ(wrong.err,
            "holdfast locks: the server refused the token given by --token (no member or "
            "function of its credentials has it)\n");
  RunResult wrong_env = cli({"acquire", "k"}, {"HOLDFAST_TOKEN=nope"});
  EXPECT_EQ(wrong_env.exit_code, 3);
  EXPECT_EQ(wrong_env.err,
            "holdfast locks: the server refused the token given by HOLDFAST_TOKEN (no member "
            "or function of its credentials has it)\n");
  RunResult flag_wins = cli({"status", "k", "--token", "nope"}, {"HOLDFAST_TOKEN=alice-secret"});
  EXPECT_EQ(flag_wins.exit_code, 3) << "--token wins over HOLDFAST_TOKEN";
  EXPECT_NE(flag_wins.err.find("given by --token"), std::string::npos) << flag_wins.err;
  RunResult json_wrong = cli({"status", "k", "--token", "nope", "--json"});
  EXPECT_EQ(json_wrong.exit_code, 3);
  EXPECT_EQ(json::parse(json_wrong.out).as_object()["errorCode"].as_string(), "UNAUTHENTICATED");
  RunResult rules = run({HOLDFAST_BIN, "rules", "get", "--server", server.url()});
  EXPECT_EQ(rules.exit_code, 3);
  EXPECT_EQ(rules.err,
            "holdfast rules: the server needs a token: pass --token or set HOLDFAST_TOKEN\n");
  RunResult run_cmd = cli({"run", "k", "--", "true"}, {"HOLDFAST_TOKEN=nope"});
  EXPECT_EQ(run_cmd.exit_code, 3);
  EXPECT_NE(run_cmd.err.find("holdfast locks run: the server refused the token given by "
                             "HOLDFAST_TOKEN"),
            std::string::npos)
      << run_cmd.err;
}

TEST_F(LocksCliAuth, ARightTokenIsNotWarnedAbout) {
  RunResult ok = cli({"status", "k", "--token", "alice-secret"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.err, "") << "the server checks tokens: nothing to warn about";
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

TEST_F(LocksCliAuth, AWaitOverTheRateLimitSaysSoAndWaitsForASlot) {
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(cli({"acquire", "user:bob:" + std::to_string(i), "--token", "bob-secret"}).exit_code,
              0);
  RunResult r = cli({"acquire", "user:bob:9", "--token", "bob-secret", "--wait", "300ms"});
  EXPECT_EQ(r.exit_code, 1) << "no slot frees within the wait";
  EXPECT_EQ(r.err.rfind("holdfast locks: waiting up to 300ms: over the acquire rate limit, a slot "
                        "frees in ",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(r.out.rfind("not acquired: no grant within 300ms; user:bob:9 is free now", 0), 0u)
      << r.out;
}

}  // namespace
}  // namespace holdfast::testing
