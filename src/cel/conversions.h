/* The CEL type conversion functions int(), uint(), double(), string(), bool(), bytes() and
 * dyn(), applied to an evaluated argument.
 *
 *   int(x)     int; uint <= 2^63-1; double truncated toward zero, strictly inside
 *              (-2^63, 2^63) (the bounds themselves are range errors, as upstream); decimal
 *              string with optional '-'
 *   uint(x)    uint; int >= 0; double truncated, in [0, 2^64); decimal string
 *   double(x)  double; int and uint (rounded to nearest); string in decimal or exponent form,
 *              or NaN / Infinity / -Infinity
 *   string(x)  string; int, uint in decimal; double in the shortest form that reads back as
 *              the same double ("123.456", "1e+06", "Infinity"); bool; bytes that are valid
 *              UTF-8
 *   bool(x)    bool; the strings true/false, True/False, TRUE/FALSE, t/f, 1/0
 *   bytes(x)   bytes; string (its UTF-8)
 *   dyn(x)     x (a type-checker hint; a no-op at run time)
 * A value outside the target range is a "range error"; any other kind is "no matching
 * overload".
 */
#pragma once

#include <string>

#include "cel/ast.h"
#include "cel/value.h"
#include "core/error.h"

namespace holdfast::cel {

// REQUIRES: `conversion` is one of kInt, kUint, kDouble, kString, kBool, kBytes, kDyn.
Result<Value> convert(Builtin conversion, const Value& argument);

// string(double): Go's %g with the shortest round-trip precision; see conversions.h.
std::string double_to_cel_string(double value);

}  // namespace holdfast::cel
