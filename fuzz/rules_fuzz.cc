// Fuzzes rule sets (docs/auth.md): any text pushed as a rule set must either compile, after
// which every gated operation is decided as allowed or LOCK_ACCESS_DENIED, or be refused with
// INVALID_ARGUMENT and a message; never a crash. This covers the TOML parser and the CEL
// compiler behind RULES.PUT, and the evaluation of what they accepted.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "auth/rule_set.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view toml(reinterpret_cast<const char*>(data), size);
  auto rules = holdfast::parse_rule_set(toml);
  if (!rules.ok()) {
    if (rules.error().code != holdfast::ErrorCode::kInvalidArgument) std::abort();
    if (rules.error().message.empty()) std::abort();
    return 0;
  }
  holdfast::Principal member;
  member.id = "alice";
  member.groups = {{"ops", "core"}};
  for (std::size_t op = 0; op < holdfast::kLockOperationCount; ++op) {
    for (std::string_view key : {"user:alice:1", "jobs:1", ""}) {
      auto denied =
          holdfast::check_access(&*rules, member, static_cast<holdfast::LockOperation>(op), key);
      if (denied && denied->code != holdfast::ErrorCode::kLockAccessDenied) std::abort();
    }
  }
  return 0;
}
