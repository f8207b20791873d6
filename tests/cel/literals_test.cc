/* Literal forms: numbers, strings with every escape, raw and triple-quoted strings, bytes. */
#include <gtest/gtest.h>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_compile_error;
using testing::run;

TEST(Literals, DecimalAndHexIntegers) {
  EXPECT_EQ(run("42"), "42");
  EXPECT_EQ(run("0x2A"), "42");
  EXPECT_EQ(run("0x7fffffffffffffff"), "9223372036854775807");
  EXPECT_EQ(run("-0x55555555"), "-1431655765");
}

TEST(Literals, UnsignedSuffixInEitherCase) {
  EXPECT_EQ(run("42u"), "42u");
  EXPECT_EQ(run("42U"), "42u");
  EXPECT_EQ(run("0xFFu"), "255u");
  EXPECT_EQ(run("18446744073709551615u"), "18446744073709551615u");
}

TEST(Literals, IntMinimumIsWrittenWithAMinusSign) {
  EXPECT_EQ(run("-9223372036854775808"), "-9223372036854775808");
}

TEST(Literals, IntegersOutOfRangeAreCompileErrors) {
  EXPECT_EQ(run("9223372036854775808"), "compile error: 1:1: integer literal out of range");
  EXPECT_TRUE(is_compile_error(run("-9223372036854775809")));
  EXPECT_TRUE(is_compile_error(run("18446744073709551616u")));
  EXPECT_TRUE(is_compile_error(run("0x10000000000000000")));
}

TEST(Literals, MinusBeforeParenthesesIsNotFoldedIntoTheLiteral) {
  // -(9223372036854775808) is the negation of an out-of-range literal, not the int minimum.
  EXPECT_TRUE(is_compile_error(run("-(9223372036854775808)")));
}

TEST(Literals, DoublesWithFractionsAndExponents) {
  EXPECT_EQ(run("1.5"), "1.5");
  EXPECT_EQ(run(".5"), "0.5");
  EXPECT_EQ(run("1e3"), "1000.0");
  EXPECT_EQ(run("1E+3"), "1000.0");
  EXPECT_EQ(run("2.5e-1"), "0.25");
  EXPECT_EQ(run("-2.3e+1"), "-23.0");
  EXPECT_EQ(run("-0.0"), "-0.0");
}

TEST(Literals, DoublesBeyondRangeSaturate) {
  EXPECT_EQ(run("1e400"), "double(\"Infinity\")");
  EXPECT_EQ(run("1e-400"), "0.0");
}

TEST(Literals, BoolAndNull) {
  EXPECT_EQ(run("true"), "true");
  EXPECT_EQ(run("false"), "false");
  EXPECT_EQ(run("null"), "null");
}

TEST(Literals, SingleAndDoubleQuotedStrings) {
  EXPECT_EQ(run("'abc'"), "\"abc\"");
  EXPECT_EQ(run("\"abc\""), "\"abc\"");
  EXPECT_EQ(run("'say \"hi\"'"), "\"say \\\"hi\\\"\"");
}

TEST(Literals, SimpleEscapes) {
  const auto program = compile(R"('\a\b\f\n\r\t\v\\\'\"\`\?')");
  ASSERT_TRUE(program.ok()) << program.error().message;
  EXPECT_EQ(program->evaluate(Activation()).value().as_string(),
            std::string("\a\b\f\n\r\t\v\\'\"`?"));
}

TEST(Literals, NumericEscapesInStringsAreCodePoints) {
  EXPECT_EQ(run(R"('\x41\X42\103')"), "\"ABC\"");
  // \377 and \xFF are U+00FF (two bytes of UTF-8), not the byte 0xFF.
  EXPECT_EQ(run(R"(size('\377'))"), "1");
  EXPECT_EQ(run(R"('\377' == '\u00ff')"), "true");
  EXPECT_EQ(run(R"('\xff' == 'ÿ')"), "true");
}

TEST(Literals, UnicodeEscapes) {
  EXPECT_EQ(run(R"('\u270c' == '✌')"), "true");
  EXPECT_EQ(run(R"('\U0001f431' == '🐱')"), "true");
  EXPECT_EQ(run(R"(size('\U0001f431'))"), "1");
}

TEST(Literals, SurrogateAndOutOfRangeEscapesAreRejected) {
  EXPECT_EQ(run(R"('\ud800')"), "compile error: 1:2: escape \\ud800 is not a Unicode scalar value");
  EXPECT_TRUE(is_compile_error(run(R"('\U00110000')")));
}

TEST(Literals, MalformedEscapesAreRejectedWithTheirPosition) {
  EXPECT_EQ(run(R"('ab\q')"), "compile error: 1:4: invalid escape sequence '\\q'");
  EXPECT_TRUE(is_compile_error(run(R"('\x4')")));
  EXPECT_TRUE(is_compile_error(run(R"('\u12')")));
  EXPECT_TRUE(is_compile_error(run(R"('\400')")));
  EXPECT_TRUE(is_compile_error(run(R"('\08')")));
}

TEST(Literals, RawStringsKeepBackslashes) {
  EXPECT_EQ(run(R"(r'\n\d+')"), R"("\\n\\d+")");
  EXPECT_EQ(run(R"(R"a\tb")"), R"("a\\tb")");
  EXPECT_EQ(run(R"(size(r'\\'))"), "2");
}

TEST(Literals, TripleQuotedStringsMayHoldQuotesAndNewlines) {
  EXPECT_EQ(run("'''it's \"x\"'''"), "\"it's \\\"x\\\"\"");
  EXPECT_EQ(run("\"\"\"a\nb\"\"\""), "\"a\\nb\"");
  EXPECT_EQ(run("r'''\\n'''"), R"("\\n")");
  EXPECT_EQ(run("''''''"), "\"\"");
}

TEST(Literals, NewlineInASingleQuotedStringIsAnError) {
  EXPECT_TRUE(is_compile_error(run("'a\nb'")));
}

TEST(Literals, UnterminatedStringPointsAtItsStart) {
  EXPECT_EQ(run("1 + 'abc"), "compile error: 1:5: unterminated string literal");
  EXPECT_TRUE(is_compile_error(run("'''abc''")));
}

TEST(Literals, BytesLiterals) {
  EXPECT_EQ(run("b'abc'"), "b\"abc\"");
  EXPECT_EQ(run("B\"abc\""), "b\"abc\"");
  // In bytes, \xFF and \377 are single octets; non-ASCII text is its UTF-8.
  EXPECT_EQ(run(R"(b'\xff\377')"), R"(b"\xff\xff")");
  EXPECT_EQ(run("b'ÿ'"), R"(b"\xc3\xbf")");
  EXPECT_EQ(run(R"(b'\000')"), R"(b"\x00")");
  EXPECT_EQ(run(R"(br'\x00')"), R"(b"\\x00")");
  EXPECT_EQ(run(R"(Rb'\n')"), R"(b"\\n")");
}

TEST(Literals, UnicodeEscapesAreNotAllowedInBytes) {
  EXPECT_TRUE(is_compile_error(run(R"(b'\u0041')")));
}

TEST(Literals, InvalidUtf8SourceIsRejected) {
  EXPECT_EQ(run("'\xff'"), "compile error: 1:2: invalid UTF-8 in the expression");
}

TEST(Literals, CommentsAndWhitespaceAreIgnored) {
  EXPECT_EQ(run("1 + // one\n\t2\r\n// end"), "3");
}

}  // namespace
}  // namespace holdfast::cel
