/* RE2 regular expressions for the CEL `matches` function.
 *
 * CEL specifies RE2 syntax and substring semantics: 'hubba'.matches('ubb') is true; anchors
 * (^, $) force whole-string matches. RE2 runs in time linear in the input, so a hostile pattern
 * cannot make evaluation hang. Compiling a pattern costs far more than matching it, so a
 * literal pattern is compiled once with the expression, and a pattern computed at run time is
 * compiled once per distinct text and kept in a small per-call-site cache.
 */
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/error.h"

namespace re2 {
class RE2;
}

namespace holdfast::cel {

// The compiled pattern, or INVALID_ARGUMENT naming RE2's complaint.
Result<std::shared_ptr<const re2::RE2>> compile_regex(std::string_view pattern);

// Whether `regex` matches anywhere in `text`.
bool regex_search(const re2::RE2& regex, std::string_view text);

// Compiled patterns (and rejected ones) by text, shared by all evaluations of one call site.
// Holds at most kCapacity patterns; when full it starts over, which is simple and bounds
// memory (a rule whose pattern changes on every evaluation gains nothing from caching anyway).
class RegexCache {
 public:
  static constexpr std::size_t kCapacity = 32;

  Result<std::shared_ptr<const re2::RE2>> get(std::string_view pattern);

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const re2::RE2>> patterns_;
};

}  // namespace holdfast::cel
