/* The limits of the CEL engine, in one place because the parser, the evaluator, the fuzz
 * target and docs/cel.md all refer to them.
 *
 * Rules are written by administrators but still untrusted input to the server: a deeply
 * nested expression must not overflow the stack, and a macro chain must not run for minutes.
 * The language definition asks for at least 32 levels of nesting and 32 repetitions of each
 * construct; the limits below leave generous room above that.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace holdfast::cel {

// Longest accepted expression text, in bytes.
inline constexpr std::size_t kMaxSourceBytes = 64 * 1024;

// Deepest accepted syntax tree: parentheses, operands of operator chains (a+b+c is depth 3
// for its leftmost operand), call arguments, macro bodies. Also bounds the parser's and the
// evaluator's recursion, so it is what keeps hostile input from exhausting the stack.
inline constexpr int kMaxNestingDepth = 128;

// Per-evaluation budget. A step is one syntax node evaluated, one macro iteration, or
// kWorkUnitsPerStep units of work inside an operation (comparing, scanning or searching
// values, charged by Value::weight and, for contains(), by the product of the two lengths as
// the language definition's cost model says); bytes count every string, bytes, list and map
// built during the evaluation. Exceeding either is an evaluation error ("evaluation exceeded
// its step limit") that ends the evaluation: || and && do not absorb it. Typical access
// rules use tens of steps and no bytes.
inline constexpr std::uint64_t kWorkUnitsPerStep = 16;

struct EvalLimits {
  std::uint64_t max_steps = 1'000'000;
  std::uint64_t max_bytes = 16u * 1024 * 1024;
};

}  // namespace holdfast::cel
