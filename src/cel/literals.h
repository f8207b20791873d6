/* Decoding of CEL literal text: quoted strings and bytes (with escapes) and numbers.
 *
 * The lexer finds where a literal starts and calls these; they consume the literal, return
 * its value, and report malformed input with the byte offset of the offending character.
 *
 * Quoted literals ('...', "...", '''...''', """...""", with optional r/R raw and b/B bytes
 * prefixes in either order). In a non-raw literal the escapes are \\ \? \" \' \` \a \b \f \n
 * \r \t \v, \xHH or \XHH, \uHHHH, \UHHHHHHHH and octal \[0-3][0-7][0-7]. In a string the
 * numeric escapes denote code points (so "\377" is U+00FF, encoded as two UTF-8 bytes); in
 * bytes \x and octal denote octets and \u / \U are not allowed. A raw literal keeps every
 * backslash as written and cannot contain its own quote character.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace holdfast::cel {

struct LiteralError {
  std::uint32_t offset;  // byte offset into the full source
  std::string message;
};

struct QuotedLiteral {
  bool ok = false;
  bool is_bytes = false;
  std::uint32_t end = 0;  // offset just past the closing quote
  std::string value;      // decoded text (UTF-8 for strings)
  LiteralError error{0, {}};
};

// Decodes the quoted literal starting at `offset` (at its prefix letters, if any).
// REQUIRES: `source` is valid UTF-8, and at `offset` there are at most two prefix letters
// (one of rR, one of bB) followed by a quote.
QuotedLiteral decode_quoted(std::string_view source, std::uint32_t offset);

}  // namespace holdfast::cel
