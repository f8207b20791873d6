/* Tokens produced by the CEL lexer (lexer.h) and consumed by the parser (parser.h). */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace holdfast::cel {

enum class TokenKind : std::uint8_t {
  kEnd,
  kIdent,   // text: the name (reserved words included; the parser decides where they fit)
  kInt,     // number: the magnitude (the sign is a separate '-' token)
  kUint,    // number: the value
  kDouble,  // real: the value
  kString,  // text: the decoded UTF-8
  kBytes,   // text: the decoded bytes
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kBang,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kEqual,
  kNotEqual,
  kAnd,
  kOr,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::uint32_t offset = 0;  // byte offset of the first character in the source
  std::uint32_t length = 0;  // bytes of source text
  std::uint64_t number = 0;
  double real = 0;
  std::string text;
};

}  // namespace holdfast::cel
