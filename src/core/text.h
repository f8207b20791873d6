// Text helpers every module shares: UTF-8 validity, hex, JSON string quoting, and
// percent-decoding. One implementation each.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace holdfast {

// The byte offset of the first invalid UTF-8 sequence in `text` (overlong forms, surrogates
// and code points above U+10FFFF are invalid), or npos when it is all valid.
std::size_t find_invalid_utf8(std::string_view text);
inline bool is_valid_utf8(std::string_view text) {
  return find_invalid_utf8(text) == std::string_view::npos;
}
// `text` with each byte that does not start a valid sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

// Lower-case hex of every byte; hex_decode accepts exactly that form (nullopt otherwise).
std::string hex_encode(std::string_view bytes);
std::optional<std::string> hex_decode(std::string_view hex);
// The value of one hex digit of either case, or -1.
int hex_digit(char c);

// Appends `text` as a JSON string, quotes included ('"', '\\' and control bytes escaped).
void append_json_quoted(std::string& out, std::string_view text);

// `text` as one word for a POSIX shell: in single quotes, a quote inside written '\''.
std::string shell_quoted(std::string_view text);

// URL percent-decoding as in a query string: "%41" is 'A' and '+' is a space (in a path
// segment, plus_is_space false, '+' is itself); a '%' not followed by two hex digits stays as
// it is.
std::string percent_decode(std::string_view text, bool plus_is_space = true);

}  // namespace holdfast
