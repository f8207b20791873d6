/* The CEL lexer; see lexer.h. One pass, no backtracking beyond a three-character peek. */
#include "cel/lexer.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "cel/literals.h"

namespace holdfast::cel {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_quote(char c) { return c == '\'' || c == '"'; }
bool is_raw_prefix(char c) { return c == 'r' || c == 'R'; }
bool is_bytes_prefix(char c) { return c == 'b' || c == 'B'; }

class Lexer {
 public:
  Lexer(std::string_view src, const SourceMap& map) : src_(src), map_(map) {}

  Result<std::vector<Token>> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_space_and_comments();
      if (pos_ >= src_.size()) break;
      auto token = next();
      if (!token.ok()) return std::move(token).error();
      tokens.push_back(std::move(token).value());
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.offset = static_cast<std::uint32_t>(src_.size());
    tokens.push_back(std::move(end));
    return tokens;
  }

 private:
  char at(std::size_t i) const { return i < src_.size() ? src_[i] : '\0'; }

  void skip_space_and_comments() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && at(pos_ + 1) == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n' && src_[pos_] != '\r') ++pos_;
      } else {
        return;
      }
    }
  }

  Token make(TokenKind kind, std::uint32_t start) const {
    Token t;
    t.kind = kind;
    t.offset = start;
    t.length = pos_ - start;
    return t;
  }

  Result<Token> next() {
    const std::uint32_t start = pos_;
    const char c = src_[pos_];
    if (starts_quoted_literal()) return quoted(start);
    if (is_ident_start(c)) return identifier(start);
    if (is_digit(c) || (c == '.' && is_digit(at(pos_ + 1)))) return number(start);
    return punctuation(start);
  }

  // A quote, or one or two prefix letters (at most one r/R and one b/B) and a quote.
  bool starts_quoted_literal() const {
    const char c0 = at(pos_), c1 = at(pos_ + 1), c2 = at(pos_ + 2);
    if (is_quote(c0)) return true;
    if ((is_raw_prefix(c0) || is_bytes_prefix(c0)) && is_quote(c1)) return true;
    return ((is_raw_prefix(c0) && is_bytes_prefix(c1)) ||
            (is_bytes_prefix(c0) && is_raw_prefix(c1))) &&
           is_quote(c2);
  }

  Result<Token> quoted(std::uint32_t start) {
    QuotedLiteral lit = decode_quoted(src_, start);
    if (!lit.ok) return map_.error_at(lit.error.offset, lit.error.message);
    pos_ = lit.end;
    Token t = make(lit.is_bytes ? TokenKind::kBytes : TokenKind::kString, start);
    t.text = std::move(lit.value);
    return t;
  }

  Result<Token> identifier(std::uint32_t start) {
    while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
    const std::string_view word = src_.substr(start, pos_ - start);
    TokenKind kind = TokenKind::kIdent;
    if (word == "true") kind = TokenKind::kTrue;
    if (word == "false") kind = TokenKind::kFalse;
    if (word == "null") kind = TokenKind::kNull;
    if (word == "in") kind = TokenKind::kIn;
    Token t = make(kind, start);
    if (kind == TokenKind::kIdent) t.text = std::string(word);
    return t;
  }

  Result<Token> number(std::uint32_t start) {
    if (src_[pos_] == '0' && (at(pos_ + 1) == 'x' || at(pos_ + 1) == 'X') && is_hex(at(pos_ + 2))) {
      pos_ += 2;
      std::uint64_t value = 0;
      bool overflow = false;
      for (; pos_ < src_.size() && is_hex(src_[pos_]); ++pos_) {
        const char h = src_[pos_];
        const int digit = is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10;
        if (value > (std::numeric_limits<std::uint64_t>::max() >> 4)) overflow = true;
        value = (value << 4) | static_cast<std::uint64_t>(digit);
      }
      if (overflow) return map_.error_at(start, "integer literal out of range");
      return integer(start, value);
    }
    bool is_double = false;
    while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
    if (at(pos_) == '.' && is_digit(at(pos_ + 1))) {
      is_double = true;
      ++pos_;
      while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
    }
    const char e1 = at(pos_ + 1);
    if ((at(pos_) == 'e' || at(pos_) == 'E') &&
        (is_digit(e1) || ((e1 == '+' || e1 == '-') && is_digit(at(pos_ + 2))))) {
      is_double = true;
      pos_ += 2;
      while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
    }
    const std::string_view text = src_.substr(start, pos_ - start);
    if (is_double) {
      Token t = make(TokenKind::kDouble, start);
      t.real = parse_double(text);
      return t;
    }
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return map_.error_at(start, "integer literal out of range");
    }
    return integer(start, value);
  }

  // Shared tail of decimal and hex integers: the optional u/U suffix.
  Token integer(std::uint32_t start, std::uint64_t value) {
    TokenKind kind = TokenKind::kInt;
    if (at(pos_) == 'u' || at(pos_) == 'U') {
      kind = TokenKind::kUint;
      ++pos_;
    }
    Token t = make(kind, start);
    t.number = value;
    return t;
  }

  static double parse_double(std::string_view text) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // from_chars reports overflow and underflow without a value; strtod rounds them to
      // infinity or zero as IEEE does (the text holds only digits, '.', 'e' and a sign, so
      // the locale's decimal point is the only dependency, and the process uses "C").
      return std::strtod(std::string(text).c_str(), nullptr);
    }
    return value;
  }

  Result<Token> punctuation(std::uint32_t start) {
    const char c = src_[pos_];
    const char n = at(pos_ + 1);
    auto one = [&](TokenKind kind) {
      pos_ += 1;
      return make(kind, start);
    };
    auto two = [&](TokenKind kind) {
      pos_ += 2;
      return make(kind, start);
    };
    switch (c) {
      case '(':
        return one(TokenKind::kLParen);
      case ')':
        return one(TokenKind::kRParen);
      case '[':
        return one(TokenKind::kLBracket);
      case ']':
        return one(TokenKind::kRBracket);
      case '{':
        return one(TokenKind::kLBrace);
      case '}':
        return one(TokenKind::kRBrace);
      case '.':
        return one(TokenKind::kDot);
      case ',':
        return one(TokenKind::kComma);
      case ':':
        return one(TokenKind::kColon);
      case '?':
        return one(TokenKind::kQuestion);
      case '+':
        return one(TokenKind::kPlus);
      case '-':
        return one(TokenKind::kMinus);
      case '*':
        return one(TokenKind::kStar);
      case '/':
        return one(TokenKind::kSlash);
      case '%':
        return one(TokenKind::kPercent);
      case '!':
        return n == '=' ? two(TokenKind::kNotEqual) : one(TokenKind::kBang);
      case '<':
        return n == '=' ? two(TokenKind::kLessEqual) : one(TokenKind::kLess);
      case '>':
        return n == '=' ? two(TokenKind::kGreaterEqual) : one(TokenKind::kGreater);
      case '=':
        if (n == '=') return two(TokenKind::kEqual);
        break;
      case '&':
        if (n == '&') return two(TokenKind::kAnd);
        break;
      case '|':
        if (n == '|') return two(TokenKind::kOr);
        break;
      default:
        break;
    }
    return map_.error_at(start, "unexpected character " + describe_char(start));
  }

  std::string describe_char(std::uint32_t offset) const {
    const auto c = static_cast<unsigned char>(src_[offset]);
    if (c >= 0x21 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    if (c < 0x80) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "U+%04X", c);
      return buf;
    }
    std::uint32_t end = offset + 1;  // copy the whole UTF-8 sequence so the message stays valid
    while (end < src_.size() && (static_cast<unsigned char>(src_[end]) & 0xC0) == 0x80) ++end;
    return "'" + std::string(src_.substr(offset, end - offset)) + "'";
  }

  std::string_view src_;
  const SourceMap& map_;
  std::uint32_t pos_ = 0;
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source, const SourceMap& map) {
  return Lexer(source, map).run();
}

}  // namespace holdfast::cel
