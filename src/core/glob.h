// Glob matching for LOCK.LIST MATCH, with Redis's syntax: * ? [abc] [^a-z] and \ escapes.
#pragma once

#include <string>
#include <string_view>

namespace holdfast {

// True when text matches pattern. Runs in O(len(pattern) * len(text)) at worst.
bool glob_match(std::string_view pattern, std::string_view text);

// The characters every match must start with: the glob up to its first * ? [ or \. A scan in
// key order may start at this prefix and stop past it.
std::string glob_literal_prefix(std::string_view glob);

}  // namespace holdfast
