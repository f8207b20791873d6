#include "service/policy.h"

#include <algorithm>
#include <string>
#include <variant>

#include "core/list_cursor.h"
#include "core/validation.h"
#include "core/values/limits.h"

namespace holdfast {

// A blocking acquire or assign by a member with a cap: the policy keeps its arguments, passes
// it to the backend as its own completion, and parks it while the cap says wait.
struct Policy::Gated final : Completion {
  template <typename Copy>
  explicit Gated(Copy copy, Millis timeout) : call(std::move(copy)), timeout_ms(timeout) {}

  Policy* policy = nullptr;
  Completion* done = nullptr;
  Caller caller;
  std::variant<AcquireCopy, AssignCopy> call;  // checked and capped
  Millis timeout_ms = 0;  // as asked (after the 24 h cap): what LOCK_TIMEOUT reports
  std::string key;        // what LOCK_TIMEOUT names
  Millis deadline = 0;
  std::uint32_t heap_index = kNotInHeap;

  void finish(Result<Answer> result) override { policy->gated_finished(*this, std::move(result)); }
};

std::uint32_t& Policy::GatedIndex::operator()(Gated* g) const { return g->heap_index; }

namespace {

Error forbidden(std::string_view what) {
  return Error(ErrorCode::kForbidden, std::string(what) + " needs the admin or owner role");
}

std::optional<Error> check_acquire(const Caller& caller, const AcquireArgs& a, bool waits) {
  if (auto err = check_key(a.key)) return err;
  if (auto err = check_ttl(a.ttl_ms)) return err;
  if (waits) {
    if (auto err = check_timeout(a.timeout_ms)) return err;
  }
  if (a.owner) {
    if (auto err = check_label(*a.owner, "owner")) return err;
  }
  if (a.session_scoped && caller.session == 0)
    return invalid_argument("a session-scoped hold needs a client connection");
  if (a.mode == LockMode::kSemaphore) {
    if (a.permits < 1 || a.permits > kMaxPermits)
      return invalid_argument("a semaphore has 1 to " + std::to_string(kMaxPermits) +
                              " permits, not " + std::to_string(a.permits));
    if (a.take < 1 || a.take > a.permits)
      return invalid_argument("a grant takes 1 to " + std::to_string(a.permits) +
                              " permits (the semaphore's PERMITS), not " + std::to_string(a.take));
  } else if (a.take != 1 || a.permits != 0) {
    return invalid_argument("permits are for semaphores only: PERMITS cannot go with MODE");
  }
  if (a.lock_delay_ms) return check_lock_delay(*a.lock_delay_ms);
  return std::nullopt;
}

std::optional<Error> check_assign(const AssignArgs& a) {
  if (auto err = check_key(a.key)) return err;
  if (auto err = check_label(*a.holder_id, "holderId")) return err;
  if (a.ttl_ms) {
    if (auto err = check_ttl(*a.ttl_ms)) return err;
  }
  if (a.timeout_ms) {
    if (auto err = check_timeout(*a.timeout_ms)) return err;
  }
  if (a.lock_delay_ms) return check_lock_delay(*a.lock_delay_ms);
  return std::nullopt;
}

Millis cap_wait(Millis timeout_ms) { return std::min(timeout_ms, kMaxLeaseMs); }

}  // namespace

Policy::Policy(LockBackend& backend, const Clock& clock, PolicyOptions options)
    : backend_(backend),
      clock_(clock),
      max_lease_ms_(options.max_lease_ms),
      per_hour_(options.acquire_per_user_per_hour),
      identities_(options.identities) {
  backend_.on_rule_set_changed(
      [this](const std::optional<RuleSetPut>& stored) { rule_set_changed(stored); });
}

Policy::~Policy() = default;

Issued Policy::refuse(Completion& done, Error error) {
  backend_.complete(done, std::move(error));
  return Issued::kApplied;
}

std::optional<Error> Policy::denied(const Caller& caller, LockOperation op, std::string_view key,
                                    RuleRequest asked) const {
  if (!asked.operation) asked.operation = operation_name(op);
  return check_access(rules(), *caller.principal, op, key, asked);
}

bool Policy::may_read_all(const Principal& caller) const {
  return caller.is_privileged() || rules() == nullptr;
}

bool Policy::may_read(const Principal& caller, std::string_view key) const {
  if (may_read_all(caller)) return true;
  RuleRequest asked;
  asked.operation = "watch";
  return !check_access(rules(), caller, LockOperation::kAcquire, key, asked).has_value();
}

RuleRequest Policy::acquire_request(const AcquireArgs& args, bool waits) {
  RuleRequest asked;
  asked.operation = waits ? "acquire" : "tryAcquire";
  asked.mode = mode_name(args.mode);
  if (args.mode == LockMode::kSemaphore) {
    asked.permits = args.permits;
    asked.take = args.take;
  }
  return asked;
}

Result<std::string_view> Policy::holder_or_caller(const Caller& caller,
                                                  std::optional<std::string_view> given,
                                                  std::string_view field) const {
  if (given) return *given;
  if (identities_ && !caller.principal->is_function())
    return std::string_view(caller.principal->id);
  const std::string why = identities_ ? "a function has no holder id of its own"
                                      : "in local open mode callers have no identity of their own";
  return invalid_argument(std::string(field) + " is required: " + why)
      .with("field", std::string(field));
}

Charge Policy::charge_for(const Caller& caller) const {
  if (per_hour_ <= 0 || caller.principal->is_function()) return Charge{};
  return Charge{per_hour_};
}

Issued Policy::acquire(const Caller& caller, const AcquireArgs& args, Completion& done) {
  if (auto err = denied(caller, LockOperation::kAcquire, args.key, acquire_request(args, true)))
    return refuse(done, *err);
  if (auto err = check_acquire(caller, args, /*waits=*/true)) return refuse(done, *err);
  AcquireArgs capped = args;
  capped.ttl_ms = cap_ttl(args.ttl_ms);
  capped.timeout_ms = cap_wait(args.timeout_ms);
  capped.lock_delay_ms = lock_delay_or_default(args.lock_delay_ms);
  const Charge charge = charge_for(caller);
  if (charge.per_hour > 0 && capped.timeout_ms > 0)
    return gate(caller, done, std::make_unique<Gated>(AcquireCopy(capped), capped.timeout_ms));
  return backend_.acquire(caller, capped, Contention::kError, charge, done);
}

Issued Policy::try_acquire(const Caller& caller, const AcquireArgs& args, Completion& done) {
  if (auto err = denied(caller, LockOperation::kAcquire, args.key, acquire_request(args, false)))
    return refuse(done, *err);
  if (auto err = check_acquire(caller, args, /*waits=*/false)) return refuse(done, *err);
  AcquireArgs capped = args;
  capped.ttl_ms = cap_ttl(args.ttl_ms);
  capped.timeout_ms = 0;
  capped.lock_delay_ms = lock_delay_or_default(args.lock_delay_ms);
  return backend_.acquire(caller, capped, Contention::kNil, charge_for(caller), done);
}

Result<AcquireAllArgs> Policy::vet_all(const Caller& caller, const AcquireAllArgs& args,
                                       bool waits) const {
  if (args.keys.empty() || args.keys.size() > kMaxGroupKeys)
    return invalid_argument("a multi-key request names 1 to " + std::to_string(kMaxGroupKeys) +
                            " keys, not " + std::to_string(args.keys.size()))
        .with("field", std::string("keys"));
  for (std::size_t i = 0; i < args.keys.size(); ++i) {
    // Every key goes through the rules as an acquire of it would; one denial denies all.
    const AcquireArgs k = args.one(i);
    if (auto err = denied(caller, LockOperation::kAcquire, k.key, acquire_request(k, waits)))
      return *err;
    if (auto err = check_acquire(caller, k, waits)) return *err;
  }
  AcquireAllArgs vetted = args;
  std::sort(vetted.keys.begin(), vetted.keys.end(),
            [](const KeyRequest& a, const KeyRequest& b) { return a.key < b.key; });
  for (std::size_t i = 1; i < vetted.keys.size(); ++i)
    if (vetted.keys[i].key == vetted.keys[i - 1].key)
      return invalid_argument("a key appears more than once in the request")
          .with("key", std::string(vetted.keys[i].key));
  vetted.ttl_ms = cap_ttl(args.ttl_ms);
  vetted.timeout_ms = waits ? cap_wait(args.timeout_ms) : 0;
  return vetted;
}

// A member's multi-key acquire counts as one attempt; over the cap it answers RATE_LIMITED at
// once rather than waiting in the rate gate (docs/lock-kinds.md).
Issued Policy::acquire_all(const Caller& caller, const AcquireAllArgs& args, Completion& done) {
  Result<AcquireAllArgs> vetted = vet_all(caller, args, /*waits=*/true);
  if (!vetted.ok()) return refuse(done, std::move(vetted).error());
  return backend_.acquire_all(caller, *vetted, Contention::kError, charge_for(caller), done);
}

Issued Policy::try_acquire_all(const Caller& caller, const AcquireAllArgs& args, Completion& done) {
  Result<AcquireAllArgs> vetted = vet_all(caller, args, /*waits=*/false);
  if (!vetted.ok()) return refuse(done, std::move(vetted).error());
  return backend_.acquire_all(caller, *vetted, Contention::kNil, charge_for(caller), done);
}

Issued Policy::renew(const Caller& caller, const RenewArgs& args, Completion& done) {
  if (auto err = denied(caller, LockOperation::kRenew, args.key)) return refuse(done, *err);
  if (auto err = check_key(args.key)) return refuse(done, *err);
  if (auto err = check_handle_text(args.handle)) return refuse(done, *err);
  if (auto err = check_ttl(args.ttl_ms)) return refuse(done, *err);
  RenewArgs capped = args;
  capped.ttl_ms = cap_ttl(args.ttl_ms);
  return backend_.renew(caller, capped, done);
}

Issued Policy::release(const Caller& caller, const ReleaseArgs& args, Completion& done) {
  // Never gated by rules: holding the handle proves the holder.
  if (auto err = check_key(args.key)) return refuse(done, *err);
  if (auto err = check_handle_text(args.handle)) return refuse(done, *err);
  return backend_.release(caller, args, done);
}

Issued Policy::status(const Caller& caller, std::string_view key, Completion& done) {
  if (auto err = check_key(key)) return refuse(done, *err);
  return backend_.status(caller, key, done);
}

Issued Policy::get_value(const Caller&, std::string_view key, Completion& done) {
  if (auto err = check_key(key)) return refuse(done, *err);
  return backend_.get_value(key, done);
}

Issued Policy::list(const Caller& caller, const ListArgs& args, Completion& done) {
  if (!caller.principal->is_privileged()) return refuse(done, forbidden("listing locks"));
  auto after = decode_list_cursor(args.cursor);
  if (!after)
    return refuse(done, invalid_argument("cursor is not one this server returned")
                            .with("field", std::string("cursor")));
  if (args.count < 1 || args.count > kMaxListPage)
    return refuse(done,
                  invalid_argument("COUNT must be between 1 and " + std::to_string(kMaxListPage))
                      .with("field", std::string("count"))
                      .with("count", static_cast<std::int64_t>(args.count)));
  return backend_.list(caller, args.match, *after, args.count, done);
}

Issued Policy::assign(const Caller& caller, const AssignArgs& args, Completion& done) {
  auto holder_id = holder_or_caller(caller, args.holder_id, "holderId");
  if (!holder_id.ok()) return refuse(done, std::move(holder_id).error());
  RuleRequest asked;
  asked.mode = mode_name(LockMode::kExclusive);
  asked.holder_id = *holder_id;
  if (auto err = denied(caller, LockOperation::kAssign, args.key, asked)) return refuse(done, *err);
  AssignArgs capped = args;
  capped.holder_id = *holder_id;
  if (auto err = check_assign(capped)) return refuse(done, *err);
  if (args.ttl_ms) capped.ttl_ms = cap_ttl(*args.ttl_ms);
  if (args.timeout_ms) capped.timeout_ms = cap_wait(*args.timeout_ms);
  capped.lock_delay_ms = lock_delay_or_default(args.lock_delay_ms);
  const Charge charge = charge_for(caller);
  if (charge.per_hour > 0 && capped.timeout_ms.value_or(0) > 0)
    return gate(caller, done, std::make_unique<Gated>(AssignCopy(capped), *capped.timeout_ms));
  return backend_.assign(caller, capped, charge, done);
}

Issued Policy::transfer(const Caller& caller, const TransferArgs& args, Completion& done) {
  auto from_id = holder_or_caller(caller, args.from_id, "fromId");
  if (!from_id.ok()) return refuse(done, std::move(from_id).error());
  RuleRequest asked;
  asked.to_id = args.to_id;
  asked.from_id = *from_id;
  if (auto err = denied(caller, LockOperation::kTransfer, args.key, asked))
    return refuse(done, *err);
  if (auto err = check_key(args.key)) return refuse(done, *err);
  if (auto err = check_label(args.to_id, "toId")) return refuse(done, *err);
  if (auto err = check_label(*from_id, "fromId")) return refuse(done, *err);
  TransferArgs resolved = args;
  resolved.from_id = *from_id;
  return backend_.transfer(caller, resolved, done);
}

Issued Policy::unassign(const Caller& caller, const UnassignArgs& args, Completion& done) {
  // Without a holder id: the caller's own assignment; "whoever holds it" only for callers
  // without one (open mode, functions).
  UnassignArgs resolved = args;
  if (!args.holder_id && identities_ && !caller.principal->is_function())
    resolved.holder_id = caller.principal->id;
  RuleRequest asked;
  asked.holder_id = resolved.holder_id;
  if (auto err = denied(caller, LockOperation::kUnassign, args.key, asked))
    return refuse(done, *err);
  if (auto err = check_key(args.key)) return refuse(done, *err);
  if (resolved.holder_id) {
    if (auto err = check_label(*resolved.holder_id, "holderId")) return refuse(done, *err);
  }
  return backend_.unassign(caller, resolved, done);
}

Issued Policy::holder(const Caller& caller, std::string_view key, Completion& done) {
  if (auto err = check_key(key)) return refuse(done, *err);
  return backend_.holder(caller, key, done);
}

Issued Policy::check(const Caller& caller, const CheckArgs& args, Completion& done) {
  auto holder_id = holder_or_caller(caller, args.holder_id, "holderId");
  if (!holder_id.ok()) return refuse(done, std::move(holder_id).error());
  if (auto err = check_key(args.key)) return refuse(done, *err);
  if (auto err = check_label(*holder_id, "holderId")) return refuse(done, *err);
  return backend_.check(caller, CheckArgs{args.key, *holder_id}, done);
}

// The Redis idiom (docs/redis-locks.md).

std::optional<std::string_view> Policy::own_holds(const Caller& caller,
                                                  const std::string& held_by) {
  if (caller.principal->is_privileged()) return std::nullopt;
  return std::string_view(held_by);
}

Issued Policy::set_value(const Caller& caller, const SetArgs& args, Completion& done) {
  // SET never waits: a rule sees an exclusive tryAcquire.
  RuleRequest asked;
  asked.operation = "tryAcquire";
  asked.mode = mode_name(LockMode::kExclusive);
  if (auto err = denied(caller, LockOperation::kAcquire, args.key, asked))
    return refuse(done, *err);
  if (auto err = check_key(args.key)) return refuse(done, *err);
  if (auto err = check_label(args.value, "value")) return refuse(done, *err);
  SetArgs capped = args;
  if (args.expires_at) capped.ttl_ms = std::max<Millis>(*args.expires_at - clock_.now_ms(), 0);
  capped.expires_at.reset();
  if (args.expires_at && *capped.ttl_ms == 0) {
    // An instant already past (EXAT, PXAT): the backend leaves the key free (redis_idiom.h).
  } else if (capped.ttl_ms) {
    if (auto err = check_ttl(*capped.ttl_ms)) return refuse(done, *err);
    capped.ttl_ms = cap_ttl(*capped.ttl_ms);
  } else {
    capped.ttl_ms = max_lease_ms_;  // no expiry: as long as a lease may last
  }
  return backend_.set_value(caller, capped, charge_for(caller), done);
}

Issued Policy::delete_keys(const Caller& caller, std::span<const std::string_view> keys,
                           Completion& done) {
  for (std::string_view key : keys)
    if (auto err = check_key(key)) return refuse(done, *err);
  const std::string held_by = caller.principal->held_by();
  // Without a rule set (or for a caller it does not bind) every typed value may go.
  std::vector<std::uint8_t> writable;
  if (rules() != nullptr && !caller.principal->is_privileged()) {
    writable.reserve(keys.size());
    for (std::string_view key : keys) writable.push_back(value_write_denied(caller, key) ? 0 : 1);
  }
  return backend_.delete_keys(keys, own_holds(caller, held_by), writable, done);
}

Issued Policy::expire(const Caller& caller, const ExpireArgs& args, Completion& done) {
  // The key decides which rule applies (a lock's lease: renew; a typed value: a write), and
  // only the backend knows what it holds: both decisions go along.
  KeyAccess access;
  access.lock_denied = denied(caller, LockOperation::kRenew, args.key);
  access.value_denied = value_write_denied(caller, args.key);
  if (auto err = check_key(args.key)) return refuse(done, *err);
  const std::string held_by = caller.principal->held_by();
  access.only_held_by = own_holds(caller, held_by);
  return backend_.expire(args, max_lease_ms_, access, done);
}

Issued Policy::count_held(const Caller& caller, std::span<const std::string_view> keys,
                          Completion& done) {
  (void)caller;  // status is open to every caller; so is whether a key is held
  for (std::string_view key : keys)
    if (auto err = check_key(key)) return refuse(done, *err);
  return backend_.count_held(keys, done);
}

// Typed values (docs/redis-locks.md, "Typed values").

std::optional<Error> Policy::value_write_denied(const Caller& caller, std::string_view key) const {
  RuleRequest asked;
  asked.operation = "write";
  return denied(caller, LockOperation::kAcquire, key, asked);
}

Issued Policy::value(const Caller& caller, const ValueRequest& request, Completion& done) {
  if (value_op_writes(request.op)) {
    if (auto err = value_write_denied(caller, request.key)) return refuse(done, *err);
  }
  if (auto err = check_key(request.key)) return refuse(done, *err);
  for (std::string_view item : request.items) {
    if (item.size() > kMaxElementBytes)
      return refuse(done, invalid_argument("a member, field, value or list element holds at most " +
                                           std::to_string(kMaxElementBytes) + " bytes, not " +
                                           std::to_string(item.size()))
                              .with("bytes", static_cast<std::int64_t>(item.size())));
  }
  if (request.op != ValueOp::kGetDel) return backend_.value(caller, request, KeyAccess{}, done);
  // GETDEL of a lock: as DEL. (Only it needs the caller's heldBy, a string made per call.)
  KeyAccess access;
  const std::string held_by = caller.principal->held_by();
  access.only_held_by = own_holds(caller, held_by);
  return backend_.value(caller, request, access, done);
}

Issued Policy::set_rule_set(const Caller& caller, std::string_view toml, Completion& done) {
  if (!caller.principal->is_privileged()) return refuse(done, forbidden("changing the rule set"));
  auto parsed = parse_rule_set(toml);
  if (!parsed.ok()) return refuse(done, std::move(parsed).error());
  RuleSetPut put{parsed->name, parsed->toml};
  pushed_ = std::move(*parsed);
  return backend_.put_rule_set(put, done);
}

Issued Policy::get_rule_set(const Caller& caller, Completion& done) {
  if (!caller.principal->is_privileged()) return refuse(done, forbidden("reading the rule set"));
  return backend_.get_rule_set(done);
}

Issued Policy::delete_rule_set(const Caller& caller, std::string_view name, Completion& done) {
  if (!caller.principal->is_privileged()) return refuse(done, forbidden("changing the rule set"));
  return backend_.delete_rule_set(name, done);
}

void Policy::rule_set_changed(const std::optional<RuleSetPut>& stored) {
  if (!stored) {
    rules_.reset();
    return;
  }
  if (pushed_ && pushed_->name == stored->name && pushed_->toml == stored->toml) {
    rules_ = std::move(pushed_);
    pushed_.reset();
    return;
  }
  auto parsed = parse_rule_set(stored->toml);
  // A stored set was compiled when it was pushed; one that no longer compiles (a newer
  // server's syntax) leaves the previous set in force rather than opening every key.
  if (parsed.ok()) rules_ = std::move(*parsed);
}

// The rate gate.

Issued Policy::gate(const Caller& caller, Completion& done, std::unique_ptr<Gated> call) {
  call->policy = this;
  call->done = &done;
  call->caller = caller;
  call->key = std::visit([](const auto& c) { return std::string(c.args().key); }, call->call);
  const Millis now = clock_.now_ms();
  call->deadline = now + call->timeout_ms;
  Gated& g = *call;
  live_.emplace(&g, std::move(call));
  run_gated(g, now);
  return Issued::kWaiting;
}

void Policy::run_gated(Gated& g, Millis now) {
  const Millis left = std::max<Millis>(g.deadline - now, 1);
  const Charge charge{per_hour_};
  if (const auto* assign = std::get_if<AssignCopy>(&g.call)) {
    AssignArgs a = assign->args();
    a.timeout_ms = left;
    (void)backend_.assign(g.caller, a, charge, g);
  } else {
    AcquireArgs a = std::get<AcquireCopy>(g.call).args();
    a.timeout_ms = left;
    (void)backend_.acquire(g.caller, a, Contention::kError, charge, g);
  }
}

void Policy::gated_finished(Gated& g, Result<Answer> result) {
  if (!result.ok() && result.error().code == ErrorCode::kRateLimited) {
    Millis retry_after = 0;
    for (const auto& [name, value] : result.error().details)
      if (name == "retryAfterMs") retry_after = std::get<std::int64_t>(value);
    wait_for_slot(g, retry_after);
    return;
  }
  if (!result.ok() && result.error().code == ErrorCode::kLockTimeout) {
    result = lock_timeout(g.key, g.timeout_ms);  // the timeout it asked for, not what was left
  }
  Completion* done = g.done;
  live_.erase(&g);
  done->finish(std::move(result));
}

void Policy::wait_for_slot(Gated& g, Millis retry_after_ms) {
  const Millis now = clock_.now_ms();
  if (now >= g.deadline) {
    Completion* done = g.done;
    Error timeout = lock_timeout(g.key, g.timeout_ms);
    live_.erase(&g);
    backend_.complete(*done, std::move(timeout));
    return;
  }
  parked_.set(&g, std::min(now + std::max<Millis>(retry_after_ms, 1), g.deadline));
  parked_by_session_.emplace(g.caller.session, &g);
}

void Policy::unpark(Gated& g) {
  parked_.remove(&g);
  auto [first, last] = parked_by_session_.equal_range(g.caller.session);
  for (auto it = first; it != last; ++it) {
    if (it->second == &g) {
      parked_by_session_.erase(it);
      break;
    }
  }
}

void Policy::advance() {
  backend_.advance();
  const Millis now = clock_.now_ms();
  while (!parked_.empty() && parked_.top_deadline() <= now) {
    Gated& g = *parked_.top();
    unpark(g);
    if (now >= g.deadline) {
      wait_for_slot(g, 0);  // answers LOCK_TIMEOUT
    } else {
      run_gated(g, now);
    }
  }
}

std::optional<Millis> Policy::next_deadline() const {
  std::optional<Millis> at = backend_.next_deadline();
  if (!parked_.empty() && (!at || parked_.top_deadline() < *at)) at = parked_.top_deadline();
  return at;
}

void Policy::end_session(SessionId session) {
  auto [first, last] = parked_by_session_.equal_range(session);
  std::vector<Gated*> gone;
  for (auto it = first; it != last; ++it) gone.push_back(it->second);
  parked_by_session_.erase(first, last);
  for (Gated* g : gone) {
    parked_.remove(g);
    Completion* done = g->done;
    live_.erase(g);
    backend_.complete(*done, Error(ErrorCode::kUnavailable, "the connection closed"));
  }
  // Gated calls inside the backend finish through it (UNAVAILABLE), like any other.
  backend_.end_session(session);
}

void Policy::shutdown() {
  while (!parked_.empty()) {
    Gated& g = *parked_.top();
    unpark(g);
    Completion* done = g.done;
    live_.erase(&g);
    backend_.complete(*done, Error(ErrorCode::kUnavailable, "the server is shutting down"));
  }
  backend_.shutdown();
}

}  // namespace holdfast
