/* Logical operators and the conditional: CEL's commutative error absorption. */
#include <gtest/gtest.h>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_eval_error;
using testing::run;

TEST(Logic, TruthTables) {
  EXPECT_EQ(run("true && true"), "true");
  EXPECT_EQ(run("true && false"), "false");
  EXPECT_EQ(run("false || false"), "false");
  EXPECT_EQ(run("false || true"), "true");
  EXPECT_EQ(run("!true"), "false");
}

TEST(Logic, AndAbsorbsErrorOnEitherSide) {
  EXPECT_EQ(run("false && 1 / 0 == 1"), "false");
  EXPECT_EQ(run("1 / 0 == 1 && false"), "false");
  EXPECT_EQ(run("missing && false"), "false");
}

TEST(Logic, OrAbsorbsErrorOnEitherSide) {
  EXPECT_EQ(run("true || 1 / 0 == 1"), "true");
  EXPECT_EQ(run("1 / 0 == 1 || true"), "true");
  EXPECT_EQ(run("undefined_fn(1) || true"), "true");
}

TEST(Logic, ErrorSurvivesWhenTheOtherSideDoesNotDecide) {
  EXPECT_EQ(run("true && 1 / 0 == 1"), "error: 1:11: division by zero");
  EXPECT_EQ(run("1 / 0 == 1 || false"), "error: 1:3: division by zero");
}

TEST(Logic, FirstErrorIsReportedWhenSeveralOperandsFail) {
  EXPECT_EQ(run("1 / 0 == 1 || x || false"), "error: 1:3: division by zero");
}

TEST(Logic, NonBoolOperandsAreAbsorbedLikeErrors) {
  EXPECT_EQ(run("'horses' && false"), "false");
  EXPECT_EQ(run("true || 32"), "true");
  EXPECT_EQ(run("true && 32"),
            "error: 1:9: no matching overload: && needs bool operands, got 'int'");
  EXPECT_TRUE(is_eval_error(run("'a' || 'b'")));
}

TEST(Logic, LongChainsAbsorbAnywhere) {
  EXPECT_EQ(run("x || y || 1/0 == 0 || true || z"), "true");
  EXPECT_EQ(run("x && y && false && z"), "false");
  EXPECT_EQ(run("true && true && true"), "true");
}

TEST(Logic, NotRequiresABool) {
  EXPECT_EQ(run("!0"), "error: 1:1: no matching overload for !int");
  EXPECT_EQ(run("!!false"), "false");
}

TEST(Logic, ConditionalEvaluatesOnlyTheChosenBranch) {
  EXPECT_EQ(run("true ? 1 : 1 / 0"), "1");
  EXPECT_EQ(run("false ? 1 / 0 : 'b'"), "\"b\"");
  EXPECT_EQ(run("true ? 'cows' : 17"), "\"cows\"");
}

TEST(Logic, ConditionalRequiresABoolCondition) {
  EXPECT_TRUE(is_eval_error(run("'cows' ? 1 : 2")));
  EXPECT_EQ(run("1 / 0 > 1 ? 1 : 2"), "error: 1:3: division by zero");
}

}  // namespace
}  // namespace holdfast::cel
