// format_key("task:{}", id): builds a lock key from a template, for per-resource critical
// sections (`client.locked("payment:{}", order_id)`). g++ 12 has no std::format, and keys need
// only the plainest substitution, so this is a tiny one:
//   - each `{}` is replaced by the next argument, in order;
//   - `{{` and `}}` stand for literal braces;
//   - an argument that converts to std::string_view is inserted as is, an arithmetic one with
//     std::to_string (bool as true/false), anything else with its operator<<.
// A template whose `{}` count differs from the argument count, or with a lone `{` or `}`,
// throws InvalidArgumentError: a key built wrongly would lock the wrong resource.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace holdfast::inline v0 {

namespace detail {

template <class T>
std::string key_part(const T& value) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return std::string(std::string_view(value));
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, char>) {
    return std::string(1, value);
  } else if constexpr (std::is_arithmetic_v<T>) {
    return std::to_string(value);
  } else {
    std::ostringstream out;
    out << value;
    return out.str();
  }
}

// Substitutes `parts` into `pattern` as described above.
std::string substitute_key(std::string_view pattern, const std::vector<std::string>& parts);

}  // namespace detail

template <class... Args>
std::string format_key(std::string_view pattern, const Args&... args) {
  return detail::substitute_key(pattern, std::vector<std::string>{detail::key_part(args)...});
}

}  // namespace holdfast::inline v0
