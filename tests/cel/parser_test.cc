/* Grammar: precedence and associativity, lists and maps, calls, and syntax errors with their
 * positions.
 */
#include <gtest/gtest.h>

#include <string>

#include "cel_test_util.h"

namespace holdfast::cel {
namespace {

using testing::is_compile_error;
using testing::run;

TEST(Parser, MultiplicationBindsTighterThanAddition) {
  EXPECT_EQ(run("2 + 3 * 4"), "14");
  EXPECT_EQ(run("(2 + 3) * 4"), "20");
  EXPECT_EQ(run("10 - 4 - 3"), "3");  // left-associative
  EXPECT_EQ(run("64 / 4 / 2"), "8");
  EXPECT_EQ(run("7 % 4 * 2"), "6");
}

TEST(Parser, UnaryBindsTighterThanBinary) {
  EXPECT_EQ(run("-2 * 3"), "-6");
  EXPECT_EQ(run("!false && false"), "false");
  EXPECT_EQ(run("--5"), "5");
  EXPECT_EQ(run("!!true"), "true");
}

TEST(Parser, RelationsBindTighterThanLogic) {
  EXPECT_EQ(run("1 < 2 && 3 > 4 || 5 == 5"), "true");
  EXPECT_EQ(run("1 + 1 == 2"), "true");
  EXPECT_EQ(run("2 in [1, 2] && 'a' in {'a': 1}"), "true");
}

TEST(Parser, AndBindsTighterThanOr) {
  EXPECT_EQ(run("true || false && false"), "true");
  EXPECT_EQ(run("(true || false) && false"), "false");
}

TEST(Parser, ConditionalIsRightAssociativeAndLowest) {
  EXPECT_EQ(run("false ? 1 : true ? 2 : 3"), "2");
  EXPECT_EQ(run("1 < 2 ? 'a' + 'b' : 'c'"), "\"ab\"");
}

TEST(Parser, MemberIndexAndCallChains) {
  EXPECT_EQ(run("{'a': [1, {'b': 'xyz'}]}.a[1].b.size()"), "3");
  EXPECT_EQ(run("[[1, 2], [3]][0][1]"), "2");
}

TEST(Parser, ListsAndMapsAcceptATrailingComma) {
  EXPECT_EQ(run("[1, 2,]"), "[1, 2]");
  EXPECT_EQ(run("{'a': 1,}"), "{\"a\": 1}");
  EXPECT_TRUE(is_compile_error(run("[,]")));
  EXPECT_TRUE(is_compile_error(run("size(1,)")));
}

TEST(Parser, ReservedWordsCannotNameVariablesButCanNameFields) {
  EXPECT_EQ(run("while"), "compile error: 1:1: reserved word 'while' cannot be used as a name");
  EXPECT_TRUE(is_compile_error(run("let(1)")));
  EXPECT_EQ(run("{'if': 1, 'package': 2}.if"), "1");
}

TEST(Parser, LeadingDotNamesTheRootScope) {
  Activation activation;
  activation.bind("x", Value::from_int(7));
  EXPECT_EQ(run(".x + 1", activation), "8");
}

TEST(Parser, UnexpectedTokenNamesLineAndColumn) {
  EXPECT_EQ(run("record.key.startsWith(')"), "compile error: 1:23: unterminated string literal");
  EXPECT_EQ(run("record.key.startsWith(1 +)"), "compile error: 1:26: unexpected token ')'");
  EXPECT_EQ(run("a &&\n  || b"), "compile error: 2:3: unexpected token '||'");
}

TEST(Parser, ColumnsCountCodePointsNotBytes) {
  EXPECT_EQ(run("'héllo' +)"), "compile error: 1:10: unexpected token ')'");
}

TEST(Parser, CompileErrorsCarryOffsetLineAndColumnDetails) {
  const auto program = compile("1 +\n  )");
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.error().code, ErrorCode::kInvalidArgument);
  const auto& details = program.error().details;
  ASSERT_EQ(details.size(), 3u);
  EXPECT_EQ(details[0].first, "offset");
  EXPECT_EQ(std::get<std::int64_t>(details[0].second), 6);
  EXPECT_EQ(std::get<std::int64_t>(details[1].second), 2);
  EXPECT_EQ(std::get<std::int64_t>(details[2].second), 3);
}

TEST(Parser, MissingClosersAreReported) {
  EXPECT_EQ(run("(1 + 2"), "compile error: 1:7: unexpected end of expression, expected ')'");
  EXPECT_EQ(run("[1, 2"), "compile error: 1:6: unexpected end of expression, expected ',' or ']'");
  EXPECT_TRUE(is_compile_error(run("{'a' 1}")));
  EXPECT_TRUE(is_compile_error(run("true ? 1")));
  EXPECT_TRUE(is_compile_error(run("a.")));
  EXPECT_TRUE(is_compile_error(run("")));
}

TEST(Parser, StrayCharactersAreReported) {
  EXPECT_EQ(run("1 = 1"), "compile error: 1:3: unexpected character '='");
  EXPECT_TRUE(is_compile_error(run("a & b")));
  EXPECT_TRUE(is_compile_error(run("a | b")));
  EXPECT_TRUE(is_compile_error(run("#")));
  EXPECT_TRUE(is_compile_error(run("1 2")));
}

TEST(Parser, MessageConstructionIsNotSupported) {
  EXPECT_EQ(run("Msg{a: 1}"), "compile error: 1:4: message construction is not supported");
}

TEST(Parser, ThirtyTwoLevelsOfEveryConstructAreAccepted) {
  // The language definition's minimum: 32 nested parentheses, 32 repetitions of operators.
  EXPECT_EQ(run(std::string(32, '(') + "7" + std::string(32, ')')), "7");
  std::string ors = "false";
  for (int i = 0; i < 31; ++i) ors += " || false";
  EXPECT_EQ(run(ors + " || true"), "true");
  std::string indexes = "[0]";
  for (int i = 0; i < 32; ++i) indexes = "[" + indexes + "]";
  for (int i = 0; i < 33; ++i) indexes += "[0]";
  EXPECT_EQ(run(indexes), "0");
}

TEST(Parser, LongOperatorChainsStayShallow) {
  // || and + chains are flattened, so hundreds of alternatives are fine.
  std::string ors = "false";
  for (int i = 0; i < 500; ++i) ors += " || false";
  EXPECT_EQ(run(ors), "false");
  std::string sum = "0";
  for (int i = 0; i < 500; ++i) sum += " + 1";
  EXPECT_EQ(run(sum), "500");
}

}  // namespace
}  // namespace holdfast::cel
