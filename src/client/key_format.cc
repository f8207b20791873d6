// The substitution behind format_key() (include/holdfast/key_format.h): one scanner for both
// kinds of template, which asks `fill` for the text of each placeholder (`{}` has an empty
// name).
#include "holdfast/key_format.h"

#include <algorithm>
#include <functional>

#include "holdfast/errors.h"

namespace holdfast::inline v0::detail {
namespace {

[[noreturn]] void bad_template(std::string_view pattern, const std::string& why) {
  throw InvalidArgumentError("INVALID_ARGUMENT",
                             "key template '" + std::string(pattern) + "' " + why);
}

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

std::string expand(std::string_view pattern,
                   const std::function<std::string(std::string_view name)>& fill) {
  std::string key;
  key.reserve(pattern.size() + 16);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    const bool doubled = i + 1 < pattern.size() && pattern[i + 1] == c;
    if ((c == '{' || c == '}') && doubled) {
      key.push_back(c);
      ++i;
      continue;
    }
    if (c == '}') bad_template(pattern, "has a lone '}' (write }})");
    if (c != '{') {
      key.push_back(c);
      continue;
    }
    const std::size_t close = pattern.find('}', i + 1);
    if (close == std::string_view::npos) bad_template(pattern, "has a lone '{' (write {{)");
    const std::string_view name = pattern.substr(i + 1, close - i - 1);
    const bool valid =
        name.empty() || (name_start(name[0]) && std::all_of(name.begin(), name.end(), name_char));
    if (!valid)
      bad_template(pattern, "has '{" + std::string(name) +
                                "}': a placeholder is {} or {name} (letters, digits, _)");
    key += fill(name);
    i = close;
  }
  return key;
}

}  // namespace

std::string substitute_key(std::string_view pattern, const std::vector<std::string>& parts) {
  std::size_t next = 0;
  std::string key = expand(pattern, [&](std::string_view name) {
    if (!name.empty())
      bad_template(pattern, "has the named placeholder {" + std::string(name) +
                                "}; give its value as a field: {{\"" + std::string(name) +
                                "\", value}}");
    if (next == parts.size()) bad_template(pattern, "has more {} than arguments");
    return parts[next++];
  });
  if (next != parts.size()) bad_template(pattern, "has fewer {} than arguments");
  return key;
}

std::string substitute_named_key(std::string_view pattern, std::initializer_list<KeyField> fields) {
  std::vector<bool> used(fields.size(), false);
  for (auto a = fields.begin(); a != fields.end(); ++a)
    for (auto b = a + 1; b != fields.end(); ++b)
      if (a->name == b->name)
        bad_template(pattern, "is given the field " + std::string(a->name) + " twice");
  std::string key = expand(pattern, [&](std::string_view name) {
    if (name.empty()) bad_template(pattern, "has a positional {} but named fields were given");
    std::size_t i = 0;
    for (const KeyField& f : fields) {
      if (f.name == name) {
        used[i] = true;
        return f.value;
      }
      ++i;
    }
    bad_template(pattern, "has {" + std::string(name) + "} but no field of that name was given");
  });
  std::size_t i = 0;
  for (const KeyField& f : fields) {
    if (!used[i++]) bad_template(pattern, "does not use the field " + std::string(f.name));
  }
  return key;
}

}  // namespace holdfast::inline v0::detail
