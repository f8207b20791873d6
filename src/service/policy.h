// Policy: the LockService the front ends talk to. It applies the contract's checks once, in one
// order, for both backends, and hands the backend only calls it may run:
//  1. authentication happened in the front end: the Caller's principal is who calls;
//  2. access: listing and rule-set administration need the admin or owner role or a function
//     (FORBIDDEN); acquire (and try), renew, assign, transfer and unassign go through the rule
//     set (LOCK_ACCESS_DENIED; auth/rule_set.h has the decision), and so does a change to a
//     typed value, as an acquire whose request.operation is "write"; release, status, holder,
//     check and reads of typed values are open to every caller. Before the rules, a holder id the
//     call leaves out becomes the caller's own (lock_service.h), so rules and backend see the ids
//     acted on;
//  3. validation: keys, owners, holder ids, handles, TTLs, timeouts, the list cursor and count,
//     the bytes of a typed value's elements (INVALID_ARGUMENT naming the field); a TTL above the
//     lease cap and a wait above 24 h are capped, and the reply shows the real expiry;
//  4. rate limit: acquire, try and assign by a member count against the member's hourly cap.
//     Over it, one attempt answers RATE_LIMITED (retryAfterMs); a blocking acquire or assign
//     waits in the rate gate until a slot frees (then counts once and queues with the time it
//     has left) or its timeout passes (LOCK_TIMEOUT with the timeout it asked for);
//  5. the backend.
// Every answer, the policy's own included, leaves through the backend (LockBackend::complete),
// so no reply overtakes what it depends on on its way to the disk.
//
// The rule set: the policy compiles what the backend stores and keeps the compiled set; the
// backend tells it when the stored set changes (a push here, another node, start-up).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>

#include "auth/rule_set.h"
#include "core/clock.h"
#include "core/deadline_heap.h"
#include "core/validation.h"
#include "service/backend.h"
#include "service/lock_service.h"

namespace holdfast {

struct PolicyOptions {
  Millis max_lease_ms = kMaxLeaseMs;  // TTLs above this are capped
  // Acquire attempts (acquire, try, assign) per member per rolling hour; 0: no limit.
  std::int64_t acquire_per_user_per_hour = 0;
  // Credentials are configured: a member's userId is its holder id, which assign, transfer,
  // unassign and check use when the call names none. Off (local open mode), every caller is
  // the same user:local, so those calls must name their holder ids.
  bool identities = false;
};

class Policy final : public LockService {
 public:
  // `backend` and `clock` must outlive the policy.
  Policy(LockBackend& backend, const Clock& clock, PolicyOptions options = {});
  ~Policy() override;
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  Issued acquire(const Caller& caller, const AcquireArgs& args, Completion& done) override;
  Issued try_acquire(const Caller& caller, const AcquireArgs& args, Completion& done) override;
  Issued acquire_all(const Caller& caller, const AcquireAllArgs& args, Completion& done) override;
  Issued try_acquire_all(const Caller& caller, const AcquireAllArgs& args,
                         Completion& done) override;
  Issued renew(const Caller& caller, const RenewArgs& args, Completion& done) override;
  Issued release(const Caller& caller, const ReleaseArgs& args, Completion& done) override;
  Issued status(const Caller& caller, std::string_view key, Completion& done) override;
  Issued get_value(const Caller& caller, std::string_view key, Completion& done) override;
  Issued list(const Caller& caller, const ListArgs& args, Completion& done) override;
  Issued assign(const Caller& caller, const AssignArgs& args, Completion& done) override;
  Issued transfer(const Caller& caller, const TransferArgs& args, Completion& done) override;
  Issued unassign(const Caller& caller, const UnassignArgs& args, Completion& done) override;
  Issued holder(const Caller& caller, std::string_view key, Completion& done) override;
  Issued check(const Caller& caller, const CheckArgs& args, Completion& done) override;
  Issued set_value(const Caller& caller, const SetArgs& args, Completion& done) override;
  Issued delete_keys(const Caller& caller, std::span<const std::string_view> keys,
                     Completion& done) override;
  Issued expire(const Caller& caller, const ExpireArgs& args, Completion& done) override;
  Issued count_held(const Caller& caller, std::span<const std::string_view> keys,
                    Completion& done) override;
  Issued value(const Caller& caller, const ValueRequest& request, Completion& done) override;
  Issued set_rule_set(const Caller& caller, std::string_view toml, Completion& done) override;
  Issued get_rule_set(const Caller& caller, Completion& done) override;
  Issued delete_rule_set(const Caller& caller, std::string_view name, Completion& done) override;

  void complete(Completion& done, Result<Answer> result) override {
    backend_.complete(done, std::move(result));
  }
  void end_session(SessionId session) override;
  void shutdown() override;
  Status atomically(const std::function<void()>& body) override {
    return backend_.atomically(body);
  }
  void dispatch() override { backend_.dispatch(); }
  void advance() override;
  std::optional<Millis> next_deadline() const override;
  ServiceStats stats() const override { return backend_.stats(); }
  void set_event_sink(LockEventSink* sink) override { backend_.set_event_sink(sink); }
  // Admins, owners and functions see every key, and so does everyone while no rule set is
  // installed; with one, a member sees the keys the set's acquire rule lets it take, asked
  // with request.operation "watch" (docs/events.md).
  bool may_read(const Principal& caller, std::string_view key) const override;
  bool may_read_all(const Principal& caller) const override;

  // The compiled rule set in force (null: none).
  const RuleSet* rules() const { return rules_ ? &*rules_ : nullptr; }
  // The lock-delay a grant gets: the one asked for, else the rule set's default (none: 0).
  std::optional<Millis> lock_delay_or_default(std::optional<Millis> asked) const {
    if (asked || rules() == nullptr || rules()->lock_delay_ms == 0) return asked;
    return rules()->lock_delay_ms;
  }

 private:
  struct Gated;
  struct GatedIndex {
    std::uint32_t& operator()(Gated* g) const;
  };

  Issued refuse(Completion& done, Error error);
  // The rule set's decision; request.operation is the operation's name unless `asked` has one.
  std::optional<Error> denied(const Caller& caller, LockOperation op, std::string_view key,
                              RuleRequest asked = {}) const;
  // A change to the key's typed value: the acquire rule with request.operation "write".
  std::optional<Error> value_write_denied(const Caller& caller, std::string_view key) const;
  // What a rule sees of an acquire: tryAcquire when it does not wait, its mode and permits.
  static RuleRequest acquire_request(const AcquireArgs& args, bool waits);
  // `given`, or the caller's own holder id when the call names none (lock_service.h);
  // INVALID_ARGUMENT naming `field` when the caller has none (open mode, a function).
  Result<std::string_view> holder_or_caller(const Caller& caller,
                                            std::optional<std::string_view> given,
                                            std::string_view field) const;
  Millis cap_ttl(Millis ttl) const { return ttl > max_lease_ms_ ? max_lease_ms_ : ttl; }
  // A multi-key request checked key by key as acquire checks one (rules, then arguments), with
  // its keys sorted and capped; the first refusal otherwise.
  Result<AcquireAllArgs> vet_all(const Caller& caller, const AcquireAllArgs& args,
                                 bool waits) const;
  Charge charge_for(const Caller& caller) const;
  // Whose holds a caller may free or extend without their handle (DEL, PEXPIRE): its own
  // principal's; any for admins, owners and functions.
  static std::optional<std::string_view> own_holds(const Caller& caller,
                                                   const std::string& held_by);
  Issued gate(const Caller& caller, Completion& done, std::unique_ptr<Gated> call);
  void run_gated(Gated& call, Millis now);
  void gated_finished(Gated& call, Result<Answer> result);
  void wait_for_slot(Gated& call, Millis retry_after_ms);
  void unpark(Gated& call);
  void rule_set_changed(const std::optional<RuleSetPut>& stored);

  LockBackend& backend_;
  const Clock& clock_;
  const Millis max_lease_ms_;
  const std::int64_t per_hour_;
  const bool identities_;
  std::optional<RuleSet> rules_;
  std::optional<RuleSet> pushed_;  // compiled by a push here, until the backend stores it

  // The rate gate: blocking calls over the cap, parked until their next try. Calls passed on
  // to the backend are owned here too (`live_`) until they finish.
  DeadlineHeap<Gated, GatedIndex> parked_;
  std::unordered_multimap<SessionId, Gated*> parked_by_session_;
  std::unordered_map<Gated*, std::unique_ptr<Gated>> live_;
};

}  // namespace holdfast
