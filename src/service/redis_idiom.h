// The decisions of the Redis lock idiom (docs/redis-locks.md), made once for both backends:
// each backend reads the key's hold, asks here what to do, and acts in its own store.
#pragma once

#include <optional>
#include <string_view>

#include "core/values/value_request.h"
#include "service/lock_service.h"

namespace holdfast {

// What a SET does to a key, given what holds it.
enum class SetStep {
  kNothing,   // a condition (NX, XX) did not hold: the key is left as it is, SET answers nil
  kRefuse,    // another principal holds the key: LOCK_HELD
  kRenew,     // the caller's own hold with the same value: the lease moves, the token stays
  kTakeOver,  // the caller's own hold with another value: replaced (new handle, new token)
  kTake,      // a free key: taken
  // With an expiry that has already come (already_ended below):
  kFreeOwn,  // the caller's own hold is freed, as DEL frees it; SET answers as if it set
  kSetGone,  // a free key is left free; SET answers as if it set
};

// `held`: the key is held; `own`: by a handle hold of the caller's principal; `same_value`:
// whose owner is the value SET brings; `free`: held by nobody and nobody queued for it (a SET
// does not jump ahead of waiters).
SetStep decide_set(SetCondition condition, bool held, bool own, bool same_value, bool free);

// A SET whose expiry has already come (EXAT or PXAT at or before now): Redis sets the key and
// it expires at once, so the key ends free and SET answers OK (or, with GET, the old value).
// The step decide_set chose, for such a SET: taking or renewing becomes leaving or making the
// key free; nil and LOCK_HELD stay as they are.
SetStep already_ended(SetStep step);

// Where PEXPIRE and its kin move a lease that ends at `current` (kNever: no end), at `now`:
// nullopt when their condition does not hold. The result is at most `max_lease_ms` from now;
// at or before `now` means the key is to be freed, as Redis deletes a key whose expiry passed.
std::optional<Millis> expire_to(const ExpireArgs& args, Millis current, Millis now,
                                Millis max_lease_ms);

// Where PEXPIRE and its kin, and PERSIST, move a typed value's expiry `current` (kNever: none),
// at `now`, exactly as Redis moves a key's: nullopt when the condition does not hold (NX:
// it has none; XX: it has one; GT: later than one it has; LT: earlier, or it has none);
// kNever: it no longer expires (PERSIST); at or before `now`: the value is to be deleted.
// No lease cap applies: a typed value is not a lock.
std::optional<Millis> value_expire_to(const ExpireArgs& args, Millis current, Millis now);

// What a typed-value command answers on a key the lock table is using: WRONGTYPE, as Redis
// answers a sorted-set command on a string. INCR and its kin answer as Redis does for a string
// that is not a number ("value is not an integer or out of range") when the lock's value is
// not one, and WRONGTYPE when it is: a lock's value is its holder's token, and Holdfast never
// turns a lock into a counter. `lock_value`: what GET answers for the key; nullopt when it is
// not held (only waiters, or closed by a lock-delay).
Error typed_command_on_lock(const ValueRequest& r, std::optional<std::string_view> lock_value);

}  // namespace holdfast
