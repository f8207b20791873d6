/* UTF-8 helpers for the CEL engine.
 *
 * CEL strings are sequences of Unicode code points; the engine stores them as UTF-8 and keeps
 * one invariant: every string Value holds valid UTF-8 (no surrogates, nothing above U+10FFFF,
 * no overlong forms). The source text is validated once at compile time, string(bytes) and the
 * JSON bindings validate their input, and every operation on strings (concatenation, literal
 * decoding) preserves validity. That invariant is why size() can count code points by counting
 * the bytes that are not continuation bytes.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text.h"

namespace holdfast::cel {

// Validity is the server's one UTF-8 check (core/text.h).
using holdfast::find_invalid_utf8;
using holdfast::is_valid_utf8;

// The number of code points in valid UTF-8 `text`.
std::size_t count_code_points(std::string_view text);

// Appends the UTF-8 encoding of `code_point`. REQUIRES: a Unicode scalar value
// (<= 0x10FFFF and not a surrogate).
void append_utf8(std::string& out, char32_t code_point);

inline bool is_scalar_value(std::uint32_t code_point) {
  return code_point <= 0x10FFFF && (code_point < 0xD800 || code_point > 0xDFFF);
}

}  // namespace holdfast::cel
