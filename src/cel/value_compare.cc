/* CEL equality and ordering over Values; see value.h for the rules.
 *
 * Numbers of different kinds compare by numeric value. int and uint compare exactly (a
 * negative int is below every uint). Against a double, the integer is converted to double
 * first, rounding to nearest: that is what CEL's conformance suite specifies (its "lossy"
 * cases: 9223372036854775807 compares equal to 9223372036854775808.0), and it keeps
 * equality and ordering consistent with each other.
 */
#include <cmath>

#include "cel/value.h"

namespace holdfast::cel {
namespace {

template <typename T>
std::partial_ordering order(T a, T b) {
  return a < b   ? std::partial_ordering::less
         : a > b ? std::partial_ordering::greater
                 : std::partial_ordering::equivalent;
}

std::partial_ordering invert(std::partial_ordering o) {
  if (o == std::partial_ordering::less) return std::partial_ordering::greater;
  if (o == std::partial_ordering::greater) return std::partial_ordering::less;
  return o;
}

// Numeric ordering across int/uint/double; nullopt when either side is not a number.
std::optional<std::partial_ordering> compare_numbers(const Value& a, const Value& b) {
  switch (a.kind()) {
    case ValueKind::kInt:
      switch (b.kind()) {
        case ValueKind::kInt:
          return order(a.as_int(), b.as_int());
        case ValueKind::kUint:
          return compare_int_uint(a.as_int(), b.as_uint());
        case ValueKind::kDouble:
          return compare_int_double(a.as_int(), b.as_double());
        default:
          return std::nullopt;
      }
    case ValueKind::kUint:
      switch (b.kind()) {
        case ValueKind::kInt:
          return invert(compare_int_uint(b.as_int(), a.as_uint()));
        case ValueKind::kUint:
          return order(a.as_uint(), b.as_uint());
        case ValueKind::kDouble:
          return compare_uint_double(a.as_uint(), b.as_double());
        default:
          return std::nullopt;
      }
    case ValueKind::kDouble:
      switch (b.kind()) {
        case ValueKind::kInt:
          return invert(compare_int_double(b.as_int(), a.as_double()));
        case ValueKind::kUint:
          return invert(compare_uint_double(b.as_uint(), a.as_double()));
        case ValueKind::kDouble:
          return a.as_double() <=> b.as_double();
        default:
          return std::nullopt;
      }
    default:
      return std::nullopt;
  }
}

bool is_number(const Value& v) {
  return v.is(ValueKind::kInt) || v.is(ValueKind::kUint) || v.is(ValueKind::kDouble);
}

}  // namespace

std::partial_ordering compare_int_uint(std::int64_t a, std::uint64_t b) {
  if (a < 0) return std::partial_ordering::less;
  return order(static_cast<std::uint64_t>(a), b);
}

std::partial_ordering compare_int_double(std::int64_t a, double b) {
  return static_cast<double>(a) <=> b;  // unordered when b is NaN
}

std::partial_ordering compare_uint_double(std::uint64_t a, double b) {
  return static_cast<double>(a) <=> b;
}

bool values_equal(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) {
    return compare_numbers(a, b) == std::partial_ordering::equivalent;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kNull:
      return true;
    case ValueKind::kBool:
      return a.as_bool() == b.as_bool();
    case ValueKind::kString:
      return a.as_string() == b.as_string();
    case ValueKind::kBytes:
      return a.as_bytes() == b.as_bytes();
    case ValueKind::kList: {
      const auto x = a.as_list();
      const auto y = b.as_list();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!values_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case ValueKind::kMap: {
      const MapValue& x = a.as_map();
      const MapValue& y = b.as_map();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x.entries()) {
        const Value* other = y.find(key);
        if (other == nullptr || !values_equal(value, *other)) return false;
      }
      return true;
    }
    case ValueKind::kInt:
    case ValueKind::kUint:
    case ValueKind::kDouble:
      break;  // handled above
  }
  return false;
}

std::optional<std::partial_ordering> compare_values(const Value& a, const Value& b) {
  if (auto numeric = compare_numbers(a, b)) return numeric;
  if (a.kind() != b.kind()) return std::nullopt;
  switch (a.kind()) {
    case ValueKind::kBool:
      return order(a.as_bool(), b.as_bool());
    // UTF-8 byte order is code point order, and string_view compares bytes as unsigned.
    case ValueKind::kString:
      return a.as_string().compare(b.as_string()) <=> 0;
    case ValueKind::kBytes:
      return a.as_bytes().compare(b.as_bytes()) <=> 0;
    default:
      return std::nullopt;
  }
}

}  // namespace holdfast::cel
