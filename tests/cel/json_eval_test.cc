/* The evaluator protocol (json_eval.h): typed bindings in, typed value or error out. */
#include <gtest/gtest.h>

#include <string>

#include "cel/json_eval.h"

namespace holdfast::cel {
namespace {

std::string eval(std::string_view request) { return eval_json_request(request); }

TEST(JsonEval, ScalarResults) {
  EXPECT_EQ(eval(R"({"expr": "1 + 1"})"), R"({"type": "int", "value": 2})");
  EXPECT_EQ(eval(R"({"expr": "7u"})"), R"({"type": "uint", "value": 7})");
  EXPECT_EQ(eval(R"({"expr": "true"})"), R"({"type": "bool", "value": true})");
  EXPECT_EQ(eval(R"({"expr": "null"})"), R"({"type": "null", "value": null})");
  EXPECT_EQ(eval(R"({"expr": "'a\"\\\\\\n'"})"), R"({"type": "string", "value": "a\"\\\n"})");
}

TEST(JsonEval, IntegersBeyondTwoTo53AreStrings) {
  EXPECT_EQ(eval(R"({"expr": "9007199254740992"})"),
            R"({"type": "int", "value": 9007199254740992})");
  EXPECT_EQ(eval(R"({"expr": "9007199254740993"})"),
            R"({"type": "int", "value": "9007199254740993"})");
  EXPECT_EQ(eval(R"({"expr": "-9223372036854775808"})"),
            R"({"type": "int", "value": "-9223372036854775808"})");
  EXPECT_EQ(eval(R"({"expr": "18446744073709551615u"})"),
            R"({"type": "uint", "value": "18446744073709551615"})");
}

TEST(JsonEval, DoublesRoundTripAndNameNonFiniteValues) {
  EXPECT_EQ(eval(R"({"expr": "0.1 + 0.2"})"),
            R"({"type": "double", "value": 0.30000000000000004})");
  EXPECT_EQ(eval(R"({"expr": "2.0"})"), R"({"type": "double", "value": 2.0})");
  EXPECT_EQ(eval(R"({"expr": "-0.0"})"), R"({"type": "double", "value": -0.0})");
  EXPECT_EQ(eval(R"({"expr": "1e300 * 10.0"})"), R"({"type": "double", "value": 1e+301})");
  EXPECT_EQ(eval(R"({"expr": "0.0/0.0"})"), R"({"type": "double", "value": "NaN"})");
  EXPECT_EQ(eval(R"({"expr": "-1.0/0.0"})"), R"({"type": "double", "value": "-Infinity"})");
}

TEST(JsonEval, BytesAreBase64) {
  EXPECT_EQ(eval(R"({"expr": "b'\\000\\xff'"})"), R"({"type": "bytes", "value": "AP8="})");
  EXPECT_EQ(eval(R"({"expr": "b'abc'"})"), R"({"type": "bytes", "value": "YWJj"})");
  EXPECT_EQ(eval(R"({"expr": "b''"})"), R"({"type": "bytes", "value": ""})");
}

TEST(JsonEval, ListsAndMaps) {
  EXPECT_EQ(
      eval(R"({"expr": "[1, 'a']"})"),
      R"({"type": "list", "value": [{"type": "int", "value": 1}, {"type": "string", "value": "a"}]})");
  EXPECT_EQ(
      eval(R"({"expr": "{'k': 1u}"})"),
      R"({"type": "map", "value": [[{"type": "string", "value": "k"}, {"type": "uint", "value": 1}]]})");
}

TEST(JsonEval, TypedBindingsOfEveryKind) {
  const std::string request = R"({"expr": "[i, u, d, s, b, n, y, l, m.k]", "bindings": {
      "i": {"type": "int", "value": "-9223372036854775808"},
      "u": {"type": "uint", "value": 18446744073709551615},
      "d": {"type": "double", "value": "-Infinity"},
      "s": {"type": "string", "value": "é"},
      "b": {"type": "bool", "value": false},
      "n": {"type": "null", "value": null},
      "y": {"type": "bytes", "value": "AP8"},
      "l": {"type": "list", "value": [{"type": "int", "value": 1}]},
      "m": {"type": "map", "value": [[{"type": "string", "value": "k"}, {"type": "double", "value": 1}]]}}})";
  EXPECT_EQ(
      eval(request),
      R"({"type": "list", "value": [{"type": "int", "value": "-9223372036854775808"}, )"
      R"({"type": "uint", "value": "18446744073709551615"}, {"type": "double", "value": "-Infinity"}, )"
      R"({"type": "string", "value": "é"}, {"type": "bool", "value": false}, {"type": "null", "value": null}, )"
      R"({"type": "bytes", "value": "AP8="}, {"type": "list", "value": [{"type": "int", "value": 1}]}, )"
      R"({"type": "double", "value": 1.0}]})");
}

TEST(JsonEval, ErrorsOfEveryStage) {
  EXPECT_EQ(eval(R"({"expr": "1 +"})"), R"({"error": "1:4: unexpected end of expression"})");
  EXPECT_EQ(eval(R"({"expr": "1 / 0"})"), R"({"error": "1:3: division by zero"})");
  EXPECT_EQ(eval(R"({"expr": "x"})"), R"({"error": "1:1: undeclared reference to 'x'"})");
}

TEST(JsonEval, MalformedRequestsAnswerWithAnError) {
  for (const char* request : {"", "{", "[]", "42", R"({"bindings": {}})", R"({"expr": 1})",
                              R"({"expr": "x", "bindings": []})", "\xff\xfe"}) {
    const std::string reply = eval(request);
    EXPECT_EQ(reply.rfind(R"({"error": ")", 0), 0u) << request << " -> " << reply;
  }
}

TEST(JsonEval, BadBindingsNameTheBinding) {
  EXPECT_EQ(eval(R"({"expr": "x", "bindings": {"x": {"type": "int", "value": 1.5}}})"),
            R"({"error": "binding 'x': bad int value: expected an integer in the int64 range"})");
  EXPECT_EQ(eval(R"({"expr": "x", "bindings": {"x": {"type": "uint", "value": -1}}})"),
            R"({"error": "binding 'x': bad uint value: expected an integer in the uint64 range"})");
  EXPECT_EQ(eval(R"({"expr": "x", "bindings": {"x": {"type": "bytes", "value": "!!"}}})"),
            R"({"error": "binding 'x': bad bytes value: invalid base64"})");
  EXPECT_EQ(eval(R"({"expr": "x", "bindings": {"x": {"type": "date", "value": 1}}})"),
            R"({"error": "binding 'x': unknown value type 'date'"})");
  EXPECT_EQ(
      eval(
          R"({"expr": "x", "bindings": {"x": {"type": "map", "value": [[{"type": "int", "value": 1}, {"type": "int", "value": 1}], [{"type": "uint", "value": 1}, {"type": "int", "value": 2}]]}}})"),
      R"({"error": "binding 'x': repeated map key"})");
}

TEST(JsonEval, DeeplyNestedJsonIsRefusedNotACrash) {
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += R"({"type": "list", "value": [)";
  std::string request = R"({"expr": "x", "bindings": {"x": )" + deep;
  EXPECT_EQ(eval(request).rfind(R"({"error": "malformed request)", 0), 0u);
}

TEST(JsonEval, ErrorMessagesAreValidJsonStrings) {
  EXPECT_EQ(eval(R"({"expr": "'\u00e9' + \"\\t\" + 1"})"),
            R"({"error": "1:5: no matching overload for string + int"})");
  EXPECT_EQ(eval("{\"expr\": \"\\u0001\"}"), R"({"error": "1:1: unexpected character U+0001"})");
}

}  // namespace
}  // namespace holdfast::cel
