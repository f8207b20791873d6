#include "service/redis_idiom.h"

#include <algorithm>

#include "core/values/redis_numbers.h"
#include "core/values/value_ops.h"

namespace holdfast {

SetStep decide_set(SetCondition condition, bool held, bool own, bool same_value, bool free) {
  switch (condition) {
    case SetCondition::kIfAbsent:
      return free ? SetStep::kTake : SetStep::kNothing;
    case SetCondition::kIfPresent:
      if (!held) return SetStep::kNothing;
      break;
    case SetCondition::kAlways:
      break;
  }
  if (!held) return free ? SetStep::kTake : SetStep::kRefuse;
  if (!own) return SetStep::kRefuse;
  return same_value ? SetStep::kRenew : SetStep::kTakeOver;
}

SetStep already_ended(SetStep step) {
  switch (step) {
    case SetStep::kRenew:
    case SetStep::kTakeOver:
      return SetStep::kFreeOwn;
    case SetStep::kTake:
      return SetStep::kSetGone;
    default:
      return step;
  }
}

namespace {

// Whether EXPIRE's condition (NX, XX, GT, LT, or XX with LT) lets it move an expiry `current`
// (kNever: none) to `at`, as Redis decides: GT needs an expiry to be later than, and LT counts
// none as later than any.
bool condition_holds(ExpireCondition condition, Millis current, Millis at) {
  switch (condition) {
    case ExpireCondition::kAlways:
      return true;
    case ExpireCondition::kIfNone:
      return current == kNever;
    case ExpireCondition::kIfSome:
      return current != kNever;
    case ExpireCondition::kIfLater:
      return current != kNever && at > current;
    case ExpireCondition::kIfEarlier:
      return current == kNever || at < current;
    case ExpireCondition::kIfSomeEarlier:
      return current != kNever && at < current;
  }
  return false;
}

}  // namespace

std::optional<Millis> expire_to(const ExpireArgs& args, Millis current, Millis now,
                                Millis max_lease_ms) {
  Millis at = args.persist ? now + max_lease_ms : (args.absolute ? args.amount : now + args.amount);
  at = std::min(at, now + max_lease_ms);
  // PERSIST applies to a hold that ends (its condition is always kAlways).
  const bool apply =
      args.persist ? current != kNever : condition_holds(args.condition, current, at);
  if (!apply) return std::nullopt;
  return at;
}

std::optional<Millis> value_expire_to(const ExpireArgs& args, Millis current, Millis now) {
  if (args.persist) {
    if (current == kNever) return std::nullopt;
    return kNever;
  }
  const Millis at = args.absolute ? args.amount : now + args.amount;
  if (!condition_holds(args.condition, current, at)) return std::nullopt;
  return at;
}

Error typed_command_on_lock(const ValueRequest& r, std::optional<std::string_view> lock_value) {
  if (r.op == ValueOp::kIncrBy && lock_value && !parse_redis_integer(*lock_value))
    return invalid_argument("value is not an integer or out of range");
  return wrong_type();
}

}  // namespace holdfast
