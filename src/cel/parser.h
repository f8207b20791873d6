/* The CEL parser: tokens -> syntax tree (ast.h), by recursive descent over the grammar of the
 * language definition:
 *
 *   Expr           = ConditionalOr ["?" ConditionalOr ":" Expr]
 *   ConditionalOr  = [ConditionalOr "||"] ConditionalAnd
 *   ConditionalAnd = [ConditionalAnd "&&"] Relation
 *   Relation       = [Relation ("<"|"<="|">="|">"|"=="|"!="|"in")] Addition
 *   Addition       = [Addition ("+"|"-")] Multiplication
 *   Multiplication = [Multiplication ("*"|"/"|"%")] Unary
 *   Unary          = Member | "!" {"!"} Member | "-" {"-"} Member
 *   Member         = Primary | Member "." IDENT ["(" [ExprList] ")"] | Member "[" Expr "]"
 *   Primary        = ["."] IDENT ["(" [ExprList] ")"] | "(" Expr ")" | "[" [ExprList] [","] "]"
 *                  | "{" [MapInits] [","] "}" | LITERAL
 *
 * Chains of || and && and of + are flattened into one n-ary node: a rule listing a hundred
 * alternatives stays shallow, and string concatenation can size its result once. A '-'
 * directly before a numeric literal is folded into it, so -9223372036854775808 is the int
 * minimum rather than an overflow. Message construction (Member "{" ... "}") is not in the
 * subset and is rejected. Reserved words (as, break, ... while) cannot name variables or
 * functions but may follow a '.' as map field names.
 */
#pragma once

#include <vector>

#include "cel/ast.h"
#include "cel/source.h"
#include "cel/token.h"
#include "core/error.h"

namespace holdfast::cel {

// The tree for the whole token list, or the first syntax error ("line:col: ...").
// Enforces kMaxNestingDepth. Macro variables are resolved before returning.
Result<NodePtr> parse(const std::vector<Token>& tokens, const SourceMap& map);

}  // namespace holdfast::cel
