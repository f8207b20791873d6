/* RE2 compilation, matching and the per-call-site cache; see regex.h. */
#include "cel/regex.h"

#include <re2/re2.h>

namespace holdfast::cel {

Result<std::shared_ptr<const re2::RE2>> compile_regex(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // errors are returned to the caller, not printed
  auto regex = std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!regex->ok()) return invalid_argument("invalid regular expression: " + regex->error());
  return std::shared_ptr<const re2::RE2>(std::move(regex));
}

bool regex_search(const re2::RE2& regex, std::string_view text) {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), regex);
}

Result<std::shared_ptr<const re2::RE2>> RegexCache::get(std::string_view pattern) {
  std::lock_guard lock(mutex_);
  // std::string key: the heterogeneous unordered_map lookup needs a transparent hash, and
  // this path already pays for a mutex; patterns are short.
  const std::string key(pattern);
  if (auto it = patterns_.find(key); it != patterns_.end()) return it->second;
  auto compiled = compile_regex(pattern);
  if (!compiled.ok()) return compiled;
  if (patterns_.size() >= kCapacity) patterns_.clear();
  patterns_.emplace(key, compiled.value());
  return compiled;
}

}  // namespace holdfast::cel
