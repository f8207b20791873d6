// `holdfast rules push|get|delete|eval` end to end against a server with credentials.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>

#include "support/auth_config.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

class RulesCli : public ::testing::Test {
 protected:
  RunResult rules(std::vector<std::string> args, const std::string& token) {
    std::vector<std::string> argv = {HOLDFAST_BIN, "rules"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--server", server.url(), "--token", token});
    return run(argv);
  }
  std::string write_policy(const std::string& name, const std::string& acquire) {
    std::string path = dir.path() + "/" + name + ".toml";
    std::ofstream(path) << "[ruleSet]\nname = \"" << name
                        << "\"\nresourceType = \"lock\"\n\n[rules.lock]\nacquire = \"" << acquire
                        << "\"\n";
    return path;
  }

  AuthConfig config{600};
  ServerProcess server{config.flags()};
  TempDir dir;
};

TEST_F(RulesCli, PushGetDeleteAsAdmin) {
  auto push = rules(
      {"push", write_policy("lock-policy", "record.key.startsWith('user:' + user.userId + ':')")},
      "root-secret");
  ASSERT_EQ(push.exit_code, 0) << push.err;
  EXPECT_EQ(push.out, "installed rule set lock-policy\n");
  auto again = rules({"push", write_policy("lock-policy", "true"), "--json"}, "root-secret");
  EXPECT_EQ(again.out, "{\"name\":\"lock-policy\",\"replaced\":true}\n");
  auto get = rules({"get", "--json"}, "root-secret");
  auto obj = json::parse(get.out).as_object();
  EXPECT_EQ(obj["name"].as_string(), "lock-policy");
  EXPECT_NE(std::string(obj["toml"].as_string()).find("acquire = \"true\""), std::string::npos);
  auto conflict = rules({"push", write_policy("other", "true")}, "root-secret");
  EXPECT_EQ(conflict.exit_code, 2);
  EXPECT_NE(conflict.err.find("RULESET_CONFLICT"), std::string::npos) << conflict.err;
  EXPECT_EQ(rules({"delete", "nope"}, "root-secret").exit_code, 2);
  auto del = rules({"delete", "lock-policy"}, "root-secret");
  EXPECT_EQ(del.exit_code, 0);
  EXPECT_EQ(rules({"get", "--json"}, "root-secret").out, "null\n");
}

TEST_F(RulesCli, MembersAreRefusedWithExitThree) {
  auto r = rules({"push", write_policy("p", "true")}, "alice-secret");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("FORBIDDEN"), std::string::npos) << r.err;
}

TEST_F(RulesCli, ARuleThatDoesNotCompileIsRefusedNamingIt) {
  auto r = rules({"push", write_policy("p", "record.key.startsWith(")}, "root-secret");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("rules.lock.acquire: 1:"), std::string::npos) << r.err;
}

TEST(RulesEval, PrintsTheValueAsTheServerWouldSeeIt) {
  auto ok = run({HOLDFAST_BIN, "rules", "eval", "record.key.startsWith(\"user:\" + user.userId)",
                 "--user", "alice", "--role", "member", "--key", "user:alice:1"});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "true\n");
  auto groups =
      run({HOLDFAST_BIN, "rules", "eval", "isMemberOf('ops', 'core') && user.role == 'admin'",
           "--group", "ops/core", "--role", "admin"});
  EXPECT_EQ(groups.out, "true\n");
  auto error = run({HOLDFAST_BIN, "rules", "eval", "1 / 0"});
  EXPECT_EQ(error.exit_code, 1);
  EXPECT_NE(error.err.find("division by zero"), std::string::npos);
  auto syntax = run({HOLDFAST_BIN, "rules", "eval", "1 +"});
  EXPECT_EQ(syntax.exit_code, 2);
  auto json_mode = run({HOLDFAST_BIN, "rules", "eval", "--json"},
                       R"({"expr": "x + 1u", "bindings": {"x": {"type": "uint", "value": 41}}})");
  EXPECT_EQ(json::parse(json_mode.out), json::parse(R"({"type": "uint", "value": 42})"));
}

TEST(RulesEval, RequestIdsAreThereOnlyWhenGiven) {
  auto from = run({HOLDFAST_BIN, "rules", "eval", "request.fromId == user.userId", "--user", "bob",
                   "--from", "bob", "--to", "carol"});
  EXPECT_EQ(from.out, "true\n") << from.err;
  auto absent = run({HOLDFAST_BIN, "rules", "eval", "has(request.holderId)", "--to", "carol"});
  EXPECT_EQ(absent.out, "false\n") << absent.err;
  auto missing = run({HOLDFAST_BIN, "rules", "eval", "request.holderId == 'alice'"});
  EXPECT_EQ(missing.exit_code, 1) << "reading an absent id is an error, which denies";
}

TEST(RulesEval, TheOperationAndModeAreThereOnlyWhenGiven) {
  auto reader = run({HOLDFAST_BIN, "rules", "eval",
                     "request.operation == 'tryAcquire' && request.mode == 'shared'", "--operation",
                     "tryAcquire", "--mode", "shared"});
  EXPECT_EQ(reader.out, "true\n") << reader.err;
  auto permits = run({HOLDFAST_BIN, "rules", "eval", "request.take * 4 <= request.permits",
                      "--mode", "semaphore", "--permits", "8", "--take", "2"});
  EXPECT_EQ(permits.out, "true\n") << "permits and take are ints: " << permits.err;
  auto absent = run({HOLDFAST_BIN, "rules", "eval", "has(request.mode) || has(request.take)"});
  EXPECT_EQ(absent.out, "false\n") << absent.err;
}

}  // namespace
}  // namespace holdfast::testing
