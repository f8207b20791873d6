// Reading HTTP request bodies strictly (server/http/json_body.h, json_strict.h): a key given
// twice is refused at any depth, naming it, as a query parameter given twice is.
#include "server/http/json_body.h"

#include <gtest/gtest.h>

#include <string>

#include "server/http/json_strict.h"

namespace holdfast::http {
namespace {

std::string field_of(const Error& e) {
  for (const auto& [name, value] : e.details)
    if (name == "field") return std::get<std::string>(value);
  return "(none)";
}

TEST(JsonBody, AKeyGivenTwiceIsRefusedNamingIt) {
  auto r = BodyReader::parse(R"({"key":"a","ttlMs":1000,"key":"b"})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "key is given twice");
  EXPECT_EQ(field_of(r.error()), "key");
}

TEST(JsonBody, KeysAreComparedAfterEscapesAreRead) {
  auto r = BodyReader::parse(R"({"ttlMs":1,"ttl\u004ds":2})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "ttlMs is given twice");
}

TEST(JsonBody, AKeyGivenTwiceInsideANestedObjectOrArrayIsRefused) {
  auto in_array = BodyReader::parse(R"({"keys":[{"key":"a"},{"key":"b","key":"c"}]})");
  ASSERT_FALSE(in_array.ok());
  EXPECT_EQ(in_array.error().message, "key is given twice");
  EXPECT_EQ(field_of(in_array.error()), "key");
  auto deep = BodyReader::parse(R"({"meta":{"x":{"y":1,"z":2,"y":3}}})");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(field_of(deep.error()), "y");
  auto empty_name = parse_json_strict(R"({"":1,"":2})");
  ASSERT_FALSE(empty_name.ok());
  EXPECT_EQ(field_of(empty_name.error()), "");
}

TEST(JsonBody, TheSameKeyInSiblingOrNestedObjectsIsNoDuplicate) {
  auto r = BodyReader::parse(
      R"({"keys":[{"key":"a","ttlMs":1},{"key":"b","ttlMs":2}],"key":{"key":{"key":1}}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto keys = r->objects("keys", true, 64);
  ASSERT_TRUE(keys);
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[1].string("key", true), "b");
  EXPECT_EQ((*keys)[1].integer("ttlMs", true), 2);
}

TEST(JsonBody, ValuesReadAsBoostJsonReadsThem) {
  auto v = parse_json_strict(
      R"({"s":"a\"b\u00e9","i":-5,"u":18446744073709551615,"d":1.5,"b":true,"n":null,"a":[1,[2],{}]})");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(
      *v,
      boost::json::parse(
          R"({"s":"a\"b\u00e9","i":-5,"u":18446744073709551615,"d":1.5,"b":true,"n":null,"a":[1,[2],{}]})"));
}

TEST(JsonBody, WhatIsNotOneJsonDocumentIsRefused) {
  for (const char* body : {"", "{", R"({"a":1} x)", R"({"a":1}{"a":1})", "[1,2", "nul"}) {
    auto r = BodyReader::parse(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().message.rfind("body is not valid JSON: ", 0), 0u)
        << body << ": " << r.error().message;
  }
  auto array = BodyReader::parse("[1]");
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.error().message, "body must be a JSON object");
}

}  // namespace
}  // namespace holdfast::http
