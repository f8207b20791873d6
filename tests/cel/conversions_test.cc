/* Conversion functions and their range errors. */
#include <gtest/gtest.h>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_eval_error;
using testing::run;

TEST(Conversions, IntFromEachKind) {
  EXPECT_EQ(run("int(42u)"), "42");
  EXPECT_EQ(run("int(-7.9)"), "-7");
  EXPECT_EQ(run("int(11.5)"), "11");
  EXPECT_EQ(run("int('-987')"), "-987");
  EXPECT_EQ(run("int(9223372036854775807u)"), "9223372036854775807");
}

TEST(Conversions, IntRangeErrors) {
  EXPECT_EQ(run("int(18446744073709551615u)"),
            "error: 1:1: range error: value does not fit in int");
  EXPECT_TRUE(is_eval_error(run("int(9223372036854775807.0)")));   // that double is 2^63
  EXPECT_TRUE(is_eval_error(run("int(-9223372036854775808.0)")));  // the bounds are excluded
  EXPECT_TRUE(is_eval_error(run("int(1e99)")));
  EXPECT_TRUE(is_eval_error(run("int(0.0/0.0)")));
  EXPECT_TRUE(is_eval_error(run("int('12a')")));
  EXPECT_TRUE(is_eval_error(run("int('')")));
  EXPECT_TRUE(is_eval_error(run("int('9223372036854775808')")));
}

TEST(Conversions, UintFromEachKindAndRangeErrors) {
  EXPECT_EQ(run("uint(42)"), "42u");
  EXPECT_EQ(run("uint(25.9)"), "25u");
  EXPECT_EQ(run("uint('300')"), "300u");
  EXPECT_EQ(run("uint(-1)"), "error: 1:1: range error: value does not fit in uint");
  EXPECT_TRUE(is_eval_error(run("uint(-0.5)")));
  EXPECT_TRUE(is_eval_error(run("uint(6.022e23)")));
  EXPECT_TRUE(is_eval_error(run("uint('-1')")));
}

TEST(Conversions, DoubleFromEachKind) {
  EXPECT_EQ(run("double(3)"), "3.0");
  EXPECT_EQ(run("double(18446744073709551615u)"), "18446744073709551616.0");
  EXPECT_EQ(run("double('-84.32e7')"), "-843200000.0");
  EXPECT_EQ(run("double('1e400')"), "double(\"Infinity\")");
  EXPECT_EQ(run("double('NaN')"), "double(\"NaN\")");
  EXPECT_EQ(run("double('-Infinity')"), "double(\"-Infinity\")");
  EXPECT_TRUE(is_eval_error(run("double('one')")));
  EXPECT_TRUE(is_eval_error(run("double(true)")));
}

TEST(Conversions, StringFromEachKind) {
  EXPECT_EQ(run("string(-456)"), "\"-456\"");
  EXPECT_EQ(run("string(9876u)"), "\"9876\"");
  EXPECT_EQ(run("string(true)"), "\"true\"");
  EXPECT_EQ(run("string(b'abc')"), "\"abc\"");
  EXPECT_EQ(run("string('x')"), "\"x\"");
  EXPECT_TRUE(is_eval_error(run("string(null)")));
  EXPECT_TRUE(is_eval_error(run("string([1])")));
}

TEST(Conversions, StringOfDoubleIsShortestRoundTrip) {
  EXPECT_EQ(run("string(123.456)"), "\"123.456\"");
  EXPECT_EQ(run("string(-4.5e-3)"), "\"-0.0045\"");
  EXPECT_EQ(run("string(100000.0)"), "\"100000\"");
  EXPECT_EQ(run("string(1e6)"), "\"1e+06\"");
  EXPECT_EQ(run("string(1.5e-5)"), "\"1.5e-05\"");
  EXPECT_EQ(run("string(0.1 + 0.2)"), "\"0.30000000000000004\"");
  EXPECT_EQ(run("string(1.0 / 0.0)"), "\"Infinity\"");
  EXPECT_EQ(run("double(string(0.1 + 0.2)) == 0.1 + 0.2"), "true");
}

TEST(Conversions, StringOfBytesMustBeValidUtf8) {
  EXPECT_EQ(run("string(b'\\303\\277')"), "\"ÿ\"");
  EXPECT_EQ(run("string(b'\\000\\xff')"), "error: 1:1: invalid UTF-8 in bytes converted to string");
  EXPECT_TRUE(is_eval_error(run("string(b'\\xed\\xa0\\x80')")));  // an encoded surrogate
}

TEST(Conversions, BoolBytesAndDyn) {
  EXPECT_EQ(run("bool('true')"), "true");
  EXPECT_EQ(run("bool('f')"), "false");
  EXPECT_TRUE(is_eval_error(run("bool('yes')")));
  EXPECT_TRUE(is_eval_error(run("bool(1)")));
  EXPECT_EQ(run("bytes('ÿ')"), R"(b"\xc3\xbf")");
  EXPECT_EQ(run("dyn([1, 'a'])"), "[1, \"a\"]");
}

TEST(Conversions, WrongArgumentCountIsACompileError) {
  EXPECT_EQ(run("int(1, 2)"), "compile error: 1:1: int() takes 1 argument");
  EXPECT_TRUE(testing::is_compile_error(run("string()")));
}

}  // namespace
}  // namespace holdfast::cel
