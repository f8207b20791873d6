/* Activation: what an expression's free names mean during one evaluation.
 *
 * Variables bind names to Values; host functions bind names to C++ callables that CEL calls
 * as global functions, e.g. the server's isMemberOf(type, id). Lookups are linear over the
 * bindings: activations hold a handful of names, and a short vector beats hashing there. An
 * Activation may be reused across evaluations: binding an existing name replaces its value in
 * place.
 */
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cel/value.h"
#include "core/error.h"

namespace holdfast::cel {

// A host function. Receives the evaluated arguments (never errors: CEL calls are strict) and
// returns a value or an error; the error's message is reported with the call's position.
// Must be safe to call from whichever threads evaluate programs with this activation.
using Function = std::function<Result<Value>(std::span<const Value> args)>;

class Activation {
 public:
  // Binds `name` to `value`, replacing any earlier value of that name.
  void bind(std::string_view name, Value value);
  // Binds the global function `name`, replacing any earlier function of that name. Names of
  // the standard functions (size, int, matches, ...) and macros cannot be overridden: calls
  // to them never reach the activation.
  void bind_function(std::string_view name, Function function);

  // The bound value or function, or nullptr.
  const Value* find_variable(std::string_view name) const;
  const Function* find_function(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, Value>> variables_;
  std::vector<std::pair<std::string, Function>> functions_;
};

}  // namespace holdfast::cel
