/* Equality, ordering and `in`, including CEL's heterogeneous numeric comparisons. */
#include <gtest/gtest.h>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_eval_error;
using testing::run;

TEST(Comparison, NumbersCompareAcrossKinds) {
  EXPECT_EQ(run("1 == 1u"), "true");
  EXPECT_EQ(run("1 == 1.0"), "true");
  EXPECT_EQ(run("1u == 1.0"), "true");
  EXPECT_EQ(run("2 != 2.5"), "true");
  EXPECT_EQ(run("-1 < 0u"), "true");
  EXPECT_EQ(run("1u > -1"), "true");
  EXPECT_EQ(run("1 < 1.5"), "true");
  EXPECT_EQ(run("2.0 >= 2u"), "true");
  EXPECT_EQ(run("18446744073709551615u > 9223372036854775807"), "true");
}

TEST(Comparison, IntegersCompareWithDoublesAfterConversionToDouble) {
  // As the conformance suite specifies: 2^63-1 becomes the double 2^63.
  EXPECT_EQ(run("9223372036854775807 >= 9223372036854775808.0"), "true");
  EXPECT_EQ(run("9223372036854775807 < 9223372036854775808.0"), "false");
}

TEST(Comparison, NanIsUnequalAndUnordered) {
  EXPECT_EQ(run("0.0/0.0 == 0.0/0.0"), "false");
  EXPECT_EQ(run("0.0/0.0 != 0.0/0.0"), "true");
  EXPECT_EQ(run("0.0/0.0 < 1.0"), "false");
  EXPECT_EQ(run("0.0/0.0 >= 1.0"), "false");
  EXPECT_EQ(run("1 == 0.0/0.0"), "false");
}

TEST(Comparison, ValuesOfDifferentKindsAreUnequalNotErrors) {
  EXPECT_EQ(run("1 == '1'"), "false");
  EXPECT_EQ(run("null == false"), "false");
  EXPECT_EQ(run("'a' != b'a'"), "true");
  EXPECT_EQ(run("[] == {}"), "false");
  EXPECT_EQ(run("null == null"), "true");
}

TEST(Comparison, ListsCompareElementwise) {
  EXPECT_EQ(run("[1, 2.0, 3u] == [1u, 2, 3.0]"), "true");
  EXPECT_EQ(run("[1, 2] == [2, 1]"), "false");
  EXPECT_EQ(run("[1] == [1, 1]"), "false");
  EXPECT_EQ(run("[[]] == [[]]"), "true");
}

TEST(Comparison, MapsCompareIgnoringOrder) {
  EXPECT_EQ(run("{'a': 1, 'b': 2} == {'b': 2, 'a': 1}"), "true");
  EXPECT_EQ(run("{1: 1.0, 2u: 'x'} == {1u: 1, 2: 'x'}"), "true");
  EXPECT_EQ(run("{'a': 1} == {'a': 1, 'b': 2}"), "false");
  EXPECT_EQ(run("{'a': 1} == {'b': 1}"), "false");
}

TEST(Comparison, StringsOrderByCodePoint) {
  EXPECT_EQ(run("'a' < 'b'"), "true");
  EXPECT_EQ(run("'Z' < 'a'"), "true");
  EXPECT_EQ(run("'abc' < 'abcd'"), "true");
  EXPECT_EQ(run("'a' < '\\u00e1'"), "true");
  EXPECT_EQ(run("'\\uffff' < '\\U00010000'"), "true");
}

TEST(Comparison, BytesOrderByUnsignedOctet) {
  EXPECT_EQ(run("b'\\x01' < b'\\xff'"), "true");
  EXPECT_EQ(run("b'\\x00\\x01' > b'\\x01'"), "false");
  EXPECT_EQ(run("b'' < b'\\x00'"), "true");
}

TEST(Comparison, BoolsOrderFalseFirst) {
  EXPECT_EQ(run("false < true"), "true");
  EXPECT_EQ(run("true <= true"), "true");
}

TEST(Comparison, OrderingUnorderableKindsIsAnError) {
  EXPECT_EQ(run("[1] < [2]"), "error: 1:5: no matching overload for list < list");
  EXPECT_TRUE(is_eval_error(run("null < null")));
  EXPECT_TRUE(is_eval_error(run("{} > {}")));
  EXPECT_TRUE(is_eval_error(run("'a' < 1")));
  EXPECT_TRUE(is_eval_error(run("true < 1")));
}

TEST(Comparison, InOnLists) {
  EXPECT_EQ(run("2 in [1, 2, 3]"), "true");
  EXPECT_EQ(run("4 in [1, 2, 3]"), "false");
  EXPECT_EQ(run("2.0 in [1, 2u]"), "true");
  EXPECT_EQ(run("'a' in [1, 'a']"), "true");
  EXPECT_EQ(run("1 in []"), "false");
}

TEST(Comparison, InOnMapsTestsKeys) {
  EXPECT_EQ(run("'a' in {'a': 1}"), "true");
  EXPECT_EQ(run("1 in {'a': 1}"), "false");
  EXPECT_EQ(run("3.0 in {3u: 'x'}"), "true");
  EXPECT_EQ(run("3.5 in {3: 'x'}"), "false");
  EXPECT_EQ(run("[1] in {'a': 1}"), "false");
}

TEST(Comparison, InOnOtherKindsIsAnError) {
  EXPECT_EQ(run("'a' in 'abc'"), "error: 1:5: no matching overload for string in string");
}

}  // namespace
}  // namespace holdfast::cel
