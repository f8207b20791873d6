// EmbeddedBackend: the locks of a single server, in the in-memory LockTable, every change made
// durable by the Store (the write-ahead log), all on the loop thread.
//
// The life of a call:
//  1. The table decides at once: a grant, a refusal, or a waiter in the key's queue (the call
//     is then kWaiting and its completion is remembered under the waiter's id).
//  2. Every change the table makes is appended to the store as it happens (this class is the
//     table's ChangeSink), so each answer is stamped with the log sequence appended so far.
//  3. An answer leaves through the reply queue: at once when the log is already durable up to
//     its stamp (always, with --fsync never; inside the lease horizon, with --fsync horizon),
//     otherwise when the store reports that it is. A forced release or expiry by a caller who
//     may act on every principal's holds asks the store for a sync first (require_sync).
//  4. A waiter's outcome (granted, timed out) is queued by the table and delivered by
//     dispatch() at one point of the loop, never from inside another call; a grant whose
//     session has ended in the meantime is released again, so the key is not left held by
//     nobody until its lease ends.
//  5. Lock events (docs/events.md), while someone watches: the table tells each one as it
//     happens; it waits here, stamped like an answer with the log sequence appended so far,
//     and dispatch() hands it on once the log is durable up to its stamp, so nobody hears of
//     a grant before its holder could.
//  6. Typed values (counters, sorted sets, hashes, lists) live in a ValueStore beside the
//     table (embedded_values.cc); a key belongs to one of the two, and each call asks the
//     other first whether the key is its (the table's lock commands answer WRONGTYPE on a
//     typed value, typed commands on a lock). A value's edits are changes like a grant.
//  6. While the store reports a fault (a full or failing disk), every call that could change
//     the table answers that fault (STORE_UNAVAILABLE) before touching anything. Answers
//     already waiting for the log keep waiting until the store has written it; the rest
//     (reads, refusals, timeouts) leave at once unless an earlier answer of the same
//     connection is still waiting. Leases still end on time and waiters are still granted:
//     those changes are kept by the store and written once it can, and a granted waiter's
//     answer waits for that.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>

#include "auth/rate_limiter.h"
#include "core/clock.h"
#include "core/lock_table.h"
#include "core/values/value_store.h"
#include "service/backend.h"
#include "service/embedded/event_queue.h"
#include "service/embedded/reply_queue.h"
#include "store/store.h"

namespace holdfast {

class EmbeddedBackend final : public LockBackend, private ChangeSink, private LockEventSink {
 public:
  // `clock` and `store` must outlive the backend. `wake` (thread-safe) asks the loop to call
  // dispatch(): the store calls it from its writer thread when more of the log is durable.
  EmbeddedBackend(const Clock& clock, Store& store, WakeLoop wake = {});
  EmbeddedBackend(const EmbeddedBackend&) = delete;
  EmbeddedBackend& operator=(const EmbeddedBackend&) = delete;

  // Loads what the store kept (and tells the rule-set listener). Once, before serving.
  Status recover();

  Issued acquire(const Caller& caller, const AcquireArgs& args, Contention contention,
                 Charge charge, Completion& done) override;
  Issued acquire_all(const Caller& caller, const AcquireAllArgs& args, Contention contention,
                     Charge charge, Completion& done) override;
  Issued assign(const Caller& caller, const AssignArgs& args, Charge charge,
                Completion& done) override;
  Issued renew(const Caller& caller, const RenewArgs& args, Completion& done) override;
  Issued release(const Caller& caller, const ReleaseArgs& args, Completion& done) override;
  Issued status(const Caller& caller, std::string_view key, Completion& done) override;
  Issued list(const Caller& caller, std::string_view match, std::string_view after,
              std::size_t count, Completion& done) override;
  Issued transfer(const Caller& caller, const TransferArgs& args, Completion& done) override;
  Issued unassign(const Caller& caller, const UnassignArgs& args, Completion& done) override;
  Issued holder(const Caller& caller, std::string_view key, Completion& done) override;
  Issued check(const Caller& caller, const CheckArgs& args, Completion& done) override;
  Issued set_value(const Caller& caller, const SetArgs& args, Charge charge,
                   Completion& done) override;
  Issued get_value(std::string_view key, Completion& done) override;
  Issued delete_keys(std::span<const std::string_view> keys,
                     std::optional<std::string_view> only_held_by,
                     std::span<const std::uint8_t> value_writable, Completion& done) override;
  Issued expire(const ExpireArgs& args, Millis max_lease_ms, const KeyAccess& access,
                Completion& done) override;
  Issued count_held(std::span<const std::string_view> keys, Completion& done) override;
  Issued value(const Caller& caller, const ValueRequest& request, const KeyAccess& access,
               Completion& done) override;
  Issued put_rule_set(const RuleSetPut& rules, Completion& done) override;
  Issued get_rule_set(Completion& done) override;
  Issued delete_rule_set(std::string_view name, Completion& done) override;
  void on_rule_set_changed(std::function<void(const std::optional<RuleSetPut>&)> fn) override {
    rules_changed_ = std::move(fn);
  }

  void complete(Completion& done, Result<Answer> result) override;
  // Runs body with the clock stopped at the instant it starts: every call of a script or a
  // transaction judges expiry and counts TTLs from that one instant, as Redis judges expiry
  // inside a script at the script's start (and it reads the clock once, not once per call).
  Status atomically(const std::function<void()>& body) override;
  void end_session(SessionId session) override;
  void shutdown() override;
  void dispatch() override;
  void advance() override;
  std::optional<Millis> next_deadline() const override;
  ServiceStats stats() const override;
  void set_event_sink(LockEventSink* sink) override;

  Store& store() { return store_; }
  const LockTable& table() const { return table_; }
  const ValueStore& values() const { return values_; }

 private:
  struct Waiting {
    Completion* done = nullptr;
    SessionId session = 0;
  };

  void on_change(const Change& change) override {
    if (const auto* granted = std::get_if<Granted>(&change)) {
      ++grants_by_mode_[static_cast<std::size_t>(granted->hold.mode)];
    } else if (const auto* group = std::get_if<GroupGranted>(&change)) {
      for (const HoldState& h : group->holds) ++grants_by_mode_[static_cast<std::size_t>(h.mode)];
    }
    last_sequence_ = store_.append(change);
  }
  void on_lock_event(const LockEventView& event) override;
  // Hands the events the log made durable to the sink, oldest first.
  void release_events();
  // Finishes `done` once the log is durable up to everything appended so far.
  // (The result is passed on by reference down to the completion: an Answer is a large
  // variant, and a script's redis.call makes several of them per script.)
  void finish_when_durable(Completion& done, Result<Answer>&& result);
  // complete(), without its copy of the result.
  void complete_with(Completion& done, Result<Answer>&& result);
  // The clock, or the instant atomically() stopped it at. Every change of the table is made at
  // an instant read here, so a lock event takes its `at` from the last one (no clock read of
  // its own).
  Millis now() const {
    last_now_ = frozen_now_ ? *frozen_now_ : clock_.now_ms();
    return last_now_;
  }
  // Finishes `done` with `result` and says the call took effect.
  Issued answer(Completion& done, Result<Answer>&& result) {
    complete_with(done, std::move(result));
    return Issued::kApplied;
  }
  std::optional<Error> over_cap(const Caller& caller, Charge charge);
  // Whether the caller may act on `key` without its handle (DEL): some hold is there and,
  // given `only_held_by`, every hold is that principal's.
  bool may_act_on(std::string_view key, Millis t, std::optional<std::string_view> only_held_by);
  Issued queued_or_answered(const Caller& caller, Result<AcquireOutcome> out, Contention contention,
                            std::string_view key, Millis timeout_ms, Completion& done);
  // embedded_values.cc: WRONGTYPE when `key` holds a typed value at `t` (a lock command's
  // check; free when no key holds one).
  std::optional<Error> typed_value_at(std::string_view key, Millis t) {
    if (values_.empty() || !values_.contains(key, t)) return std::nullopt;
    return wrong_type();
  }
  // What a typed command meets when the lock table has the key: its refusal, if any.
  std::optional<Error> lock_at(const ValueRequest& r, Millis t);
  Issued expire_value(const ExpireArgs& args, const KeyAccess& access, Millis t, Completion& done);
  Issued get_del(std::string_view key, const KeyAccess& access, Millis t, Completion& done);
  // -2: no key; -1: no end; else the milliseconds left of the value's expiry or the lease.
  std::int64_t pttl_of(std::string_view key, Millis t);
  // Appends the edits to the log; they are moved out (the caller is done with them).
  void log_edits(std::vector<ValueEdit>& edits) {
    for (ValueEdit& e : edits) last_sequence_ = store_.append(Change(std::move(e)));
  }
  void deliver(WaiterOutcome outcome);
  void release_orphan(const WaiterOutcome& outcome);
  void forget_waiter(WaiterId waiter, SessionId session);

  const Clock& clock_;
  std::optional<Millis> frozen_now_;  // set inside atomically()
  Store& store_;
  WakeLoop wake_;
  LockTable table_;
  ValueStore values_;
  RateLimiter limiter_{0};
  std::optional<RuleSetPut> rule_set_;
  std::function<void(const std::optional<RuleSetPut>&)> rules_changed_;
  std::uint64_t last_sequence_ = 0;
  std::array<std::uint64_t, 3> grants_by_mode_{};  // ServiceStats::grants_by_mode
  // The store's fault as of the last dispatch(): set, calls that change state are refused.
  std::optional<Error> store_fault_;
  ReplyQueue replies_;
  std::unordered_map<WaiterId, Waiting> waiting_;
  std::unordered_multimap<SessionId, WaiterId> waiting_by_session_;
  LockEventSink* events_ = nullptr;  // null: nobody watches
  EventQueue pending_events_;
  std::uint64_t events_dropped_ = 0;  // times set_event_sink(nullptr) emptied pending_events_
  mutable Millis last_now_ = 0;       // now()'s last answer
};

}  // namespace holdfast
