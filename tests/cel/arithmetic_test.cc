/* Arithmetic: checked int and uint operations, IEEE doubles, and no mixed-kind arithmetic. */
#include <gtest/gtest.h>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_eval_error;
using testing::run;

TEST(Arithmetic, IntOperations) {
  EXPECT_EQ(run("40 + 2"), "42");
  EXPECT_EQ(run("40 - 42"), "-2");
  EXPECT_EQ(run("6 * -7"), "-42");
  EXPECT_EQ(run("-7 / 2"), "-3");  // truncates toward zero
  EXPECT_EQ(run("-7 % 3"), "-1");  // sign of the dividend
  EXPECT_EQ(run("7 % -3"), "1");
}

TEST(Arithmetic, IntOverflowIsAnError) {
  EXPECT_EQ(run("9223372036854775807 + 1"), "error: 1:21: int overflow");
  EXPECT_TRUE(is_eval_error(run("-9223372036854775808 - 1")));
  EXPECT_TRUE(is_eval_error(run("5000000000 * 5000000000")));
  EXPECT_TRUE(is_eval_error(run("-(-9223372036854775808)")));
  EXPECT_TRUE(is_eval_error(run("-9223372036854775808 / -1")));
  EXPECT_TRUE(is_eval_error(run("-9223372036854775808 % -1")));
}

TEST(Arithmetic, UintOperationsAndOverflow) {
  EXPECT_EQ(run("40u + 2u"), "42u");
  EXPECT_EQ(run("7u / 2u"), "3u");
  EXPECT_EQ(run("7u % 4u"), "3u");
  EXPECT_EQ(run("0u - 1u"), "error: 1:4: uint overflow");
  EXPECT_TRUE(is_eval_error(run("18446744073709551615u + 1u")));
  EXPECT_TRUE(is_eval_error(run("4294967296u * 4294967296u")));
}

TEST(Arithmetic, DivisionAndModuloByZeroAreErrors) {
  EXPECT_EQ(run("1 / 0"), "error: 1:3: division by zero");
  EXPECT_EQ(run("1 % 0"), "error: 1:3: modulus by zero");
  EXPECT_EQ(run("1u / 0u"), "error: 1:4: division by zero");
  EXPECT_EQ(run("1u % 0u"), "error: 1:4: modulus by zero");
}

TEST(Arithmetic, DoublesFollowIeee) {
  EXPECT_EQ(run("1.5 + 2.25"), "3.75");
  EXPECT_EQ(run("1.0 / 0.0"), "double(\"Infinity\")");
  EXPECT_EQ(run("-1.0 / 0.0"), "double(\"-Infinity\")");
  EXPECT_EQ(run("0.0 / 0.0"), "double(\"NaN\")");
  EXPECT_EQ(run("2.0 * 8.988466e+307"), "double(\"Infinity\")");
  EXPECT_EQ(run("-(0.0)"), "-0.0");
}

TEST(Arithmetic, DoubleModuloIsNotDefined) {
  EXPECT_EQ(run("5.5 % 2.0"), "error: 1:5: no matching overload for double % double");
}

TEST(Arithmetic, MixedKindsDoNotConvertImplicitly) {
  EXPECT_EQ(run("1 + 1u"), "error: 1:3: no matching overload for int + uint");
  EXPECT_TRUE(is_eval_error(run("1 + 1.0")));
  EXPECT_TRUE(is_eval_error(run("1u * 2.0")));
  EXPECT_TRUE(is_eval_error(run("'a' - 'b'")));
  EXPECT_EQ(run("int(1u) + 1"), "2");
}

TEST(Arithmetic, NegationIsDefinedForIntAndDoubleOnly) {
  EXPECT_EQ(run("-(5)"), "-5");
  EXPECT_EQ(run("-(1.5)"), "-1.5");
  EXPECT_EQ(run("-(5u)"), "error: 1:1: no matching overload for -uint");
  EXPECT_TRUE(is_eval_error(run("-'a'")));
  EXPECT_TRUE(is_eval_error(run("-true")));
}

TEST(Arithmetic, ConcatenationOfStringsBytesAndLists) {
  EXPECT_EQ(run("'ab' + 'cd' + '' + 'e'"), "\"abcde\"");
  EXPECT_EQ(run("b'ab' + b'\\x00'"), R"(b"ab\x00")");
  EXPECT_EQ(run("[1] + [] + [2, 'x']"), "[1, 2, \"x\"]");
  EXPECT_EQ(run("'a' + 1"), "error: 1:5: no matching overload for string + int");
  EXPECT_TRUE(is_eval_error(run("'a' + b'a'")));
  EXPECT_TRUE(is_eval_error(run("[1] + {}")));
  EXPECT_TRUE(is_eval_error(run("{} + {}")));
}

TEST(Arithmetic, ChainsMixingKindsFailAtTheFirstBadPair) {
  EXPECT_EQ(run("1 + 2 + 3 + 4"), "10");
  EXPECT_TRUE(is_eval_error(run("'a' + 'b' + 3")));
  EXPECT_TRUE(is_eval_error(run("9223372036854775806 + 1 + 1")));
}

}  // namespace
}  // namespace holdfast::cel
