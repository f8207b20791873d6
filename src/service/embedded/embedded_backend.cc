#include "service/embedded/embedded_backend.h"
#include "service/redis_idiom.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/holder_check.h"

namespace holdfast {

EmbeddedBackend::EmbeddedBackend(const Clock& clock, Store& store, WakeLoop wake)
    : clock_(clock), store_(store), wake_(std::move(wake)), table_(this) {}

Status EmbeddedBackend::recover() {
  auto state = store_.recover();
  if (!state.ok()) return std::move(state).error();
  table_.restore(*state, now());
  values_.restore(std::move(state->values), now());
  rule_set_ = state->rule_set;
  if (rules_changed_) rules_changed_(rule_set_);
  if (wake_) store_.set_on_durable([wake = wake_](std::uint64_t) { wake(); });
  store_.set_state_source([this](StateSink& sink) {
    sink.last_token(table_.last_token());
    if (rule_set_) sink.rule_set(*rule_set_);
    sink.expect_holds(table_.held_count());
    // Leases that ended but are not swept yet go in too: the encoder child reads the table
    // twice and both reads must agree, so nothing here may depend on the clock (recovery
    // drops ended leases anyway).
    table_.for_each_durable_hold(std::numeric_limits<Millis>::min(),
                                 [&sink](const HoldView& hold) { sink.hold(hold); });
    // Values whose expiry has come but that are not dropped yet go in too, for the same reason.
    values_.for_each([&sink](std::string_view key, const Value& value, Millis expires_at) {
      sink.value(key, value, expires_at);
    });
  });
  store_.set_state_size([this] { return table_.held_count() + values_.size(); });
  return ok_status();
}

void EmbeddedBackend::complete(Completion& done, Result<Answer> result) {
  complete_with(done, std::move(result));
}

void EmbeddedBackend::complete_with(Completion& done, Result<Answer>&& result) {
  // At fault, no call changes anything (finish_when_durable takes the grants of waiters), so
  // only the order of the connection's answers can hold this one back.
  if (store_fault_ && !replies_.waits_for(done)) {
    done.finish(std::move(result));
    return;
  }
  finish_when_durable(done, std::move(result));
}

Status EmbeddedBackend::atomically(const std::function<void()>& body) {
  if (frozen_now_) {  // a script inside a transaction: the transaction's instant holds
    body();
    return ok_status();
  }
  frozen_now_ = clock_.now_ms();
  struct Thaw {
    std::optional<Millis>& at;
    ~Thaw() { at.reset(); }
  } thaw{frozen_now_};
  body();
  return ok_status();
}

void EmbeddedBackend::finish_when_durable(Completion& done, Result<Answer>&& result) {
  const std::uint64_t need = last_sequence_;
  if (done.immediate() || (replies_.empty() && store_.durable_sequence() >= need)) {
    done.finish(std::move(result));
    return;
  }
  replies_.push(need, done, std::move(result));
}

std::optional<Error> EmbeddedBackend::over_cap(const Caller& caller, Charge charge) {
  if (charge.per_hour <= 0) return std::nullopt;
  if (limiter_.cap() != charge.per_hour) limiter_.set_cap(charge.per_hour);
  auto decision = limiter_.consume(caller.principal->id, now());
  if (decision.allowed) return std::nullopt;
  return rate_limited(decision.retry_after_ms);
}

Issued EmbeddedBackend::queued_or_answered(const Caller& caller, Result<AcquireOutcome> out,
                                           Contention contention, std::string_view key,
                                           Millis timeout_ms, Completion& done) {
  if (!out.ok()) return answer(done, std::move(out).error());
  switch (out->kind) {
    case AcquireOutcome::Kind::kGranted:
      if (!out->group.holds.empty()) return answer(done, Answer(std::move(out->group)));
      return answer(done, Answer(std::move(out->hold)));
    case AcquireOutcome::Kind::kContended:
      if (contention == Contention::kNil) return answer(done, Answer());
      return answer(done, lock_timeout(key, timeout_ms));
    case AcquireOutcome::Kind::kQueued:
      waiting_.emplace(out->waiter, Waiting{&done, caller.session});
      waiting_by_session_.emplace(caller.session, out->waiter);
      return Issued::kWaiting;
  }
  return Issued::kApplied;
}

Issued EmbeddedBackend::acquire(const Caller& caller, const AcquireArgs& args,
                                Contention contention, Charge charge, Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  if (auto err = typed_value_at(args.key, now())) return answer(done, std::move(*err));
  if (auto err = over_cap(caller, charge)) return answer(done, std::move(*err));
  AcquireRequest r{args};
  if (contention == Contention::kNil) r.timeout_ms = 0;
  r.session = caller.session;
  const std::string held_by = caller.principal->held_by();
  r.held_by = held_by;
  return queued_or_answered(caller, table_.acquire(r, now()), contention, args.key, r.timeout_ms,
                            done);
}

Issued EmbeddedBackend::acquire_all(const Caller& caller, const AcquireAllArgs& args,
                                    Contention contention, Charge charge, Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  for (const KeyRequest& k : args.keys) {
    if (auto err = typed_value_at(k.key, now())) return answer(done, std::move(*err));
  }
  if (auto err = over_cap(caller, charge)) return answer(done, std::move(*err));
  AcquireAllRequest r{args};
  if (contention == Contention::kNil) r.timeout_ms = 0;
  r.session = caller.session;
  const std::string held_by = caller.principal->held_by();
  r.held_by = held_by;
  return queued_or_answered(caller, table_.acquire_all(r, now()), contention, args.keys.front().key,
                            r.timeout_ms, done);
}

Issued EmbeddedBackend::assign(const Caller& caller, const AssignArgs& args, Charge charge,
                               Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  if (auto err = typed_value_at(args.key, now())) return answer(done, std::move(*err));
  if (auto err = over_cap(caller, charge)) return answer(done, std::move(*err));
  AssignRequest r;
  r.key = args.key;
  r.holder_id = *args.holder_id;
  r.ttl_ms = args.ttl_ms;
  r.timeout_ms = args.timeout_ms;
  r.lock_delay_ms = args.lock_delay_ms.value_or(0);
  r.session = caller.session;
  const std::string held_by = caller.principal->held_by();
  r.held_by = held_by;
  return queued_or_answered(caller, table_.assign(r, now()), Contention::kError, args.key,
                            args.timeout_ms.value_or(0), done);
}

Issued EmbeddedBackend::renew(const Caller&, const RenewArgs& args, Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  auto out = table_.renew(args.key, args.handle, args.ttl_ms, now());
  if (!out.ok()) return answer(done, std::move(out).error());
  return answer(done, Answer(*out));
}

Issued EmbeddedBackend::release(const Caller&, const ReleaseArgs& args, Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  auto out = table_.release(args.key, args.handle, now());
  if (!out.ok()) return answer(done, std::move(out).error());
  return answer(done, Answer(*out));
}

Issued EmbeddedBackend::status(const Caller&, std::string_view key, Completion& done) {
  if (auto err = typed_value_at(key, now())) return answer(done, std::move(*err));
  auto out = table_.status(key, now());
  if (!out.ok()) return answer(done, std::move(out).error());
  return answer(done, Answer(std::move(*out)));
}

// GET: the value seen in place; only a shared or semaphore key takes the whole status, whose
// newest hold's value it answers.
Issued EmbeddedBackend::get_value(std::string_view key, Completion& done) {
  const Millis t = now();
  const KeyPeek p = table_.peek(key, t);
  StoredValue v;
  if (!p.in_use && !values_.empty()) {
    // A counter answers its number, as Redis answers GET of a string INCR made.
    if (const ValueCell* cell = values_.find(key, t)) {
      const auto* counter = std::get_if<std::int64_t>(&cell->value->data);
      if (counter == nullptr) return answer(done, wrong_type());
      v.value = std::to_string(*counter);
      return answer(done, Answer(std::move(v)));
    }
  }
  if (p.held) {
    v.value.emplace(p.owner);
  } else if (p.grouped) {
    auto out = table_.status(key, t);
    if (!out.ok()) return answer(done, std::move(out).error());
    if (out->held) v.value = std::move(out->hold.owner);
  }
  return answer(done, Answer(std::move(v)));
}

Issued EmbeddedBackend::list(const Caller&, std::string_view match, std::string_view after,
                             std::size_t count, Completion& done) {
  return answer(done, Answer(table_.list(match, after, count, now())));
}

Issued EmbeddedBackend::transfer(const Caller& caller, const TransferArgs& args, Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  auto out =
      table_.transfer(args.key, args.to_id, *args.from_id, caller.principal->held_by(), now());
  if (!out.ok()) return answer(done, std::move(out).error());
  return answer(done, Answer(std::move(*out)));
}

Issued EmbeddedBackend::unassign(const Caller&, const UnassignArgs& args, Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  auto out = table_.unassign(args.key, args.holder_id, now());
  if (!out.ok()) return answer(done, std::move(out).error());
  return answer(done, Answer(*out));
}

Issued EmbeddedBackend::holder(const Caller&, std::string_view key, Completion& done) {
  if (auto err = typed_value_at(key, now())) return answer(done, std::move(*err));
  auto out = table_.holder(key, now());
  if (!out.ok()) return answer(done, std::move(out).error());
  return answer(done, Answer(std::move(*out)));
}

Issued EmbeddedBackend::check(const Caller&, const CheckArgs& args, Completion& done) {
  if (auto err = typed_value_at(args.key, now())) return answer(done, std::move(*err));
  auto out = table_.holder(args.key, now());
  if (out.ok()) out = check_holder(std::move(*out), *args.holder_id);
  if (!out.ok()) return answer(done, std::move(out).error());
  return answer(done, Answer(std::move(*out)));
}

// The Redis idiom (docs/redis-locks.md). The loop runs one call at a time, so reading the key
// and then acting on it is one step.

namespace {

// Whether `st` is a hold the caller may act on without its handle.
bool acts_on(const StatusView& st, std::optional<std::string_view> only_held_by) {
  if (!st.held || !only_held_by) return st.held;
  // A shared or semaphore key: DEL and PEXPIRE act on all its holds, so all must be the
  // caller's.
  if (!st.holders.empty())
    return std::all_of(st.holders.begin(), st.holders.end(),
                       [&](const HoldState& h) { return h.held_by == *only_held_by; });
  return st.hold.held_by == *only_held_by;
}

// A shared or semaphore key as SET sees it: held as a whole, never the caller's own, and its
// newest hold's value as the previous one.
KeyPeek peek_of(const StatusView& st) {
  KeyPeek p;
  p.held = st.held;
  p.grouped = true;
  p.kind = st.hold.kind;
  p.held_by = st.hold.held_by;
  p.owner = st.hold.owner;
  p.lease_expires_at = st.hold.lease_expires_at;
  p.lock_delay_until = st.lock_delay_until;
  return p;
}

}  // namespace

// The common key (free, or one exclusive hold) is decided without copying it.
bool EmbeddedBackend::may_act_on(std::string_view key, Millis t,
                                 std::optional<std::string_view> only_held_by) {
  const KeyPeek p = table_.peek(key, t);
  if (p.grouped) return acts_on(*table_.status(key, t), only_held_by);
  return p.held && (!only_held_by || p.held_by == *only_held_by);
}

Issued EmbeddedBackend::set_value(const Caller& caller, const SetArgs& args, Charge charge,
                                  Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  const Millis t = now();
  if (!values_.empty() && values_.contains(args.key, t)) {
    // A typed value is never replaced by a lock: SET NX answers nil (the key exists, as in
    // Redis), every other SET WRONGTYPE.
    if (args.condition != SetCondition::kIfAbsent || args.get) return answer(done, wrong_type());
    return answer(done, Answer(SetOutcome{}));
  }
  if (auto err = over_cap(caller, charge)) return answer(done, std::move(*err));
  KeyPeek before = table_.peek(args.key, t);
  StatusView shared;  // a shared or semaphore key, seen whole
  if (before.grouped) {
    shared = std::move(*table_.status(args.key, t));
    before = peek_of(shared);
  }
  const std::string held_by = caller.principal->held_by();
  // A shared or semaphore key is never the caller's own to SET: it is not one hold.
  const bool own = before.held && !before.grouped && before.kind == HoldKind::kHandle &&
                   before.held_by == held_by;
  SetOutcome out;
  out.get = args.get;
  if (before.held) out.previous = std::string(before.owner);
  // A key closed by a lock-delay is not free: SET NX answers nil, SET refuses.
  SetStep step =
      decide_set(args.condition, before.held, own, before.held && before.owner == args.value,
                 !before.held && before.lock_delay_until == 0);
  if (*args.ttl_ms <= 0) step = already_ended(step);
  const bool keep_end = args.keep_ttl && own && before.lease_expires_at != kNever;
  switch (step) {
    case SetStep::kNothing:
      return answer(done, Answer(out));
    case SetStep::kRefuse:
      return answer(done, lock_held(args.key));
    case SetStep::kRenew:
      if (!keep_end) table_.extend(args.key, t + *args.ttl_ms, t);
      out.set = true;
      return answer(done, Answer(std::move(out)));
    case SetStep::kFreeOwn:
      table_.force_release(args.key, t);
      [[fallthrough]];
    case SetStep::kSetGone:
      out.set = true;
      return answer(done, Answer(std::move(out)));
    case SetStep::kTakeOver:
    case SetStep::kTake:
      break;
  }
  AcquireRequest r;
  r.key = args.key;
  r.ttl_ms = keep_end ? std::max<Millis>(before.lease_expires_at - t, 1) : *args.ttl_ms;
  r.owner = args.value;
  r.session = caller.session;
  r.held_by = held_by;
  r.no_retake = step == SetStep::kTake;
  r.take_over_own = step == SetStep::kTakeOver;
  auto granted = table_.acquire(r, t);
  out.set = granted.ok() && granted->kind == AcquireOutcome::Kind::kGranted;
  return answer(done, Answer(std::move(out)));
}

Issued EmbeddedBackend::delete_keys(std::span<const std::string_view> keys,
                                    std::optional<std::string_view> only_held_by,
                                    std::span<const std::uint8_t> value_writable,
                                    Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  const Millis t = now();
  KeyCount deleted;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string_view key = keys[i];
    if (!values_.empty() && values_.contains(key, t)) {
      if (!value_writable.empty() && value_writable[i] == 0) continue;
      values_.erase(key, t);
      ValueEdit gone;
      gone.key = key;
      gone.op = ValueEdit::Op::kDelete;
      last_sequence_ = store_.append(gone);
      ++deleted.count;
      continue;
    }
    if (!may_act_on(key, t, only_held_by)) continue;
    deleted.count += table_.force_release(key, t).released ? 1 : 0;
  }
  // Ending another principal's hold: lost in a crash, its holder would keep it.
  if (!only_held_by && deleted.count > 0) store_.require_sync();
  return answer(done, Answer(deleted));
}

Issued EmbeddedBackend::expire(const ExpireArgs& args, Millis max_lease_ms, const KeyAccess& access,
                               Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  const Millis t = now();
  if (!values_.empty() && values_.contains(args.key, t)) return expire_value(args, access, t, done);
  if (access.lock_denied) return answer(done, *access.lock_denied);
  const std::optional<std::string_view> only_held_by = access.only_held_by;
  const StatusView st = std::move(*table_.status(args.key, t));
  if (!acts_on(st, only_held_by)) return answer(done, Answer(KeyCount{0}));
  const auto to = expire_to(args, st.hold.lease_expires_at, t, max_lease_ms);
  if (!to) return answer(done, Answer(KeyCount{0}));
  const Millis at = *to;
  if (at <= t) {
    // As in Redis, an expiry that has already come deletes the key.
    table_.force_release(args.key, t);
  } else {
    table_.extend(args.key, at, t);
  }
  // Changing another principal's hold: lost in a crash, its holder would keep the old lease.
  if (!only_held_by) store_.require_sync();
  return answer(done, Answer(KeyCount{1}));
}

Issued EmbeddedBackend::count_held(std::span<const std::string_view> keys, Completion& done) {
  const Millis t = now();
  KeyCount held;
  for (std::string_view key : keys) {
    const KeyPeek p = table_.peek(key, t);
    held.count += (p.grouped ? table_.status(key, t)->held : p.held) ? 1 : 0;
    if (!p.in_use && !values_.empty() && values_.contains(key, t)) ++held.count;
  }
  return answer(done, Answer(held));
}

Issued EmbeddedBackend::put_rule_set(const RuleSetPut& rules, Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  if (rule_set_ && rule_set_->name != rules.name)
    return answer(done, Error(ErrorCode::kRulesetConflict,
                              "a lock rule set is already installed; delete it first")
                            .with("installed", rule_set_->name));
  const bool replaced = rule_set_.has_value();
  rule_set_ = rules;
  last_sequence_ = store_.append(rules);
  if (rules_changed_) rules_changed_(rule_set_);
  return answer(done, Answer(RuleSetStored{rules.name, replaced}));
}

Issued EmbeddedBackend::get_rule_set(Completion& done) { return answer(done, Answer(rule_set_)); }

Issued EmbeddedBackend::delete_rule_set(std::string_view name, Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  if (!rule_set_ || rule_set_->name != name)
    return answer(done, Error(ErrorCode::kNotFound,
                              "no rule set named " + std::string(name) + " is installed"));
  rule_set_.reset();
  last_sequence_ = store_.append(RuleSetDeleted{std::string(name)});
  if (rules_changed_) rules_changed_(rule_set_);
  return answer(done, Answer());
}

ServiceStats EmbeddedBackend::stats() const {
  const Millis closed_until = table_.grants_closed_until();
  const LockTable::HeldKinds& kinds = table_.held_kinds();
  const std::size_t held = table_.held_count();
  return ServiceStats{held,
                      values_.size(),
                      table_.waiter_count(),
                      table_.counters(),
                      store_.stats(),
                      closed_until > now() ? closed_until : 0,
                      grants_by_mode_,
                      std::array<std::size_t, 3>{held - kinds.shared - kinds.semaphore,
                                                 kinds.shared, kinds.semaphore},
                      kinds.permits_taken,
                      std::nullopt};
}

void EmbeddedBackend::forget_waiter(WaiterId waiter, SessionId session) {
  waiting_.erase(waiter);
  auto [first, last] = waiting_by_session_.equal_range(session);
  for (auto it = first; it != last; ++it) {
    if (it->second == waiter) {
      waiting_by_session_.erase(it);
      return;
    }
  }
}

void EmbeddedBackend::end_session(SessionId session) {
  // Its waiting calls end now. One whose grant is decided but not yet delivered is no longer
  // in waiting_ when dispatch() finds it, so the grant is released there.
  auto [first, last] = waiting_by_session_.equal_range(session);
  std::vector<WaiterId> ended;
  for (auto it = first; it != last; ++it) ended.push_back(it->second);
  waiting_by_session_.erase(first, last);
  for (WaiterId waiter : ended) {
    auto it = waiting_.find(waiter);
    if (it == waiting_.end()) continue;
    Completion* done = it->second.done;
    waiting_.erase(it);
    table_.cancel_waiter(waiter, now());
    complete(*done, Error(ErrorCode::kUnavailable, "the connection closed"));
  }
  table_.end_session(session, now());
}

void EmbeddedBackend::shutdown() {
  auto waiting = std::move(waiting_);
  waiting_.clear();
  waiting_by_session_.clear();
  for (auto& [waiter, w] : waiting) {
    table_.cancel_waiter(waiter, now());
    complete(*w.done, Error(ErrorCode::kUnavailable, "the server is shutting down"));
  }
}

void EmbeddedBackend::advance() {
  const Millis t = now();
  table_.advance(t);
  values_.advance(t);
}

std::optional<Millis> EmbeddedBackend::next_deadline() const {
  std::optional<Millis> at = table_.next_deadline();
  if (const auto v = values_.next_deadline(); v && (!at || *v < *at)) at = v;
  return at;
}

void EmbeddedBackend::dispatch() {
  store_fault_ = store_.fault();
  while (table_.has_outcomes()) {
    for (WaiterOutcome& o : table_.take_outcomes()) deliver(std::move(o));
  }
  store_.submit();
  replies_.release(store_.durable_sequence());
  if (!pending_events_.empty()) release_events();
}

void EmbeddedBackend::set_event_sink(LockEventSink* sink) {
  events_ = sink;
  table_.set_events(sink != nullptr ? this : nullptr);
  if (sink != nullptr) {
    sink->on_events_ready();
  } else {
    pending_events_.clear();
    ++events_dropped_;
  }
}

void EmbeddedBackend::on_lock_event(const LockEventView& event) {
  LockEventView e = event;
  e.at = last_now_;  // the instant of the change that told it
  pending_events_.push(last_sequence_, e);
}

void EmbeddedBackend::release_events() {
  const std::uint64_t durable = store_.durable_sequence();
  // The sink may stop listening while it is told (set_event_sink(nullptr) empties the queue).
  while (events_ != nullptr && !pending_events_.empty() &&
         pending_events_.front_sequence() <= durable) {
    // Told from its place in the queue (no copy), popped unless the sink emptied the queue.
    const std::uint64_t dropped = events_dropped_;
    events_->on_written_event(pending_events_.front());
    if (events_dropped_ == dropped) pending_events_.pop();
  }
}

void EmbeddedBackend::deliver(WaiterOutcome o) {
  auto it = waiting_.find(o.waiter);
  if (it == waiting_.end()) {
    if (o.granted) release_orphan(o);
    return;
  }
  Completion* done = it->second.done;
  forget_waiter(o.waiter, it->second.session);
  if (!o.granted) {
    complete(*done, lock_timeout(o.key, o.timeout_ms));
  } else if (o.multi) {
    finish_when_durable(*done, Answer(std::move(o.group)));
  } else {
    finish_when_durable(*done, Answer(std::move(o.hold)));
  }
}

// A grant whose waiter has nobody left to tell: free the key again at once.
void EmbeddedBackend::release_orphan(const WaiterOutcome& o) {
  if (o.multi) {
    (void)table_.release(o.key, o.group.handle.to_string(), now());
  } else if (o.hold.kind == HoldKind::kAssigned) {
    (void)table_.unassign(o.key, o.hold.holder_id, now());
  } else {
    (void)table_.release(o.key, o.hold.handle.to_string(), now());
  }
}

}  // namespace holdfast
