/* The Value type: construction, map keys and lookup, equality, ordering, formatting. */
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cel/format.h"
#include "cel/value.h"

namespace holdfast::cel {
namespace {

Value str(std::string_view s) { return Value::from_string(std::string(s)); }

TEST(Value, DefaultIsNull) {
  EXPECT_TRUE(Value().is_null());
  EXPECT_EQ(Value().kind(), ValueKind::kNull);
}

TEST(Value, CopiesShareTheirPayload) {
  const Value a = str("shared text that is longer than any small-string buffer");
  const Value b = a;  // NOLINT(performance-unnecessary-copy-initialization): the point
  EXPECT_EQ(a.as_string().data(), b.as_string().data());
}

TEST(Value, EmptyListsAndMapsAreEmpty) {
  EXPECT_TRUE(Value::from_list({}).as_list().empty());
  EXPECT_EQ(Value::from_map({}).value().as_map().size(), 0u);
}

TEST(Value, MapLookupNormalisesNumbers) {
  const Value map =
      Value::from_map({{Value::from_int(-1), str("neg")}, {Value::from_uint(7), str("seven")}})
          .value();
  const MapValue& m = map.as_map();
  EXPECT_EQ(m.find(Value::from_int(7))->as_string(), "seven");
  EXPECT_EQ(m.find(Value::from_double(7.0))->as_string(), "seven");
  EXPECT_EQ(m.find(Value::from_double(-1.0))->as_string(), "neg");
  EXPECT_EQ(m.find(Value::from_uint(1)), nullptr);
  EXPECT_EQ(m.find(Value::from_double(7.5)), nullptr);
  EXPECT_EQ(m.find(Value::from_double(std::nan(""))), nullptr);
  EXPECT_EQ(m.find(Value::from_double(1e300)), nullptr);
  EXPECT_EQ(m.find(str("7")), nullptr);
  EXPECT_EQ(m.find(Value()), nullptr);
}

TEST(Value, MapRejectsBadAndRepeatedKeys) {
  EXPECT_FALSE(Value::from_map({{Value::from_double(1.0), Value()}}).ok());
  EXPECT_FALSE(Value::from_map({{Value(), Value()}}).ok());
  EXPECT_FALSE(
      Value::from_map({{Value::from_int(3), Value()}, {Value::from_uint(3), Value()}}).ok());
  EXPECT_TRUE(
      Value::from_map({{Value::from_int(1), Value()}, {Value::from_bool(true), Value()}}).ok());
}

TEST(Value, LargeMapsFindEveryKeyThroughTheIndex) {
  std::vector<std::pair<Value, Value>> entries;
  for (int i = 0; i < 50; ++i) {
    entries.emplace_back(Value::from_int(i - 25), Value::from_int(i));
    entries.emplace_back(str("k" + std::to_string(i)), Value::from_int(i));
  }
  entries.emplace_back(Value::from_bool(false), Value::from_int(-1));
  const Value map = Value::from_map(std::move(entries)).value();
  for (int i = 0; i < 50; ++i) {
    ASSERT_NE(map.as_map().find(Value::from_int(i - 25)), nullptr) << i;
    EXPECT_EQ(map.as_map().find(Value::from_int(i - 25))->as_int(), i);
    EXPECT_EQ(map.as_map().find("k" + std::to_string(i))->as_int(), i);
  }
  EXPECT_EQ(map.as_map().find(Value::from_bool(false))->as_int(), -1);
  EXPECT_EQ(map.as_map().find(Value::from_bool(true)), nullptr);
  EXPECT_EQ(map.as_map().find("k50"), nullptr);
  EXPECT_EQ(map.as_map().entries().front().first.as_int(), -25);  // insertion order kept
}

TEST(Value, NumericEqualityIsHeterogeneous) {
  EXPECT_TRUE(values_equal(Value::from_int(1), Value::from_uint(1)));
  EXPECT_TRUE(values_equal(Value::from_uint(2), Value::from_double(2.0)));
  EXPECT_FALSE(values_equal(Value::from_int(-1),
                            Value::from_uint(std::numeric_limits<std::uint64_t>::max())));
  EXPECT_FALSE(values_equal(Value::from_int(1), str("1")));
}

TEST(Value, OrderingIsPartial) {
  EXPECT_EQ(compare_values(Value::from_int(-1), Value::from_uint(0)), std::partial_ordering::less);
  EXPECT_EQ(compare_values(Value::from_double(std::nan("")), Value::from_int(1)),
            std::partial_ordering::unordered);
  EXPECT_EQ(compare_values(str("a"), Value::from_int(1)), std::nullopt);
  EXPECT_EQ(compare_values(Value(), Value()), std::nullopt);
}

TEST(FormatValue, UsesCelLiteralSyntax) {
  EXPECT_EQ(format_value(Value::from_bool(true)), "true");
  EXPECT_EQ(format_value(Value::from_int(42)), "42");
  EXPECT_EQ(format_value(Value::from_uint(42)), "42u");
  EXPECT_EQ(format_value(Value::from_double(42)), "42.0");
  EXPECT_EQ(format_value(Value::from_double(1e300)), "1e+300");
  EXPECT_EQ(format_value(Value::from_double(std::numeric_limits<double>::infinity())),
            "double(\"Infinity\")");
  EXPECT_EQ(format_value(str("a\"b\n\x01")), "\"a\\\"b\\n\\x01\"");
  EXPECT_EQ(format_value(Value::from_bytes(std::string("A\0\xff", 3))), R"(b"A\x00\xff")");
  EXPECT_EQ(format_value(Value::from_list({Value::from_int(1), Value::from_int(2)})), "[1, 2]");
  EXPECT_EQ(format_value(Value::from_map({{str("a"), Value::from_int(1)}}).value()), "{\"a\": 1}");
  EXPECT_EQ(format_value(Value()), "null");
}

}  // namespace
}  // namespace holdfast::cel
