/* Lists and maps: literals, indexing, field selection, has(), size(), key rules. */
#include <gtest/gtest.h>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_eval_error;
using testing::run;

TEST(Collections, ListIndexing) {
  EXPECT_EQ(run("[7, 8, 9][0]"), "7");
  EXPECT_EQ(run("[7, 8, 9][2u]"), "9");
  EXPECT_EQ(run("[7, 8, 9][1.0]"), "8");
}

TEST(Collections, ListIndexOutOfRangeIsAnError) {
  EXPECT_EQ(run("[1, 2, 3][3]"), "error: 1:10: index 3 out of range for a list of size 3");
  EXPECT_TRUE(is_eval_error(run("[1][-1]")));
  EXPECT_TRUE(is_eval_error(run("[1][0.5]")));
  EXPECT_TRUE(is_eval_error(run("[1]['0']")));
}

TEST(Collections, MapIndexingWithEveryKeyKind) {
  EXPECT_EQ(run("{'k': 1}['k']"), "1");
  EXPECT_EQ(run("{1: 'a'}[1]"), "\"a\"");
  EXPECT_EQ(run("{1u: 'a'}[1u]"), "\"a\"");
  EXPECT_EQ(run("{true: 'a'}[true]"), "\"a\"");
}

TEST(Collections, NumericMapKeysMatchAcrossKinds) {
  EXPECT_EQ(run("{1u: 'a', 2: 'b'}[1]"), "\"a\"");
  EXPECT_EQ(run("{1u: 'a', 2: 'b'}[2u]"), "\"b\"");
  EXPECT_EQ(run("{1u: 'a', 2: 'b'}[2.0]"), "\"b\"");
  EXPECT_EQ(run("{-1: 'neg'}[-1.0]"), "\"neg\"");
}

TEST(Collections, MissingMapKeyIsAnError) {
  EXPECT_EQ(run("{'a': 1}['b']"), "error: 1:9: no such key: \"b\"");
  EXPECT_TRUE(is_eval_error(run("{1: 'a'}[1.5]")));
  EXPECT_EQ(run("{1: 'a'}[b'x']"), "error: 1:9: unsupported map key type 'bytes'");
}

TEST(Collections, MapKeysMustBeIntUintBoolOrString) {
  EXPECT_EQ(run("{1.5: 'a'}"), "error: 1:1: unsupported map key type 'double'");
  EXPECT_TRUE(is_eval_error(run("{null: 1}")));
  EXPECT_TRUE(is_eval_error(run("{[1]: 1}")));
  EXPECT_TRUE(is_eval_error(run("{b'k': 1}")));
}

TEST(Collections, RepeatedMapKeysAreAnError) {
  EXPECT_EQ(run("{'a': 1, 'a': 2}"), "error: 1:1: repeated map key");
  EXPECT_TRUE(is_eval_error(run("{0: 1, 0u: 2}")));
  EXPECT_EQ(run("{true: 1, 1: 2}"), "{true: 1, 1: 2}");  // bool and int keys never collide
}

TEST(Collections, FieldSelectionOnMaps) {
  EXPECT_EQ(run("{'name': 'x'}.name"), "\"x\"");
  EXPECT_EQ(run("{'a': {'b': 2}}.a.b"), "2");
  EXPECT_EQ(run("{'a': 1}.b"), "error: 1:10: no such key: 'b'");
}

TEST(Collections, FieldSelectionOnOtherKindsIsAnError) {
  Activation activation;
  activation.bind("a", Value::from_int(15));
  EXPECT_EQ(run("a.pancakes", activation),
            "error: 1:3: type 'int' does not support field selection");
  EXPECT_TRUE(is_eval_error(run("'abc'.size")));
}

TEST(Collections, HasTestsMapKeyPresence) {
  EXPECT_EQ(run("has({'a': 1}.a)"), "true");
  EXPECT_EQ(run("has({'a': 1}.b)"), "false");
  EXPECT_EQ(run("has({}.a)"), "false");
  EXPECT_EQ(run("has({'a': {'b': 1}}.a.b)"), "true");
}

TEST(Collections, HasOnNonMapIsAnErrorAndNeedsASelection) {
  EXPECT_TRUE(is_eval_error(run("has([1].a)")));
  EXPECT_EQ(run("has(1)"), "compile error: 1:1: has() takes one field selection, e.g. has(m.f)");
  EXPECT_TRUE(testing::is_compile_error(run("has({}.a, 1)")));
}

TEST(Collections, SizeOfEveryKindAsFunctionAndMethod) {
  EXPECT_EQ(run("size([1, 2, 3])"), "3");
  EXPECT_EQ(run("[1, 2].size()"), "2");
  EXPECT_EQ(run("size({'a': 1})"), "1");
  EXPECT_EQ(run("{}.size()"), "0");
  EXPECT_EQ(run("size(b'\\xff\\x00')"), "2");
  EXPECT_EQ(run("size('πέντε')"), "5");
  EXPECT_EQ(run("'🐱'.size()"), "1");
  EXPECT_EQ(run("size(1)"), "error: 1:1: no matching overload for size(int)");
  EXPECT_TRUE(testing::is_compile_error(run("size()")));
  EXPECT_TRUE(testing::is_compile_error(run("'a'.size(1)")));
}

TEST(Collections, LargeMapsUseTheSortedIndex) {
  std::string literal = "{";
  for (int i = 0; i < 100; ++i)
    literal += (i ? ", " : "") + std::to_string(i) + ": 'v" + std::to_string(i) + "'";
  literal += "}";
  EXPECT_EQ(run(literal + "[73]"), "\"v73\"");
  EXPECT_EQ(run(literal + "[73u]"), "\"v73\"");
  EXPECT_EQ(run(literal + "[73.0]"), "\"v73\"");
  EXPECT_EQ(run("100 in " + literal), "false");
  EXPECT_TRUE(
      is_eval_error(run("{'dup': 0, " + literal.substr(1, literal.size() - 2) + ", 'dup': 1}")));
}

}  // namespace
}  // namespace holdfast::cel
