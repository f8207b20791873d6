/* Typed JSON <-> Value, the value encoding of the evaluator protocol
 * (/work/shared/cel-conformance/README.md, "Typed values"):
 *
 *   {"type": "int" | "uint", "value": 42 or "18446744073709551615"}   (strings beyond 2^53)
 *   {"type": "double", "value": 1.5 or "NaN" | "Infinity" | "-Infinity"}
 *   {"type": "string", "value": "text"}      {"type": "bool", "value": true}
 *   {"type": "null", "value": null}          {"type": "bytes", "value": "<padded base64>"}
 *   {"type": "list", "value": [TYPED, ...]}
 *   {"type": "map", "value": [[TYPED key, TYPED value], ...]}
 */
#pragma once

#include <string>

#include <boost/json/fwd.hpp>

#include "cel/value.h"
#include "core/error.h"

namespace holdfast::cel {

// Decodes one typed value; INVALID_ARGUMENT describing the first malformed part.
Result<Value> value_from_typed_json(const boost::json::value& typed);

// Appends the typed encoding of `value` as JSON text. Doubles print with round-trip precision.
void append_typed_json(std::string& out, const Value& value);

// Appends `text` as a JSON string literal (quotes included). REQUIRES: valid UTF-8.
void append_json_string(std::string& out, std::string_view text);

}  // namespace holdfast::cel
