/* The engine as the server uses it: compile once, bind user/record and isMemberOf, evaluate
 * many times. Covers the seed rules of the specification and evaluation errors.
 */
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::string_map;

constexpr const char* kOwnKeysRule = "record.key.startsWith('user:' + user.userId + ':')";

Activation rule_activation(std::string_view user_id, std::string_view key) {
  Activation activation;
  activation.bind("user", string_map({{"userId", user_id}, {"role", "member"}}));
  activation.bind("record", string_map({{"key", key}}));
  // Memberships of the test directory: ("ops", "core") only.
  activation.bind_function("isMemberOf", [](std::span<const Value> args) -> Result<Value> {
    if (args.size() != 2 || !args[0].is(ValueKind::kString) || !args[1].is(ValueKind::kString)) {
      return invalid_argument("isMemberOf(type, id) takes two strings");
    }
    return Value::from_bool(args[0].as_string() == "ops" && args[1].as_string() == "core");
  });
  return activation;
}

bool allowed(const Program& program, const Activation& activation) {
  auto result = program.evaluate(activation);
  return result.ok() && result->is(ValueKind::kBool) && result->as_bool();
}

TEST(Rules, OwnKeysRuleAllowsTheUsersOwnPrefix) {
  const auto program = compile(kOwnKeysRule);
  ASSERT_TRUE(program.ok()) << program.error().message;
  EXPECT_TRUE(allowed(*program, rule_activation("alice", "user:alice:lock")));
  EXPECT_FALSE(allowed(*program, rule_activation("alice", "user:bob:lock")));
  EXPECT_FALSE(allowed(*program, rule_activation("alice", "user:alice")));  // no trailing ':'
  EXPECT_FALSE(allowed(*program, rule_activation("ali", "user:alice:x")));
}

TEST(Rules, OneProgramServesManyActivations) {
  const auto program = compile(kOwnKeysRule);
  ASSERT_TRUE(program.ok());
  Activation activation = rule_activation("u1", "user:u1:a");
  EXPECT_TRUE(allowed(*program, activation));
  activation.bind("record", string_map({{"key", "user:u2:a"}}));  // rebinding replaces
  EXPECT_FALSE(allowed(*program, activation));
  activation.bind("user", string_map({{"userId", "u2"}}));
  EXPECT_TRUE(allowed(*program, activation));
}

TEST(Rules, IsMemberOfCallsTheHostFunction) {
  const auto program = compile("isMemberOf('ops', 'core')");
  ASSERT_TRUE(program.ok());
  EXPECT_TRUE(allowed(*program, rule_activation("alice", "k")));
  const auto other = compile("isMemberOf('ops', 'edge') || record.key == 'public'");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(allowed(*other, rule_activation("alice", "k")));
  EXPECT_TRUE(allowed(*other, rule_activation("alice", "public")));
}

TEST(Rules, HostFunctionErrorsCarryThePosition) {
  EXPECT_EQ(testing::run("1 == 1 && isMemberOf(1)", rule_activation("a", "k")),
            "error: 1:11: isMemberOf(): isMemberOf(type, id) takes two strings");
}

TEST(Rules, HostFunctionReceivesEvaluatedArguments) {
  Activation activation;
  std::vector<std::string> seen;
  activation.bind_function("record_args", [&](std::span<const Value> args) -> Result<Value> {
    for (const Value& arg : args) seen.push_back(format_value(arg));
    return Value::from_int(static_cast<std::int64_t>(args.size()));
  });
  EXPECT_EQ(testing::run("record_args(1 + 1, 'a' + 'b', [1], 2u, 3.5, null)", activation), "6");
  EXPECT_EQ(seen, (std::vector<std::string>{"2", "\"ab\"", "[1]", "2u", "3.5", "null"}));
}

TEST(Rules, UnknownVariablesAndFunctionsAreEvaluationErrors) {
  EXPECT_EQ(testing::run("recrod.key == 'x'"), "error: 1:1: undeclared reference to 'recrod'");
  EXPECT_EQ(testing::run("isAdmin()"), "error: 1:1: unknown function 'isAdmin'");
  EXPECT_EQ(testing::run("isAdmin() || true"), "true");
}

TEST(Rules, LiteralsWinOverBindingsNamedLikeKeywords) {
  Activation activation;
  activation.bind("true", Value::from_bool(false));
  EXPECT_EQ(testing::run("true", activation), "true");
}

TEST(Rules, EvaluationErrorsCarryOffsetLineAndColumnDetails) {
  const auto program = compile("1 +\n  2 / 0");
  ASSERT_TRUE(program.ok());
  const auto result = program->evaluate(Activation());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(result.error().message, "2:5: division by zero");
  EXPECT_EQ(std::get<std::int64_t>(result.error().details[0].second), 8);
}

TEST(Rules, ProgramKeepsItsSourceAndCopiesShareIt) {
  const auto program = compile(kOwnKeysRule);
  ASSERT_TRUE(program.ok());
  const Program copy = *program;
  EXPECT_EQ(copy.source(), kOwnKeysRule);
  EXPECT_TRUE(allowed(copy, rule_activation("z", "user:z:1")));
}

TEST(Rules, ConcurrentEvaluationOfOneProgram) {
  const auto program =
      compile("record.key.matches('^user:' + user.userId + ':') && isMemberOf('ops', 'core')");
  ASSERT_TRUE(program.ok());
  std::vector<std::thread> threads;
  std::vector<int> allowed_counts(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const std::string id = "u" + std::to_string(i % 40);  // 40 patterns overflow the cache
        const std::string key = (i % 2 ? "user:" + id : "user:x") + ":k";
        if (allowed(*program, rule_activation(id, key))) ++allowed_counts[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int count : allowed_counts) EXPECT_EQ(count, 250);
}

}  // namespace
}  // namespace holdfast::cel
