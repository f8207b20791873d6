// The `{}` substitution behind format_key() (include/holdfast/key_format.h).
#include "holdfast/key_format.h"

#include "holdfast/errors.h"

namespace holdfast::inline v0::detail {

std::string substitute_key(std::string_view pattern, const std::vector<std::string>& parts) {
  std::string key;
  key.reserve(pattern.size() + 16);
  std::size_t next = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    const bool doubled = i + 1 < pattern.size() && pattern[i + 1] == c;
    if (c == '{' && doubled) {
      key.push_back('{');
      ++i;
    } else if (c == '}' && doubled) {
      key.push_back('}');
      ++i;
    } else if (c == '{' && i + 1 < pattern.size() && pattern[i + 1] == '}') {
      if (next == parts.size())
        throw InvalidArgumentError("INVALID_ARGUMENT", "key template '" + std::string(pattern) +
                                                           "' has more {} than arguments");
      key += parts[next++];
      ++i;
    } else if (c == '{' || c == '}') {
      throw InvalidArgumentError(
          "INVALID_ARGUMENT",
          "key template '" + std::string(pattern) + "' has a lone '" + c + "' (write {{ or }})");
    } else {
      key.push_back(c);
    }
  }
  if (next != parts.size())
    throw InvalidArgumentError("INVALID_ARGUMENT", "key template '" + std::string(pattern) +
                                                       "' has fewer {} than arguments");
  return key;
}

}  // namespace holdfast::inline v0::detail
