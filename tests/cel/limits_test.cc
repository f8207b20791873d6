/* Limits that protect the server from hostile or runaway rules (limits.h). */
#include <gtest/gtest.h>

#include <string>

#include "cel/limits.h"
#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_compile_error;
using testing::run;

TEST(Limits, DeepParenthesesAreACompileErrorNotACrash) {
  const std::string deep = std::string(30000, '(') + "1" + std::string(30000, ')');
  EXPECT_EQ(run(deep).substr(0, 60),
            "compile error: 1:129: expression nests too deeply (the limit");
}

TEST(Limits, DeepOperatorNestingIsACompileError) {
  EXPECT_TRUE(is_compile_error(run(std::string(50000, '-') + "1")));
  EXPECT_TRUE(is_compile_error(run(std::string(50000, '!') + "true")));
  EXPECT_TRUE(is_compile_error(run(std::string(50000, '[') + std::string(50000, ']'))));
  std::string chain = "1";
  for (int i = 0; i < 300; ++i) chain += " * 1";
  EXPECT_TRUE(is_compile_error(run(chain)));
  std::string select = "m";
  for (int i = 0; i < 300; ++i) select += ".f";
  EXPECT_TRUE(is_compile_error(run(select)));
}

TEST(Limits, NestingJustUnderTheLimitCompiles) {
  const int depth = kMaxNestingDepth - 1;
  EXPECT_EQ(run(std::string(depth, '[') + std::string(depth, ']')).substr(0, 2), "[[");
}

TEST(Limits, OversizedSourceIsRejected) {
  const std::string huge = "'" + std::string(kMaxSourceBytes, 'a') + "'";
  EXPECT_EQ(run(huge).substr(0, 40), "compile error: expression is 65538 bytes");
}

TEST(Limits, ExponentialMacrosHitTheStepLimit) {
  const std::string ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
  std::string expr = "true";
  for (int i = 0; i < 7; ++i) expr = ten + ".all(x" + std::to_string(i) + ", " + expr + ")";
  EXPECT_EQ(run(expr).substr(0, 51), "error: 1:32: evaluation exceeded its step limit");
}

TEST(Limits, BudgetExhaustionIsNotAbsorbedByOr) {
  // Once the budget is spent nothing more is evaluated, so `|| true` cannot rescue it.
  const auto program = compile("[1, 2, 3].all(x, true) || true");
  ASSERT_TRUE(program.ok());
  EvalLimits tiny;
  tiny.max_steps = 5;
  const auto result = program->evaluate(Activation(), tiny);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("step limit"), std::string::npos) << result.error().message;
  EXPECT_TRUE(program->evaluate(Activation()).ok());
  const auto memory = compile("'abc' + 'def' == '' || true");
  ASSERT_TRUE(memory.ok());
  EvalLimits small;
  small.max_bytes = 2;
  EXPECT_FALSE(memory->evaluate(Activation(), small).ok());
}

TEST(Limits, RepeatedDoublingHitsTheMemoryLimit) {
  std::string expr = "['ab']";
  for (int i = 0; i < 30; ++i) expr += ".map(s, s + s)";
  const std::string outcome = run(expr);
  EXPECT_NE(outcome.find("evaluation exceeded its memory limit"), std::string::npos)
      << outcome.substr(0, 80);
}

TEST(Limits, ContainsIsChargedByTheProductOfLengths) {
  // Half-megabyte strings: a naive substring search would take seconds.
  std::string expr = "['a']";
  for (int i = 0; i < 19; ++i) expr += ".map(s, s + s)";
  expr += ".map(s, (s + s + 'b').contains(s + 'b'))";
  const std::string outcome = run(expr);
  EXPECT_NE(outcome.find("evaluation exceeded its step limit"), std::string::npos)
      << outcome.substr(0, 80);
}

TEST(Limits, ComparingLargeValuesIsChargedByTheirWeight) {
  std::vector<Value> big(10000, Value::from_int(1));
  std::vector<Value> range(10000, Value::from_int(0));
  Activation activation;
  activation.bind("big", Value::from_list(big));
  activation.bind("r", Value::from_list(range));
  // 10^4 iterations, each comparing 10^4 elements.
  EXPECT_NE(run("r.all(i, big == big)", activation).find("step limit"), std::string::npos);
  EXPECT_NE(run("r.all(i, 2 in big || true)", activation).find("step limit"), std::string::npos);
  // The same loop over cheap comparisons is well within budget.
  EXPECT_EQ(run("r.all(i, i == 0)", activation), "true");
  EXPECT_EQ(run("r.size() == big.size() && big == big", activation), "true");
}

TEST(Limits, MemoryLimitIsConfigurable) {
  const auto program = compile("'abc' + 'def'");
  ASSERT_TRUE(program.ok());
  EvalLimits small;
  small.max_bytes = 5;
  EXPECT_FALSE(program->evaluate(Activation(), small).ok());
  small.max_bytes = 6;
  EXPECT_TRUE(program->evaluate(Activation(), small).ok());
}

}  // namespace
}  // namespace holdfast::cel
