/* RE2 compilation, matching and the per-call-site cache; see regex.h. */
#include "cel/regex.h"

#include <re2/re2.h>

namespace holdfast::cel {
namespace {

std::shared_ptr<const re2::RE2> build(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // errors are returned to the caller, not printed
  return std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()),
                                          options);
}

Result<std::shared_ptr<const re2::RE2>> checked(std::shared_ptr<const re2::RE2> regex) {
  if (!regex->ok()) return invalid_argument("invalid regular expression: " + regex->error());
  return regex;
}

}  // namespace

Result<std::shared_ptr<const re2::RE2>> compile_regex(std::string_view pattern) {
  return checked(build(pattern));
}

bool regex_search(const re2::RE2& regex, std::string_view text) {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), regex);
}

Result<std::shared_ptr<const re2::RE2>> RegexCache::get(std::string_view pattern) {
  std::lock_guard lock(mutex_);
  // std::string key: the heterogeneous unordered_map lookup needs a transparent hash, and
  // this path already pays for a mutex; patterns are short.
  const std::string key(pattern);
  if (auto it = patterns_.find(key); it != patterns_.end()) return checked(it->second);
  // Rejected patterns are cached too: RE2 can spend a long time before giving up on a
  // pattern that is too large, and a rule would otherwise pay that on every evaluation.
  auto regex = build(pattern);
  if (patterns_.size() >= kCapacity) patterns_.clear();
  patterns_.emplace(key, regex);
  return checked(std::move(regex));
}

}  // namespace holdfast::cel
