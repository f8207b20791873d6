/* String functions: startsWith, endsWith, contains, matches (RE2), concatenation, size. */
#include <gtest/gtest.h>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_compile_error;
using testing::is_eval_error;
using testing::run;

TEST(Strings, StartsWith) {
  EXPECT_EQ(run("'foobar'.startsWith('foo')"), "true");
  EXPECT_EQ(run("'foobar'.startsWith('bar')"), "false");
  EXPECT_EQ(run("'foo'.startsWith('')"), "true");
  EXPECT_EQ(run("''.startsWith('a')"), "false");
  EXPECT_EQ(run("'завтра'.startsWith('за')"), "true");
}

TEST(Strings, EndsWith) {
  EXPECT_EQ(run("'foobar'.endsWith('bar')"), "true");
  EXPECT_EQ(run("'foobar'.endsWith('foo')"), "false");
  EXPECT_EQ(run("'a'.endsWith('ba')"), "false");
  EXPECT_EQ(run("'forté'.endsWith('té')"), "true");
}

TEST(Strings, Contains) {
  EXPECT_EQ(run("'abababc'.contains('ababc')"), "true");
  EXPECT_EQ(run("'hello'.contains('ol')"), "false");
  EXPECT_EQ(run("''.contains('')"), "true");
}

TEST(Strings, ArgumentBuiltByConcatenation) {
  // The argument is assembled in a stack buffer when it fits, on the heap otherwise.
  EXPECT_EQ(run("'user:42:lock'.startsWith('user:' + '42' + ':')"), "true");
  EXPECT_EQ(run("'user:42:lock'.startsWith('user:' + '43' + ':')"), "false");
  const std::string long_part(300, 'x');
  EXPECT_EQ(run("'" + long_part + "yz'.startsWith('" + long_part + "' + 'y')"), "true");
  EXPECT_EQ(run("'a1'.startsWith('a' + 1)"), "error: 1:21: no matching overload for string + int");
}

TEST(Strings, PredicatesRequireStrings) {
  EXPECT_EQ(run("'a'.startsWith(1)"),
            "error: 1:5: no matching overload for string.startsWith(int)");
  EXPECT_TRUE(is_eval_error(run("b'a'.contains(b'a')")));
  EXPECT_TRUE(is_eval_error(run("[1].endsWith('a')")));
  EXPECT_TRUE(is_compile_error(run("'a'.startsWith()")));
  EXPECT_TRUE(is_compile_error(run("'a'.contains('a', 'b')")));
}

TEST(Strings, MatchesFindsASubstringMatch) {
  EXPECT_EQ(run("'hubba'.matches('ubb')"), "true");
  EXPECT_EQ(run("'hubba'.matches('^ubb')"), "false");
  EXPECT_EQ(run("'grey'.matches('gr(a|e)y')"), "true");
  EXPECT_EQ(run("'mañana'.matches('a+ñ+a+')"), "true");
  EXPECT_EQ(run("matches('abc', 'b')"), "true");
}

TEST(Strings, MatchesWithAComputedPatternUsesTheCache) {
  Activation activation;
  for (const char* pattern : {"^a+$", "b", "^a+$", "[0-9]"}) {
    activation.bind("p", Value::from_string(pattern));
    const bool expected = std::string(pattern) != "[0-9]" && std::string(pattern) != "b";
    EXPECT_EQ(run("'aaa'.matches(p)", activation), expected ? "true" : "false") << pattern;
  }
}

TEST(Strings, InvalidLiteralPatternIsACompileError) {
  EXPECT_EQ(run("'a'.matches('(')"),
            "compile error: 1:13: invalid regular expression: missing ): (");
}

TEST(Strings, HugeRepeatCountsAreRejectedByRe2) {
  EXPECT_EQ(run("'a'.matches('a{100000}')"),
            "compile error: 1:13: invalid regular expression: invalid repetition size: {100000}");
  EXPECT_TRUE(is_compile_error(run("'a'.matches('((a{1000}){1000}){1000}')")));
}

TEST(Strings, InvalidComputedPatternIsAnEvaluationError) {
  Activation activation;
  activation.bind("p", Value::from_string("("));
  EXPECT_TRUE(is_eval_error(run("'a'.matches(p)", activation)));
  EXPECT_EQ(run("'a'.matches(p) || true", activation), "true");
}

TEST(Strings, UnknownMethodIsAnEvaluationError) {
  EXPECT_EQ(run("'a'.upper()"), "error: 1:5: no such method 'upper' on string");
  EXPECT_EQ(run("'a'.upper() || true"), "true");
  EXPECT_EQ(run("x.upper()"), "error: 1:1: undeclared reference to 'x'");
}

}  // namespace
}  // namespace holdfast::cel
