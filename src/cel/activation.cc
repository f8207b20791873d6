/* Activation bindings; see activation.h. */
#include "cel/activation.h"

namespace holdfast::cel {

void Activation::bind(std::string_view name, Value value) {
  for (auto& [bound, existing] : variables_) {
    if (bound == name) {
      existing = std::move(value);
      return;
    }
  }
  variables_.emplace_back(std::string(name), std::move(value));
}

void Activation::bind_function(std::string_view name, Function function) {
  for (auto& [bound, existing] : functions_) {
    if (bound == name) {
      existing = std::move(function);
      return;
    }
  }
  functions_.emplace_back(std::string(name), std::move(function));
}

const Value* Activation::find_variable(std::string_view name) const {
  for (const auto& [bound, value] : variables_) {
    if (bound == name) return &value;
  }
  return nullptr;
}

const Function* Activation::find_function(std::string_view name) const {
  for (const auto& [bound, function] : functions_) {
    if (bound == name) return &function;
  }
  return nullptr;
}

}  // namespace holdfast::cel
