/* The macros all, exists, exists_one, map (two and three arguments) and filter. */
#include <gtest/gtest.h>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_compile_error;
using testing::is_eval_error;
using testing::run;

TEST(Macros, AllOverListsAndMapKeys) {
  EXPECT_EQ(run("[1, 2, 3].all(x, x > 0)"), "true");
  EXPECT_EQ(run("[1, 2, 3].all(x, x > 1)"), "false");
  EXPECT_EQ(run("[].all(x, false)"), "true");
  EXPECT_EQ(run("{'a': 1, 'b': 2}.all(k, k.size() == 1)"), "true");
}

TEST(Macros, AllIsFalseIfAnyPredicateIsFalseDespiteErrors) {
  EXPECT_EQ(run("[0, 1, 2].all(x, 2 / x == 3)"), "false");
  EXPECT_EQ(run("[1, 'a', 3].all(x, x == 1)"), "false");
  EXPECT_EQ(run("[1, 2].all(x, 2 / (x - 1) > 0)"), "error: 1:17: division by zero");
}

TEST(Macros, ExistsIsTrueIfAnyPredicateIsTrueDespiteErrors) {
  EXPECT_EQ(run("[1, 2, 3].exists(x, x == 2)"), "true");
  EXPECT_EQ(run("[1, 2, 3].exists(x, x > 5)"), "false");
  EXPECT_EQ(run("[0, 1].exists(x, 1 / x == 1)"), "true");
  EXPECT_TRUE(is_eval_error(run("[0, 2].exists(x, 1 / x == 1)")));
  EXPECT_EQ(run("{'k1': 1, 'k2': 2}.exists(k, k == 'k2')"), "true");
}

TEST(Macros, ExistsOneCountsExactlyOne) {
  EXPECT_EQ(run("[1, 2, 3].exists_one(x, x == 2)"), "true");
  EXPECT_EQ(run("[1, 2, 2].exists_one(x, x == 2)"), "false");
  EXPECT_EQ(run("[].exists_one(x, true)"), "false");
}

TEST(Macros, ExistsOneFailsOnAnyError) {
  EXPECT_TRUE(is_eval_error(run("[2, 0].exists_one(x, 2 / x == 1)")));
}

TEST(Macros, PredicatesMustBeBools) {
  EXPECT_EQ(run("[1].all(x, x)"), "error: 1:12: all(): the predicate returned 'int', not a bool");
  EXPECT_TRUE(is_eval_error(run("[1].exists_one(x, 'a')")));
  EXPECT_TRUE(is_eval_error(run("[1].filter(x, 1)")));
}

TEST(Macros, MapTransformsEachElement) {
  EXPECT_EQ(run("[1, 2, 3].map(x, x * x)"), "[1, 4, 9]");
  EXPECT_EQ(run("[].map(x, x)"), "[]");
  EXPECT_EQ(run("{'a': 1}.map(k, k + '!')"), "[\"a!\"]");
  EXPECT_EQ(run("[2, 0].map(x, 4 / x)"), "error: 1:17: division by zero");
}

TEST(Macros, MapWithThreeArgumentsFiltersThenTransforms) {
  EXPECT_EQ(run("[1, 2, 3, 4].map(x, x % 2 == 0, x * 10)"), "[20, 40]");
  EXPECT_EQ(run("[1, 2].map(x, false, 1 / 0)"), "[]");
}

TEST(Macros, FilterKeepsMatchingElements) {
  EXPECT_EQ(run("[1, 2, 3, 4].filter(x, x % 2 == 1)"), "[1, 3]");
  EXPECT_EQ(run("{'a': 1, 'bb': 2}.filter(k, k.size() > 1)"), "[\"bb\"]");
  EXPECT_TRUE(is_eval_error(run("[1, 0].filter(x, 1 / x > 0)")));
}

TEST(Macros, NestedMacrosShadowTheOuterVariable) {
  EXPECT_EQ(run("[1, 2].all(x, [10, 20].exists(x, x == 20))"), "true");
  EXPECT_EQ(run("[1, 2].map(x, [10].map(y, x + y))"), "[[11], [12]]");
  EXPECT_EQ(run("[[1, 2], [3]].map(x, x.map(x, x * 2))"), "[[2, 4], [6]]");
}

TEST(Macros, IterationVariableShadowsAnActivationVariable) {
  Activation activation;
  activation.bind("x", Value::from_string("outer"));
  EXPECT_EQ(run("[1].map(x, x) + [x]", activation), "[1, \"outer\"]");
}

TEST(Macros, RangeMustBeAListOrMap) {
  EXPECT_EQ(run("'abc'.all(c, true)"), "error: 1:7: all() needs a list or a map, got 'string'");
}

TEST(Macros, MalformedMacroCallsAreCompileErrors) {
  EXPECT_TRUE(is_compile_error(run("[1].all(x)")));
  EXPECT_TRUE(is_compile_error(run("[1].all(1, true)")));
  EXPECT_TRUE(is_compile_error(run("[1].exists(x.y, true)")));
  EXPECT_TRUE(is_compile_error(run("[1].map(x, x, x, x)")));
  EXPECT_TRUE(is_compile_error(run("[1].filter(x, true, x)")));
}

TEST(Macros, GlobalCallsWithMacroNamesAreOrdinaryFunctions) {
  EXPECT_EQ(run("all([1], true)"), "error: 1:1: unknown function 'all'");
}

}  // namespace
}  // namespace holdfast::cel
