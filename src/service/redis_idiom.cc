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

std::optional<Millis> expire_to(const ExpireArgs& args, Millis current, Millis now,
                                Millis max_lease_ms) {
  Millis at = args.persist ? now + max_lease_ms : (args.absolute ? args.amount : now + args.amount);
  at = std::min(at, now + max_lease_ms);
  bool apply = true;
  switch (args.condition) {
    case ExpireCondition::kAlways:
      break;
    case ExpireCondition::kIfNone:
      apply = current == kNever;
      break;
    case ExpireCondition::kIfSome:
      apply = current != kNever;
      break;
    case ExpireCondition::kIfLater:
      apply = current != kNever && at > current;
      break;
    case ExpireCondition::kIfEarlier:
      apply = current == kNever || at < current;
      break;
    case ExpireCondition::kIfSomeEarlier:
      apply = current != kNever && at < current;
      break;
  }
  if (args.persist) apply = current != kNever;  // PERSIST: only a hold that ends
  if (!apply) return std::nullopt;
  return at;
}

std::optional<Millis> value_expire_to(const ExpireArgs& args, Millis current, Millis now) {
  if (args.persist) {
    if (current == kNever) return std::nullopt;
    return kNever;
  }
  const Millis at = args.absolute ? args.amount : now + args.amount;
  switch (args.condition) {
    case ExpireCondition::kAlways:
      break;
    case ExpireCondition::kIfNone:
      if (current != kNever) return std::nullopt;
      break;
    case ExpireCondition::kIfSome:
      if (current == kNever) return std::nullopt;
      break;
    case ExpireCondition::kIfLater:
      if (current == kNever || at <= current) return std::nullopt;
      break;
    case ExpireCondition::kIfEarlier:
      if (current != kNever && at >= current) return std::nullopt;
      break;
    case ExpireCondition::kIfSomeEarlier:
      if (current == kNever || at >= current) return std::nullopt;
      break;
  }
  return at;
}

Error typed_command_on_lock(const ValueRequest& r, std::optional<std::string_view> lock_value) {
  if (r.op == ValueOp::kIncrBy && lock_value && !parse_redis_integer(*lock_value))
    return invalid_argument("value is not an integer or out of range");
  return wrong_type();
}

}  // namespace holdfast
