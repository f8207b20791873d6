/* Standard base64 (RFC 4648 section 4, alphabet A-Z a-z 0-9 + /), as the evaluator protocol
 * encodes bytes values.
 */
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace holdfast::cel {

// Padded encoding: "AP8=" for the bytes 00 ff.
std::string base64_encode(std::string_view bytes);

// Accepts padded or unpadded input; nullopt on any character outside the alphabet, misplaced
// padding, or an impossible length.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace holdfast::cel
