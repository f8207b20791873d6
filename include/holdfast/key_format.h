// format_key("task:{}", id): builds a lock key from a template, for per-resource critical
// sections (`client.locked("payment:{}", order_id)`). g++ 12 has no std::format, and keys need
// only the plainest substitution, so this is a tiny one:
//   - positional: each `{}` is replaced by the next argument, in order;
//   - named: each `{name}` is replaced by the field of that name, given as a list of
//     {"name", value} pairs: format_key("payment:{orderId}", {{"orderId", id}}). A name is a
//     letter or `_`, then letters, digits and `_`; one field may fill several placeholders;
//   - `{{` and `}}` stand for literal braces;
//   - an argument that converts to std::string_view is inserted as is, an arithmetic one with
//     std::to_string (bool as true/false), anything else with its operator<<.
// A template is positional or named, not both. These throw InvalidArgumentError, because a key
// built wrongly would lock the wrong resource: a `{}` count that differs from the argument
// count, a lone `{` or `}`, a `{name}` with no field of that name (or with positional
// arguments), a `{}` with named fields, a field no placeholder uses, a field given twice.
#pragma once

#include <initializer_list>
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

}  // namespace detail

// One named value of a key template: {"orderId", order_id}. The value is converted at once
// (as described above); the name must outlive the format_key() call (a literal does).
struct KeyField {
  template <class T>
  KeyField(std::string_view field_name, const T& field_value)
      : name(field_name), value(detail::key_part(field_value)) {}

  std::string_view name;
  std::string value;
};

namespace detail {

// Substitutes `parts` into the `{}` of `pattern`, or `fields` into its `{name}`s.
std::string substitute_key(std::string_view pattern, const std::vector<std::string>& parts);
std::string substitute_named_key(std::string_view pattern, std::initializer_list<KeyField> fields);

}  // namespace detail

template <class... Args>
std::string format_key(std::string_view pattern, const Args&... args) {
  return detail::substitute_key(pattern, std::vector<std::string>{detail::key_part(args)...});
}

inline std::string format_key(std::string_view pattern, std::initializer_list<KeyField> fields) {
  return detail::substitute_named_key(pattern, fields);
}

}  // namespace holdfast::inline v0
