// A JSON document parsed as boost::json::parse parses it, except that an object naming a key
// twice is refused. Boost.JSON keeps the last of two equal keys; a client that sent two would
// not learn which one counted, so the body is refused as a query string naming a parameter
// twice is (docs/http.md).
#pragma once

#include <boost/json/value.hpp>
#include <string_view>

#include "core/error.h"

namespace holdfast::http {

// The document; or INVALID_ARGUMENT "body is not valid JSON: ...", or "<key> is given twice"
// with details.field = the key, at any depth.
Result<boost::json::value> parse_json_strict(std::string_view body);

}  // namespace holdfast::http
