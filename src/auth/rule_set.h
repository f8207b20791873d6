// Lock rule sets (docs/reference.md section 3): one optional set per server, pushed as TOML, one
// CEL rule per gated operation. Rules are compiled at push time; checking a call only evaluates.
//
// The decision, in order:
//  1. admins and owners always pass; functions are never subject to rules;
//  2. no rule set installed: every member may do every gated operation;
//  3. with a rule set: an operation it does not define is denied, and a rule that evaluates to
//     anything but `true` (false, an error, a non-bool) denies.
// Gated operations: acquire (covers tryAcquire), renew, assign, transfer, unassign. release is
// never gated, status, holder and check are open to every member, list is admin-only (decided
// elsewhere).
// A denial never echoes the rule.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cel/cel.h"
#include "core/error.h"
#include "core/principal.h"

namespace holdfast {

enum class LockOperation : unsigned char { kAcquire, kRenew, kAssign, kTransfer, kUnassign };
inline constexpr std::size_t kLockOperationCount = 5;
std::string_view operation_name(LockOperation op);

struct RuleSet {
  std::string name;
  std::string toml;  // as pushed, returned by RULES.GET
  std::array<std::optional<cel::Program>, kLockOperationCount> rules;
};

// Parses and compiles a rule set. Errors are INVALID_ARGUMENT naming the rule and the position
// inside it, e.g. "rules.lock.acquire: 1:14: unexpected token ')'".
Result<RuleSet> parse_rule_set(std::string_view toml);

// What a call asks for, as a rule sees it in `request`. Every gated call binds operation
// ("acquire", "tryAcquire", "renew", "assign", "transfer", "unassign"); acquire, tryAcquire
// and assign bind mode ("exclusive", "shared" or "semaphore"), and a semaphore request permits
// (the key's) and take (this hold's); assign binds holderId, transfer fromId and toId,
// unassign holderId when it names one. The ids are the ones the call acts on, after a holder
// left out became the caller's own (service/lock_service.h). A field an operation does not
// bind is absent (`has(request.toId)` is false; reading it is an error, which denies).
struct RuleRequest {
  std::optional<std::string_view> operation;
  std::optional<std::string_view> mode;
  std::optional<std::int64_t> permits;
  std::optional<std::int64_t> take;
  std::optional<std::string_view> holder_id;
  std::optional<std::string_view> to_id;
  std::optional<std::string_view> from_id;
};

// nullopt when the call may proceed; LOCK_ACCESS_DENIED otherwise.
std::optional<Error> check_access(const RuleSet* rules, const Principal& caller, LockOperation op,
                                  std::string_view key, const RuleRequest& request = {});

// The activation a rule sees: user.userId, user.role, record.key, request.operation,
// request.mode, request.permits, request.take, request.holderId, request.toId,
// request.fromId (those that are set; `request` itself is always bound) and
// isMemberOf(type, id). `caller` must outlive the activation.
cel::Activation rule_activation(const Principal& caller, std::string_view key,
                                const RuleRequest& request = {});

}  // namespace holdfast
