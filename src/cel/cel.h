/* The CEL (Common Expression Language) engine: the public API.
 *
 * Lifecycle:
 *   1. compile(source) once, e.g. when a rule set is pushed. It parses, resolves every call and
 *      macro, and pre-compiles literal regular expressions. Syntax errors come back as
 *      INVALID_ARGUMENT with a message naming the position: "1:14: unexpected token ')'".
 *   2. Bind the inputs in an Activation (variables and host functions).
 *   3. program.evaluate(activation) as often as needed, from any number of threads. It never
 *      parses; rules such as record.key.startsWith('user:' + user.userId + ':') evaluate
 *      without heap allocation. Runtime errors (division by zero, a missing key, an unknown
 *      variable or function, a budget overrun, ...) come back as INVALID_ARGUMENT with the
 *      position of the failing operation in the message and as offset/line/column details.
 *
 * The language subset and its semantics are described in docs/cel.md; the limits in limits.h.
 */
#pragma once

#include <memory>
#include <string_view>

#include "cel/activation.h"
#include "cel/format.h"
#include "cel/limits.h"
#include "cel/value.h"
#include "core/error.h"

namespace holdfast::cel {

struct CompiledExpression;  // internal: source map and syntax tree

// A compiled expression. Immutable and cheap to copy (copies share the compiled form).
class Program {
 public:
  // The value of the expression, or an evaluation error whose message starts with
  // "line:column: ". Thread-safe. `activation` must outlive the call only.
  Result<Value> evaluate(const Activation& activation,
                         const EvalLimits& limits = EvalLimits()) const;

  // The source text the program was compiled from.
  std::string_view source() const;

 private:
  friend Result<Program> compile(std::string_view source);
  explicit Program(std::shared_ptr<const CompiledExpression> compiled)
      : compiled_(std::move(compiled)) {}

  std::shared_ptr<const CompiledExpression> compiled_;
};

// Compiles `source` (UTF-8, at most kMaxSourceBytes, nesting at most kMaxNestingDepth).
// Fails with INVALID_ARGUMENT naming the position of the first error.
Result<Program> compile(std::string_view source);

}  // namespace holdfast::cel
