// LockBackend: where the locks live. Two implementations, side by side:
//  - embedded/: the in-memory lock table with the write-ahead log, on the loop thread;
//  - postgres/: a node of a cluster whose locks live in one PostgreSQL database.
//
// The policy layer (policy.h) is the only caller. It has already authenticated the caller,
// applied the rule set, validated and capped every argument, resolved the holder ids a caller
// left out (lock_service.h) and decoded the list cursor; a backend trusts its arguments and
// decides. It finishes every call as LockService says
// (lock_service.h): exactly once, on the loop thread, in issue order per session, and never
// before what the answer reports is durable. complete() lets the policy finish a call it
// decided itself (a denial, a bad argument, a rate-limit timeout) in its place among the
// backend's answers, so the same rule holds for those replies.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "service/lock_service.h"

namespace holdfast {

// How an acquire or assign meets a key held by someone else.
enum class Contention : std::uint8_t {
  kNil,    // try_acquire: answer nil
  kError,  // acquire or assign: LOCK_TIMEOUT (or LOCK_HELD for an assign without TIMEOUT)
};

// A call that acts on a key whatever it holds (DEL, the EXPIRE family, GETDEL): what the policy
// decided for each case, before the backend knows which one the key is.
struct KeyAccess {
  // A lock: act only on holds of this principal (heldBy); none: on any.
  std::optional<std::string_view> only_held_by;
  // A lock or a free key: the rule set's refusal (EXPIRE: the renew rule), if it refuses.
  std::optional<Error> lock_denied;
  // A typed value: the rule set's refusal of a write, if it refuses.
  std::optional<Error> value_denied;
};

// Counting the attempt against the caller's rolling hour of acquire attempts (members only).
struct Charge {
  std::int64_t per_hour = 0;  // 0: do not count
  // Over the cap, the backend answers RATE_LIMITED with details retryAfterMs and does nothing
  // else; the attempt is not counted.
};

class LockBackend {
 public:
  virtual ~LockBackend() = default;

  virtual Issued acquire(const Caller& caller, const AcquireArgs& args, Contention contention,
                         Charge charge, Completion& done) = 0;
  // REQUIRES: args.keys sorted by key, distinct, 1..kMaxGroupKeys of them.
  virtual Issued acquire_all(const Caller& caller, const AcquireAllArgs& args,
                             Contention contention, Charge charge, Completion& done) = 0;
  virtual Issued assign(const Caller& caller, const AssignArgs& args, Charge charge,
                        Completion& done) = 0;
  virtual Issued renew(const Caller& caller, const RenewArgs& args, Completion& done) = 0;
  virtual Issued release(const Caller& caller, const ReleaseArgs& args, Completion& done) = 0;
  virtual Issued status(const Caller& caller, std::string_view key, Completion& done) = 0;
  // Holds matching the glob `match` whose keys sort after `after` (empty: from the start), in
  // key order, at most `count`; next_cursor from core/list_cursor.h.
  virtual Issued list(const Caller& caller, std::string_view match, std::string_view after,
                      std::size_t count, Completion& done) = 0;
  virtual Issued transfer(const Caller& caller, const TransferArgs& args, Completion& done) = 0;
  virtual Issued unassign(const Caller& caller, const UnassignArgs& args, Completion& done) = 0;
  virtual Issued holder(const Caller& caller, std::string_view key, Completion& done) = 0;
  // REQUIRES: args.holder_id is set.
  virtual Issued check(const Caller& caller, const CheckArgs& args, Completion& done) = 0;

  // The Redis idiom. `only_held_by`: act only on holds of this principal (heldBy); none: any.
  // TTLs and instants are already capped to `max_lease_ms` from now where they are relative.
  virtual Issued set_value(const Caller& caller, const SetArgs& args, Charge charge,
                           Completion& done) = 0;
  virtual Issued get_value(std::string_view key, Completion& done) = 0;
  // `value_writable`: one flag per key, whether the rules let the caller delete a typed value
  // there (a key whose value it may not delete is left and not counted); empty: every key.
  virtual Issued delete_keys(std::span<const std::string_view> keys,
                             std::optional<std::string_view> only_held_by,
                             std::span<const std::uint8_t> value_writable, Completion& done) = 0;
  virtual Issued expire(const ExpireArgs& args, Millis max_lease_ms, const KeyAccess& access,
                        Completion& done) = 0;
  virtual Issued count_held(std::span<const std::string_view> keys, Completion& done) = 0;
  // Typed values (LockService::value). The request's views and its items are already checked
  // against the limits; a write already passed the rules. `access` matters to GETDEL only.
  virtual Issued value(const Caller& caller, const ValueRequest& request, const KeyAccess& access,
                       Completion& done) = 0;

  // The stored rule set (text only; the policy compiles it). put answers RuleSetStored, or
  // RULESET_CONFLICT (details installed) when a set of another name is installed; delete
  // answers nil, or NOT_FOUND when no set of that name is installed.
  virtual Issued put_rule_set(const RuleSetPut& rules, Completion& done) = 0;
  virtual Issued get_rule_set(Completion& done) = 0;
  virtual Issued delete_rule_set(std::string_view name, Completion& done) = 0;
  // fn(set) runs on the loop thread whenever the stored set changes: at start-up with what
  // was stored, after this backend's own put and delete (before their calls finish), and when
  // another node of a cluster changes it.
  virtual void on_rule_set_changed(std::function<void(const std::optional<RuleSetPut>&)> fn) = 0;

  // Finishes `done` with `result` in its place among this backend's answers (at once for an
  // immediate() completion).
  virtual void complete(Completion& done, Result<Answer> result) = 0;

  // LockService::atomically.
  virtual Status atomically(const std::function<void()>& body) {
    body();
    return ok_status();
  }
  virtual void end_session(SessionId session) = 0;
  virtual void shutdown() = 0;
  virtual void dispatch() = 0;
  virtual void advance() = 0;
  virtual std::optional<Millis> next_deadline() const = 0;
  virtual ServiceStats stats() const = 0;
  // LockService::set_event_sink.
  virtual void set_event_sink(LockEventSink* sink) { (void)sink; }
};

}  // namespace holdfast
