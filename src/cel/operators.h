/* CEL operators on evaluated operands: arithmetic, negation, not, comparison and `in`.
 *
 * These are the pure parts of evaluation; they know nothing of positions, and their errors
 * carry a bare message that the evaluator prefixes with the operator's position.
 *
 * Arithmetic is defined per kind with no implicit conversion (1 + 1u is an error), as CEL
 * specifies:
 *   int    + - * / %   errors on overflow (including MIN / -1 and MIN % -1) and on / or % by 0
 *   uint   + - * / %   errors on overflow (0u - 1u) and on / or % by 0
 *   double + - * /     IEEE: 1.0 / 0.0 is +Infinity, overflow gives an infinity; no %
 *   string + string, bytes + bytes, list + list: concatenation
 * Comparison uses values_equal / compare_values (value.h): == and != never fail; ordering of
 * kinds without an order is an error; any ordering with NaN is false.
 */
#pragma once

#include "cel/ast.h"
#include "cel/value.h"
#include "core/error.h"

namespace holdfast::cel {

Result<Value> add_values(const Value& a, const Value& b);
Result<Value> apply_binary(BinaryOp op, const Value& a, const Value& b);
Result<Value> negate_value(const Value& a);
Result<Value> not_value(const Value& a);

// The operator's spelling, e.g. "<=" for kLessEqual.
std::string_view binary_op_name(BinaryOp op);

}  // namespace holdfast::cel
