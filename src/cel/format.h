/* Human-readable rendering of CEL values in CEL literal syntax, for CLI output, logs and
 * error messages: true, 42, 42u, 1.5, "str", b"\x00\xff", [1, 2], {"a": 1}, null. A double
 * always shows a '.' or an exponent so it cannot be mistaken for an int (2.0, 1e+300); the
 * non-finite doubles, which have no literal, render as the conversion that produces them,
 * e.g. double("NaN").
 */
#pragma once

#include <string>

#include "cel/value.h"

namespace holdfast::cel {

std::string format_value(const Value& value);

// The shortest text that reads back as the same double, e.g. "0.1", "1e+300", "-0".
// REQUIRES: `value` is finite.
std::string shortest_double(double value);

}  // namespace holdfast::cel
