/* CEL-literal rendering of values; see format.h. */
#include "cel/format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace holdfast::cel {
namespace {

void append_escaped(std::string& out, std::string_view text, bool bytes) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    // Strings are valid UTF-8 and keep their non-ASCII text; bytes show every non-ASCII octet.
    if (u < 0x20 || u == 0x7F || (bytes && u >= 0x80)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
}

void append_value(std::string& out, const Value& value) {
  switch (value.kind()) {
    case ValueKind::kNull:
      out += "null";
      return;
    case ValueKind::kBool:
      out += value.as_bool() ? "true" : "false";
      return;
    case ValueKind::kInt:
      out += std::to_string(value.as_int());
      return;
    case ValueKind::kUint:
      out += std::to_string(value.as_uint()) + "u";
      return;
    case ValueKind::kDouble: {
      const double d = value.as_double();
      if (std::isnan(d)) {
        out += "double(\"NaN\")";
      } else if (std::isinf(d)) {
        out += d > 0 ? "double(\"Infinity\")" : "double(\"-Infinity\")";
      } else {
        const std::string text = shortest_double(d);
        out += text;
        if (text.find_first_of(".e") == std::string::npos) out += ".0";
      }
      return;
    }
    case ValueKind::kString:
      out += '"';
      append_escaped(out, value.as_string(), false);
      out += '"';
      return;
    case ValueKind::kBytes:
      out += "b\"";
      append_escaped(out, value.as_bytes(), true);
      out += '"';
      return;
    case ValueKind::kList: {
      out += '[';
      bool first = true;
      for (const Value& item : value.as_list()) {
        if (!first) out += ", ";
        first = false;
        append_value(out, item);
      }
      out += ']';
      return;
    }
    case ValueKind::kMap: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : value.as_map().entries()) {
        if (!first) out += ", ";
        first = false;
        append_value(out, k);
        out += ": ";
        append_value(out, v);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string shortest_double(double value) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, result.ptr);
}

std::string format_value(const Value& value) {
  std::string out;
  append_value(out, value);
  return out;
}

}  // namespace holdfast::cel
