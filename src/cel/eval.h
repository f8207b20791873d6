/* The tree-walking evaluator.
 *
 * One Evaluator lives for one evaluation, on the caller's stack. eval(node) returns the node's
 * Value or an Error whose message already carries the position of the failing operation, so
 * errors pass upward unchanged. The rules it implements:
 *
 *   - Operands are evaluated left to right and strictly (an error in an operand is the
 *     result), except for the logical operators, the conditional and the macros.
 *   - a && b && ...: false if any operand is false, whatever errors the others produce;
 *     otherwise the first error (or non-bool) if any; otherwise true. || is the mirror image.
 *     This makes both commutative: `false && 1/0 > 0` and `1/0 > 0 && false` are both false.
 *   - c ? a : b evaluates only the chosen branch; c must be a bool.
 *   - Identifiers are macro variables (resolved at compile time to a slot) or Activation
 *     variables; an unbound name is an evaluation error.
 *   - Every node evaluated and every macro iteration costs one step of the EvalLimits budget;
 *     every string, bytes, list or map built costs its size in bytes. Running out of either
 *     ends the evaluation with an error that || and && do not absorb.
 *
 * The evaluator is split by concept: eval.cc (dispatch, names, selection, logic, literals),
 * eval_calls.cc (standard and host functions), eval_macros.cc (all/exists/exists_one/map/filter).
 */
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cel/activation.h"
#include "cel/ast.h"
#include "cel/limits.h"
#include "cel/source.h"
#include "cel/value.h"
#include "core/error.h"

namespace holdfast::cel {

// A value's kind by name, for error messages.
inline std::string kind_of(const Value& v) { return std::string(kind_name(v.kind())); }

class Evaluator {
 public:
  Evaluator(const SourceMap& map, const Activation& activation, const EvalLimits& limits)
      : map_(map),
        activation_(activation),
        steps_left_(limits.max_steps),
        bytes_left_(limits.max_bytes) {}

  Result<Value> eval(const Node& node);

 private:
  // Evaluates `node` without copying when its value already exists: a literal, a variable, or
  // an element reached from one of those by selection or indexing. Any other result is stored
  // in `scratch`. The pointer stays valid while `scratch` is left alone (and the program and
  // activation live). Copying a Value is cheap but not free (an atomic reference count), and
  // rules mostly read bindings, so the hot paths take references.
  Result<const Value*> eval_ref(const Node& node, Value& scratch);
  bool take_step() {
    if (steps_left_ == 0) return false;
    --steps_left_;
    return true;
  }

  // A string operand that may be assembled in a stack buffer instead of a new Value: used when
  // a concatenation feeds straight into startsWith/endsWith/contains/matches.
  struct StringOperand;

  Error error_at(const Node& node, std::string_view message) const {
    return map_.error_at(node.offset, message);
  }
  // Adds `node`'s position to an error from a position-free helper (operators, conversions).
  Result<Value> located(const Node& node, Result<Value> result) const;
  // Deduct from the byte budget, or from the step budget at kWorkUnitsPerStep units per step;
  // false (after which the caller fails with budget_error) when the budget runs out.
  bool charge_bytes(std::uint64_t bytes);
  bool charge_work(std::uint64_t units);
  Error budget_error(const Node& node, std::string_view what) const;

  Result<const Value*> identifier(const Node& node);
  Result<const Value*> select(const Node& node, Value& scratch);
  Result<const Value*> index(const Node& node, Value& scratch);
  Result<Value> has(const Node& node);
  Result<Value> list(const Node& node);
  Result<Value> map(const Node& node);
  Result<Value> logical(const Node& node, bool is_and);
  Result<Value> conditional(const Node& node);
  Result<Value> unary(const Node& node);
  Result<Value> binary(const Node& node);
  Result<Value> add(const Node& node);
  Result<Value> add_evaluated(const Node& node, std::span<const Value* const> operands);

  // eval_calls.cc
  Result<Value> builtin(const Node& node);
  Result<Value> string_predicate(const Node& node);
  Result<Value> host_call(const Node& node);
  Result<Value> unknown_method(const Node& node);
  Result<Ok> string_argument(const Node& node, StringOperand& out);
  Result<bool> matches(const Node& node, std::string_view text, std::string_view pattern);

  // eval_macros.cc
  Result<Value> comprehension(const Node& node);

  const SourceMap& map_;
  const Activation& activation_;
  std::uint64_t steps_left_;
  std::uint64_t bytes_left_;
  // The current element of each enclosing macro, by slot (macro nesting level). Macro nesting
  // is bounded by the tree depth, hence by kMaxNestingDepth.
  // Not initialised: a slot is always written by its macro before any identifier reads it.
  std::array<const Value*, kMaxNestingDepth> locals_;
};

}  // namespace holdfast::cel
