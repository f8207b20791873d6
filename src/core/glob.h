// Glob matching for LOCK.LIST MATCH, with Redis's syntax: * ? [abc] [^a-z] and \ escapes.
#pragma once

#include <string_view>

namespace holdfast {

// True when text matches pattern. Runs in O(len(pattern) * len(text)) at worst.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace holdfast
