/* The CEL lexer: source text -> tokens.
 *
 * Recognises identifiers and the keywords true/false/null/in, decimal and hex integers with an
 * optional u/U suffix, doubles (digits with a fraction and/or exponent, or a leading '.'),
 * quoted literals (see literals.h), the operators and punctuation of the grammar, whitespace
 * (space, \t, \n, \r, \f) and // comments. A leading '-' is never part of a number token: the
 * parser folds it into the literal so that -9223372036854775808 is representable.
 */
#pragma once

#include <string_view>
#include <vector>

#include "cel/source.h"
#include "cel/token.h"
#include "core/error.h"

namespace holdfast::cel {

// All tokens of `source`, ending with one kEnd token. REQUIRES: `source` is valid UTF-8 and
// shorter than 4 GiB (positions are 32-bit); `map` describes `source`.
Result<std::vector<Token>> tokenize(std::string_view source, const SourceMap& map);

}  // namespace holdfast::cel
