/* Helpers shared by the CEL unit tests: run an expression and render its outcome as text, so
 * a test reads as `EXPECT_EQ(run("1 + 2"), "3")`. The rendering is format_value's CEL literal
 * syntax, which tells the kinds apart (3, 3u, 3.0, "3"); failures render as
 * "error: <message>" (evaluation) or "compile error: <message>".
 */
#pragma once

#include <string>
#include <string_view>

#include "cel/cel.h"
#include "cel/format.h"

namespace holdfast::cel::testing {

inline std::string run(std::string_view expr, const Activation& activation = Activation()) {
  auto program = compile(expr);
  if (!program.ok()) return "compile error: " + program.error().message;
  auto value = program->evaluate(activation);
  if (!value.ok()) return "error: " + value.error().message;
  return format_value(value.value());
}

inline bool is_eval_error(const std::string& outcome) { return outcome.rfind("error: ", 0) == 0; }
inline bool is_compile_error(const std::string& outcome) {
  return outcome.rfind("compile error: ", 0) == 0;
}

// A map value from string keys to string values, as the server binds `user` and `record`.
inline Value string_map(
    std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  std::vector<std::pair<Value, Value>> entries;
  for (const auto& [k, v] : fields)
    entries.emplace_back(Value::from_string(std::string(k)), Value::from_string(std::string(v)));
  return Value::from_map(std::move(entries)).value();
}

}  // namespace holdfast::cel::testing
