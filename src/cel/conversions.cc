/* Type conversion functions; see conversions.h for each overload and its range. */
#include "cel/conversions.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "cel/utf8.h"

namespace holdfast::cel {
namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;

Error range_error(std::string_view target) {
  return invalid_argument("range error: value does not fit in " + std::string(target));
}

Error no_overload(std::string_view function, const Value& argument) {
  return invalid_argument("no matching overload for " + std::string(function) + "(" +
                          std::string(kind_name(argument.kind())) + ")");
}

template <typename T>
bool parse_whole(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

Result<Value> to_int(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kInt:
      return v;
    case ValueKind::kUint:
      if (v.as_uint() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return range_error("int");
      return Value::from_int(static_cast<std::int64_t>(v.as_uint()));
    case ValueKind::kDouble: {
      const double d = v.as_double();
      if (!(d > -kTwoTo63 && d < kTwoTo63)) return range_error("int");  // also NaN
      return Value::from_int(static_cast<std::int64_t>(d));
    }
    case ValueKind::kString: {
      std::int64_t out = 0;
      if (!parse_whole(v.as_string(), out))
        return invalid_argument("cannot convert '" + std::string(v.as_string()) + "' to int");
      return Value::from_int(out);
    }
    default:
      return no_overload("int", v);
  }
}

Result<Value> to_uint(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUint:
      return v;
    case ValueKind::kInt:
      if (v.as_int() < 0) return range_error("uint");
      return Value::from_uint(static_cast<std::uint64_t>(v.as_int()));
    case ValueKind::kDouble: {
      const double d = v.as_double();
      if (!(d >= 0 && d < kTwoTo64)) return range_error("uint");
      return Value::from_uint(static_cast<std::uint64_t>(d));
    }
    case ValueKind::kString: {
      std::uint64_t out = 0;
      if (!parse_whole(v.as_string(), out))
        return invalid_argument("cannot convert '" + std::string(v.as_string()) + "' to uint");
      return Value::from_uint(out);
    }
    default:
      return no_overload("uint", v);
  }
}

Result<Value> to_double(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kDouble:
      return v;
    case ValueKind::kInt:
      return Value::from_double(static_cast<double>(v.as_int()));
    case ValueKind::kUint:
      return Value::from_double(static_cast<double>(v.as_uint()));
    case ValueKind::kString: {
      const std::string_view text = v.as_string();
      if (text == "NaN") return Value::from_double(std::numeric_limits<double>::quiet_NaN());
      if (text == "Infinity") return Value::from_double(std::numeric_limits<double>::infinity());
      if (text == "-Infinity") return Value::from_double(-std::numeric_limits<double>::infinity());
      double out = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
      // Out-of-range magnitudes saturate to infinity or zero, as the literal syntax does.
      const bool saturated = ec == std::errc::result_out_of_range;
      if ((ec != std::errc() && !saturated) || end != text.data() + text.size() || text.empty()) {
        return invalid_argument("cannot convert '" + std::string(text) + "' to double");
      }
      if (saturated) out = std::strtod(std::string(text).c_str(), nullptr);
      return Value::from_double(out);
    }
    default:
      return no_overload("double", v);
  }
}

Result<Value> to_string(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kString:
      return v;
    case ValueKind::kInt:
      return Value::from_string(std::to_string(v.as_int()));
    case ValueKind::kUint:
      return Value::from_string(std::to_string(v.as_uint()));
    case ValueKind::kDouble:
      return Value::from_string(double_to_cel_string(v.as_double()));
    case ValueKind::kBool:
      return Value::from_string(v.as_bool() ? "true" : "false");
    case ValueKind::kBytes:
      if (!is_valid_utf8(v.as_bytes()))
        return invalid_argument("invalid UTF-8 in bytes converted to string");
      return Value::from_string(std::string(v.as_bytes()));
    default:
      return no_overload("string", v);
  }
}

Result<Value> to_bool(const Value& v) {
  if (v.is(ValueKind::kBool)) return v;
  if (!v.is(ValueKind::kString)) return no_overload("bool", v);
  const std::string_view s = v.as_string();
  if (s == "true" || s == "True" || s == "TRUE" || s == "t" || s == "1")
    return Value::from_bool(true);
  if (s == "false" || s == "False" || s == "FALSE" || s == "f" || s == "0")
    return Value::from_bool(false);
  return invalid_argument("cannot convert '" + std::string(s) + "' to bool");
}

Result<Value> to_bytes(const Value& v) {
  if (v.is(ValueKind::kBytes)) return v;
  if (v.is(ValueKind::kString)) return Value::from_bytes(std::string(v.as_string()));
  return no_overload("bytes", v);
}

}  // namespace

std::string double_to_cel_string(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  // Shortest round-trip digits, read off the scientific form "d.ddde±x".
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(result.ptr - buf));
  const bool negative = sci.front() == '-';
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (const char c : sci.substr(negative ? 1 : 0, e_pos - (negative ? 1 : 0))) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+' ? 1 : 0), sci.data() + sci.size(),
                  exponent);
  if (digits == "0") digits.clear();  // Go formats zero with no digits: "0"
  std::string out = negative ? "-" : "";
  const int nd = static_cast<int>(digits.size());
  const int point = digits.empty() ? 0 : exponent + 1;  // digits are 0.ddd x 10^point
  const int exp10 = point - 1;
  if (!digits.empty() && (exp10 < -4 || exp10 >= 6)) {
    out += digits[0];
    if (nd > 1) out += "." + digits.substr(1);
    out += exp10 < 0 ? "e-" : "e+";
    const int magnitude = std::abs(exp10);
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
    return out;
  }
  if (point <= 0) {
    out += "0";
    if (nd > 0) out += "." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    return out;
  }
  if (point >= nd) return out + digits + std::string(static_cast<std::size_t>(point - nd), '0');
  return out + digits.substr(0, static_cast<std::size_t>(point)) + "." +
         digits.substr(static_cast<std::size_t>(point));
}

Result<Value> convert(Builtin conversion, const Value& argument) {
  switch (conversion) {
    case Builtin::kInt:
      return to_int(argument);
    case Builtin::kUint:
      return to_uint(argument);
    case Builtin::kDouble:
      return to_double(argument);
    case Builtin::kString:
      return to_string(argument);
    case Builtin::kBool:
      return to_bool(argument);
    case Builtin::kBytes:
      return to_bytes(argument);
    case Builtin::kDyn:
      return argument;
    default:
      return invalid_argument("internal: not a conversion");
  }
}

}  // namespace holdfast::cel
