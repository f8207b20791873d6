// RESP encoder and parser: see resp.h.
#include "resp.h"

#include <charconv>

namespace holdfast::bench::resp {

namespace {

// Reads the line that starts at `pos` (after the type byte). Returns the position just past
// its CRLF, or npos when the line is not complete yet.
std::size_t line_end(std::string_view in, std::size_t pos, std::string_view& line) {
  const std::size_t cr = in.find('\r', pos);
  if (cr == std::string_view::npos || cr + 1 >= in.size()) return std::string_view::npos;
  line = in.substr(pos, cr - pos);
  return cr + 2;
}

bool parse_int(std::string_view s, std::int64_t& v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

ParseResult parse_reply(std::string_view in, std::vector<Token>& tokens) {
  tokens.clear();
  std::size_t pos = 0;
  // Values still owed by the aggregates opened so far; the reply ends when none are owed.
  std::int64_t owed = 1;
  bool leading_attribute = false;
  while (owed > 0) {
    if (pos >= in.size()) return {ParseStatus::kIncomplete};
    const char kind = in[pos];
    std::string_view line;
    const std::size_t next = line_end(in, pos + 1, line);
    if (next == std::string_view::npos) return {ParseStatus::kIncomplete};
    Token t{Type::kNull, 0, {}};
    std::int64_t n = 0;
    --owed;
    switch (kind) {
      case '+':
        t = {Type::kSimpleString, 0, line};
        pos = next;
        break;
      case '-':
        t = {Type::kError, 0, line};
        pos = next;
        break;
      case ':':
        if (!parse_int(line, n)) return {ParseStatus::kMalformed};
        t = {Type::kInteger, n, {}};
        pos = next;
        break;
      case '#':
        t = {Type::kBoolean, line == "t" ? 1 : 0, {}};
        pos = next;
        break;
      case ',':
        t = {Type::kDouble, 0, line};
        pos = next;
        break;
      case '(':
        t = {Type::kBigNumber, 0, line};
        pos = next;
        break;
      case '_':
        t = {Type::kNull, 0, {}};
        pos = next;
        break;
      case '$':
      case '=':
      case '!': {
        if (!parse_int(line, n)) return {ParseStatus::kMalformed};
        if (n < 0) {
          t = {Type::kNull, 0, {}};
          pos = next;
          break;
        }
        const std::size_t len = static_cast<std::size_t>(n);
        if (in.size() < next + len + 2) return {ParseStatus::kIncomplete};
        if (in[next + len] != '\r' || in[next + len + 1] != '\n') return {ParseStatus::kMalformed};
        t = {kind == '!' ? Type::kError : Type::kBulk, 0, in.substr(next, len)};
        pos = next + len + 2;
        break;
      }
      case '*':
      case '~':
      case '>':
      case '%':
      case '|': {
        if (!parse_int(line, n)) return {ParseStatus::kMalformed};
        pos = next;
        if (n < 0) {
          t = {Type::kNull, 0, {}};
          break;
        }
        const bool is_map = kind == '%' || kind == '|';
        t = {is_map ? Type::kMap : Type::kArray, n, {}};
        owed += is_map ? 2 * n : n;
        if (kind == '|') {
          // An attribute decorates the value that follows it; that value is still owed.
          ++owed;
          leading_attribute = leading_attribute || tokens.empty();
        }
        break;
      }
      default:
        return {ParseStatus::kMalformed};
    }
    tokens.push_back(t);
  }
  if (leading_attribute) {
    // Drop the leading attribute: its subtree is followed by the real reply.
    const std::size_t real = skip(tokens, 0);
    tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(real));
  }
  return {ParseStatus::kComplete, pos};
}

std::size_t skip(const std::vector<Token>& tokens, std::size_t i) {
  std::int64_t owed = 1;
  while (owed > 0 && i < tokens.size()) {
    const Token& t = tokens[i++];
    --owed;
    if (t.type == Type::kArray) owed += t.integer;
    if (t.type == Type::kMap) owed += 2 * t.integer;
  }
  return i;
}

std::optional<Token> field(const std::vector<Token>& tokens, std::string_view name) {
  if (tokens.empty()) return std::nullopt;
  const Token& top = tokens[0];
  std::int64_t pairs = 0;
  if (top.type == Type::kMap)
    pairs = top.integer;
  else if (top.type == Type::kArray)
    pairs = top.integer / 2;
  else
    return std::nullopt;
  std::size_t i = 1;
  for (std::int64_t p = 0; p < pairs && i < tokens.size(); ++p) {
    const Token& k = tokens[i];
    const std::size_t value = skip(tokens, i);
    if (value >= tokens.size()) return std::nullopt;
    if ((k.type == Type::kBulk || k.type == Type::kSimpleString) && k.text == name) {
      return tokens[value];
    }
    i = skip(tokens, value);
  }
  return std::nullopt;
}

bool truthy(const Token& t) {
  switch (t.type) {
    case Type::kInteger:
    case Type::kBoolean:
      return t.integer == 1;
    case Type::kBulk:
    case Type::kSimpleString:
      return t.text == "1" || t.text == "true" || t.text == "OK";
    case Type::kError:
    case Type::kNull:
    case Type::kDouble:
    case Type::kBigNumber:
    case Type::kArray:
    case Type::kMap:
      return false;
  }
  return false;
}

}  // namespace holdfast::bench::resp
