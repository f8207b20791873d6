#include "server/lock_mode_args.h"

#include <string>

namespace holdfast {
namespace {

bool same_word(std::string_view given, std::string_view word) {
  if (given.size() != word.size()) return false;
  for (std::size_t i = 0; i < given.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(given[i]) != lower(word[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<Error> read_lock_mode(std::optional<std::string_view> mode,
                                    std::optional<std::int64_t> permits,
                                    std::optional<std::int64_t> take, const ModeSpelling& names,
                                    KeyRequest& args) {
  LockMode chosen = LockMode::kExclusive;
  if (mode) {
    if (same_word(*mode, names.shared)) {
      chosen = LockMode::kShared;
    } else if (!same_word(*mode, names.exclusive)) {
      return invalid_argument(std::string(names.mode) + " must be " + std::string(names.shared) +
                              " or " + std::string(names.exclusive));
    }
  }
  for (const auto& [given, name] : {std::pair{permits, names.permits}, std::pair{take, names.take}})
    if (given && *given < 1)
      return invalid_argument(std::string(name) + " must be a positive integer");
  if (take && !permits)
    return invalid_argument(std::string(names.take) + " needs " + std::string(names.permits));
  if (!permits) {
    args.mode = chosen;
    return std::nullopt;
  }
  if (mode)
    return invalid_argument(std::string(names.permits) + " makes a semaphore; it cannot go with " +
                            std::string(names.mode));
  constexpr std::int64_t kMax = kMaxPermits;
  if (*permits > kMax || (take && *take > kMax))
    return invalid_argument("a semaphore has at most " + std::to_string(kMax) + " permits");
  args.mode = LockMode::kSemaphore;
  args.permits = static_cast<std::uint32_t>(*permits);
  args.take = take ? static_cast<std::uint32_t>(*take) : 1;
  return std::nullopt;
}

}  // namespace holdfast
