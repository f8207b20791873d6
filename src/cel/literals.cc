/* Quoted string and bytes literal decoding; see literals.h for the accepted forms. */
#include "cel/literals.h"

#include "cel/utf8.h"

namespace holdfast::cel {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `count` hex digits at `pos`; -1 when any is missing or not a hex digit.
std::int64_t read_hex(std::string_view src, std::uint32_t pos, int count) {
  if (pos > src.size() || src.size() - pos < static_cast<std::size_t>(count)) return -1;
  std::int64_t value = 0;
  for (int k = 0; k < count; ++k) {
    const int d = hex_digit(src[pos + k]);
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

std::string escape_name(std::string_view src, std::uint32_t pos) {
  // Quote the escape as written, e.g. '\q' (the character after the backslash may be
  // multi-byte UTF-8; copy its whole sequence so the message stays valid UTF-8).
  std::uint32_t end = pos + 2;
  while (end < src.size() && (static_cast<unsigned char>(src[end]) & 0xC0) == 0x80) ++end;
  return "'" + std::string(src.substr(pos, end - pos)) + "'";
}

}  // namespace

QuotedLiteral decode_quoted(std::string_view src, std::uint32_t offset) {
  QuotedLiteral out;
  std::uint32_t i = offset;
  bool raw = false;
  while (i < src.size() && src[i] != '\'' && src[i] != '"') {
    if (src[i] == 'r' || src[i] == 'R') raw = true;
    if (src[i] == 'b' || src[i] == 'B') out.is_bytes = true;
    ++i;
  }
  const char quote = src[i];
  const std::string delimiter(3, quote);
  const bool triple = src.substr(i, 3) == delimiter;
  i += triple ? 3 : 1;

  auto fail = [&](std::uint32_t at, std::string message) {
    out.ok = false;
    out.error = LiteralError{at, std::move(message)};
    return out;
  };
  // In strings a numeric escape is a code point; in bytes it is one octet.
  auto emit = [&](std::uint32_t value) {
    if (out.is_bytes) {
      out.value.push_back(static_cast<char>(value));
    } else {
      append_utf8(out.value, value);
    }
  };

  while (true) {
    if (i >= src.size()) return fail(offset, "unterminated string literal");
    const char c = src[i];
    if (c == quote) {
      if (!triple) {
        out.end = i + 1;
        out.ok = true;
        return out;
      }
      if (src.substr(i, 3) == delimiter) {
        out.end = i + 3;
        out.ok = true;
        return out;
      }
    }
    if (!triple && (c == '\n' || c == '\r')) {
      return fail(i, "newline in a quoted string; use \\n or a triple-quoted string");
    }
    if (c != '\\' || raw) {
      out.value.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= src.size()) return fail(offset, "unterminated string literal");
    const char e = src[i + 1];
    switch (e) {
      case '\\':
      case '?':
      case '"':
      case '\'':
      case '`':
        out.value.push_back(e);
        i += 2;
        break;
      case 'a':
        out.value.push_back('\a');
        i += 2;
        break;
      case 'b':
        out.value.push_back('\b');
        i += 2;
        break;
      case 'f':
        out.value.push_back('\f');
        i += 2;
        break;
      case 'n':
        out.value.push_back('\n');
        i += 2;
        break;
      case 'r':
        out.value.push_back('\r');
        i += 2;
        break;
      case 't':
        out.value.push_back('\t');
        i += 2;
        break;
      case 'v':
        out.value.push_back('\v');
        i += 2;
        break;
      case 'x':
      case 'X': {
        const std::int64_t value = read_hex(src, i + 2, 2);
        if (value < 0) return fail(i, "\\x must be followed by two hex digits");
        emit(static_cast<std::uint32_t>(value));
        i += 4;
        break;
      }
      case 'u':
      case 'U': {
        if (out.is_bytes) return fail(i, "\\u and \\U escapes are not allowed in bytes literals");
        const int digits = e == 'u' ? 4 : 8;
        const std::int64_t value = read_hex(src, i + 2, digits);
        if (value < 0) {
          return fail(i, std::string("\\") + e + " must be followed by " + std::to_string(digits) +
                             " hex digits");
        }
        if (!is_scalar_value(static_cast<std::uint32_t>(value))) {
          return fail(i, "escape " + std::string(src.substr(i, 2 + digits)) +
                             " is not a Unicode scalar value");
        }
        append_utf8(out.value, static_cast<char32_t>(value));
        i += 2 + digits;
        break;
      }
      case '0':
      case '1':
      case '2':
      case '3': {
        std::uint32_t value = static_cast<std::uint32_t>(e - '0');
        for (std::uint32_t k = 2; k < 4; ++k) {
          const char d = i + k < src.size() ? src[i + k] : '\0';
          if (d < '0' || d > '7')
            return fail(i, "octal escape must be three digits \\000 to \\377");
          value = value * 8 + static_cast<std::uint32_t>(d - '0');
        }
        emit(value);
        i += 4;
        break;
      }
      default:
        return fail(i, "invalid escape sequence " + escape_name(src, i));
    }
  }
}

}  // namespace holdfast::cel
