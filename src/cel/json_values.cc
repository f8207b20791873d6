/* Typed JSON encoding of Values; see json_values.h for the format.
 *
 * Decoding is lenient where the protocol says a checker is ("either form for any size"): an
 * int may arrive as a JSON integer, a decimal string, or a double holding a whole number.
 * Encoding is exact: integers beyond 2^53 (where JSON readers start rounding) become strings,
 * and doubles print in the shortest form that reads back as the same double.
 */
#include "cel/json_values.h"

#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cel/base64.h"
#include "cel/format.h"
#include "cel/utf8.h"

namespace holdfast::cel {
namespace {

namespace json = boost::json;

constexpr std::uint64_t kTwoTo53 = std::uint64_t{1} << 53;

std::string_view sv(json::string_view s) { return std::string_view(s.data(), s.size()); }

Result<Value> bad(std::string_view type, std::string_view what) {
  return invalid_argument("bad " + std::string(type) + " value: " + std::string(what));
}

// An integer of either signedness from any accepted JSON form, as a sign and magnitude.
struct Integer {
  bool negative;
  std::uint64_t magnitude;
};

std::optional<Integer> read_integer(const json::value& v) {
  if (v.is_int64()) {
    const std::int64_t n = v.get_int64();
    return Integer{n < 0,
                   n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n)};
  }
  if (v.is_uint64()) return Integer{false, v.get_uint64()};
  if (v.is_double()) {
    const double d = v.get_double();
    if (std::trunc(d) != d || std::fabs(d) >= 18446744073709551616.0) return std::nullopt;
    return Integer{d < 0, static_cast<std::uint64_t>(std::fabs(d))};
  }
  if (v.is_string()) {
    std::string_view text = sv(v.get_string());
    const bool negative = !text.empty() && text.front() == '-';
    if (negative) text.remove_prefix(1);
    std::uint64_t magnitude = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return Integer{negative, magnitude};
  }
  return std::nullopt;
}

Result<Value> read_double(const json::value& v) {
  if (v.is_double()) return Value::from_double(v.get_double());
  if (v.is_int64()) return Value::from_double(static_cast<double>(v.get_int64()));
  if (v.is_uint64()) return Value::from_double(static_cast<double>(v.get_uint64()));
  if (!v.is_string())
    return bad("double", "expected a number or \"NaN\", \"Infinity\", \"-Infinity\"");
  const std::string_view text = sv(v.get_string());
  if (text == "NaN") return Value::from_double(std::numeric_limits<double>::quiet_NaN());
  if (text == "Infinity") return Value::from_double(std::numeric_limits<double>::infinity());
  if (text == "-Infinity") return Value::from_double(-std::numeric_limits<double>::infinity());
  double d = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return bad("double", text);
  return Value::from_double(d);
}

}  // namespace

Result<Value> value_from_typed_json(const json::value& typed) {
  const json::object* object = typed.if_object();
  if (object == nullptr)
    return invalid_argument("a typed value must be an object {\"type\": ..., \"value\": ...}");
  const json::value* type_field = object->if_contains("type");
  if (type_field == nullptr || !type_field->is_string())
    return invalid_argument("a typed value needs a \"type\" string");
  const std::string_view type = sv(type_field->get_string());
  static const json::value kNull;
  const json::value* field = object->if_contains("value");
  const json::value& v = field != nullptr ? *field : kNull;

  if (type == "null") return Value();
  if (type == "bool") {
    if (!v.is_bool()) return bad(type, "expected true or false");
    return Value::from_bool(v.get_bool());
  }
  if (type == "int") {
    const auto n = read_integer(v);
    constexpr std::uint64_t kMaxMagnitude = std::uint64_t{1} << 63;
    if (!n || n->magnitude > kMaxMagnitude || (!n->negative && n->magnitude == kMaxMagnitude)) {
      return bad(type, "expected an integer in the int64 range");
    }
    return Value::from_int(n->negative ? static_cast<std::int64_t>(0 - n->magnitude)
                                       : static_cast<std::int64_t>(n->magnitude));
  }
  if (type == "uint") {
    const auto n = read_integer(v);
    if (!n || (n->negative && n->magnitude != 0))
      return bad(type, "expected an integer in the uint64 range");
    return Value::from_uint(n->magnitude);
  }
  if (type == "double") return read_double(v);
  if (type == "string") {
    if (!v.is_string()) return bad(type, "expected a JSON string");
    const std::string_view text = sv(v.get_string());
    if (!is_valid_utf8(text)) return bad(type, "invalid UTF-8");
    return Value::from_string(std::string(text));
  }
  if (type == "bytes") {
    if (!v.is_string()) return bad(type, "expected a base64 string");
    auto decoded = base64_decode(sv(v.get_string()));
    if (!decoded) return bad(type, "invalid base64");
    return Value::from_bytes(std::move(*decoded));
  }
  if (type == "list") {
    if (!v.is_array()) return bad(type, "expected an array of typed values");
    std::vector<Value> items;
    items.reserve(v.get_array().size());
    for (const json::value& item : v.get_array()) {
      auto decoded = value_from_typed_json(item);
      if (!decoded.ok()) return decoded;
      items.push_back(std::move(decoded).value());
    }
    return Value::from_list(std::move(items));
  }
  if (type == "map") {
    if (!v.is_array()) return bad(type, "expected an array of [key, value] pairs");
    std::vector<std::pair<Value, Value>> entries;
    entries.reserve(v.get_array().size());
    for (const json::value& pair : v.get_array()) {
      const json::array* kv = pair.if_array();
      if (kv == nullptr || kv->size() != 2)
        return bad(type, "each entry must be a [key, value] pair");
      auto key = value_from_typed_json((*kv)[0]);
      if (!key.ok()) return key;
      auto value = value_from_typed_json((*kv)[1]);
      if (!value.ok()) return value;
      entries.emplace_back(std::move(key).value(), std::move(value).value());
    }
    return Value::from_map(std::move(entries));
  }
  return invalid_argument("unknown value type '" + std::string(type) + "'");
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

namespace {

void append_integer(std::string& out, std::string_view type, bool small,
                    const std::string& digits) {
  out += "{\"type\": \"";
  out += type;
  out += "\", \"value\": ";
  if (small) {
    out += digits;
  } else {
    out += '"' + digits + '"';
  }
  out += '}';
}

}  // namespace

void append_typed_json(std::string& out, const Value& value) {
  switch (value.kind()) {
    case ValueKind::kNull:
      out += R"({"type": "null", "value": null})";
      return;
    case ValueKind::kBool:
      out += value.as_bool() ? R"({"type": "bool", "value": true})"
                             : R"({"type": "bool", "value": false})";
      return;
    case ValueKind::kInt: {
      const std::int64_t n = value.as_int();
      const bool small =
          n >= -static_cast<std::int64_t>(kTwoTo53) && n <= static_cast<std::int64_t>(kTwoTo53);
      append_integer(out, "int", small, std::to_string(n));
      return;
    }
    case ValueKind::kUint:
      append_integer(out, "uint", value.as_uint() <= kTwoTo53, std::to_string(value.as_uint()));
      return;
    case ValueKind::kDouble: {
      const double d = value.as_double();
      out += R"({"type": "double", "value": )";
      if (std::isnan(d)) {
        out += "\"NaN\"";
      } else if (std::isinf(d)) {
        out += d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
      } else {
        const std::string text = shortest_double(d);
        out += text;
        if (text.find_first_of(".e") == std::string::npos) out += ".0";  // stays a JSON double
      }
      out += '}';
      return;
    }
    case ValueKind::kString:
      out += R"({"type": "string", "value": )";
      append_json_string(out, value.as_string());
      out += '}';
      return;
    case ValueKind::kBytes:
      out += R"({"type": "bytes", "value": ")";
      out += base64_encode(value.as_bytes());
      out += "\"}";
      return;
    case ValueKind::kList: {
      out += R"({"type": "list", "value": [)";
      bool first = true;
      for (const Value& item : value.as_list()) {
        if (!first) out += ", ";
        first = false;
        append_typed_json(out, item);
      }
      out += "]}";
      return;
    }
    case ValueKind::kMap: {
      out += R"({"type": "map", "value": [)";
      bool first = true;
      for (const auto& [k, v] : value.as_map().entries()) {
        if (!first) out += ", ";
        first = false;
        out += '[';
        append_typed_json(out, k);
        out += ", ";
        append_typed_json(out, v);
        out += ']';
      }
      out += "]}";
      return;
    }
  }
}

}  // namespace holdfast::cel
