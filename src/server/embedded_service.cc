#include "server/embedded_service.h"

#include <algorithm>
#include <limits>

#include "core/validation.h"

namespace holdfast {

EmbeddedService::EmbeddedService(const Clock& clock, Store& store, ServiceOptions options)
    : clock_(clock), store_(store), table_(options.table, this), limiter_(options.acquire_per_user_per_hour) {}

std::optional<Millis> EmbeddedService::over_limit(const Principal& principal) {
  if (limiter_.cap() <= 0 || principal.is_function()) return std::nullopt;
  auto d = limiter_.consume(principal.id, now());
  if (d.allowed) return std::nullopt;
  return d.retry_after_ms;
}

namespace {

Error rate_limited(Millis retry_after_ms) {
  return Error(ErrorCode::kRateLimited, "too many acquire attempts; try again later").with("retryAfterMs", retry_after_ms);
}

}  // namespace

EmbeddedService::Deferred EmbeddedService::make_deferred(const Caller& caller, WaiterClient* client,
                                                         std::string_view key, Millis timeout_ms) const {
  Deferred d;
  d.deadline = now() + std::min(timeout_ms, kMaxLeaseMs);
  d.timeout_ms = timeout_ms;
  d.principal = *caller.principal;
  d.session = caller.session;
  d.key = std::string(key);
  d.client = client;
  return d;
}

Result<AcquireOutcome> EmbeddedService::defer(Deferred d, Millis retry_after_ms) {
  d.id = kDeferredBit | ++last_deferred_;
  const Millis at = std::min(now() + retry_after_ms, d.deadline);
  WaiterId id = d.id;
  deferred_.emplace(at, std::move(d));
  AcquireOutcome out;
  out.kind = AcquireOutcome::Kind::kQueued;
  out.waiter = id;
  return out;
}

void EmbeddedService::run_deferred(Millis now_ms) {
  while (!deferred_.empty() && deferred_.begin()->first <= now_ms) {
    Deferred d = std::move(deferred_.begin()->second);
    deferred_.erase(deferred_.begin());
    WaiterOutcome timed_out;
    timed_out.waiter = d.id;
    timed_out.session = d.session;
    timed_out.assign = d.assign;
    timed_out.key = d.key;
    timed_out.timeout_ms = d.timeout_ms;
    if (now_ms >= d.deadline) {
      deferred_outcomes_.emplace_back(d.client, std::move(timed_out));
      continue;
    }
    auto retry = over_limit(d.principal);
    if (retry) {
      const Millis at = std::min(now_ms + *retry, d.deadline);
      deferred_.emplace(at, std::move(d));
      continue;
    }
    // The slot is ours: run the request with the time it has left.
    const Millis left = d.deadline - now_ms;
    Result<AcquireOutcome> out = Error(ErrorCode::kInternal, "unreachable");
    const std::string held_by = d.principal.held_by();
    if (d.assign) {
      AssignRequest r;
      r.key = d.key;
      r.holder_id = d.holder_id;
      r.ttl_ms = d.ttl_ms;
      r.timeout_ms = left;
      r.session = d.session;
      r.held_by = held_by;
      out = table_.assign(r, now_ms);
    } else {
      AcquireRequest r;
      r.key = d.key;
      r.ttl_ms = d.ttl_ms.value_or(0);
      r.timeout_ms = left;
      if (d.owner) r.owner = *d.owner;
      r.session_scoped = d.session_scoped;
      r.session = d.session;
      r.held_by = held_by;
      out = table_.acquire(r, now_ms);
    }
    if (!out.ok()) {
      deferred_outcomes_.emplace_back(d.client, std::move(timed_out));  // validated before; cannot happen
      continue;
    }
    if (out->kind == AcquireOutcome::Kind::kQueued) {
      waiting_[out->waiter] = d.client;
      aliases_[d.id] = out->waiter;
      continue;
    }
    WaiterOutcome done = std::move(timed_out);
    if (out->kind == AcquireOutcome::Kind::kGranted) {
      done.granted = true;
      done.hold = std::move(out->hold);
    }
    deferred_outcomes_.emplace_back(d.client, std::move(done));
  }
}

bool EmbeddedService::cancel_deferred(WaiterId id) {
  for (auto it = deferred_.begin(); it != deferred_.end(); ++it) {
    if (it->second.id == id) {
      deferred_.erase(it);
      return true;
    }
  }
  return false;
}

std::optional<Millis> EmbeddedService::next_deadline() const {
  auto at = table_.next_deadline();
  if (!deferred_.empty() && (!at || deferred_.begin()->first < *at)) at = deferred_.begin()->first;
  return at;
}

Status EmbeddedService::recover() {
  auto state = store_.recover();
  if (!state.ok()) return std::move(state).error();
  table_.restore(*state, now());
  if (state->rule_set) {
    auto rules = parse_rule_set(state->rule_set->toml);
    if (!rules.ok())
      return Error(ErrorCode::kInternal, "the stored rule set no longer compiles: " + rules.error().message);
    rules_ = std::move(*rules);
  }
  store_.set_state_source([this](StateSink& sink) {
    sink.last_token(table_.last_token());
    if (rules_) sink.rule_set(RuleSetPut{rules_->name, rules_->toml});
    sink.expect_holds(table_.held_count());
    // Leases that ended but are not swept yet go in too: the encoder child reads the table
    // twice and both reads must agree, so nothing here may depend on the clock (recovery
    // drops ended leases anyway).
    table_.for_each_durable_hold(std::numeric_limits<Millis>::min(),
                                 [&sink](const HoldView& hold) { sink.hold(hold); });
  });
  return ok_status();
}

void EmbeddedService::on_change(const Change& change) { last_sequence_ = store_.append(change); }

Result<AcquireOutcome> EmbeddedService::acquire(const Caller& caller, const AcquireArgs& args,
                                        WaiterClient* client) {
  AcquireRequest r;
  r.key = args.key;
  r.ttl_ms = args.ttl_ms;
  r.timeout_ms = args.timeout_ms;
  r.owner = args.owner;
  r.session_scoped = args.session_scoped;
  r.session = caller.session;
  const std::string held_by = caller.principal->held_by();
  r.held_by = held_by;
  if (auto denied = gate(caller, LockOperation::kAcquire, args.key)) return std::move(*denied);
  if (limiter_.cap() > 0) {
    // Validate first: a malformed request is refused without counting against the cap.
    if (auto err = check_key(args.key)) return std::move(*err);
    if (auto err = check_ttl(args.ttl_ms)) return std::move(*err);
    if (auto err = check_timeout(args.timeout_ms)) return std::move(*err);
    if (args.owner) {
      if (auto err = check_label(*args.owner, "owner")) return std::move(*err);
    }
    if (auto retry = over_limit(*caller.principal)) {
      if (args.timeout_ms == 0) return rate_limited(*retry);
      Deferred d = make_deferred(caller, client, args.key, args.timeout_ms);
      if (args.owner) d.owner = std::string(*args.owner);
      d.session_scoped = args.session_scoped;
      d.ttl_ms = args.ttl_ms;
      return defer(std::move(d), *retry);
    }
  }
  auto out = table_.acquire(r, now());
  if (out.ok() && out->kind == AcquireOutcome::Kind::kQueued) waiting_[out->waiter] = client;
  return out;
}

Result<RenewOutcome> EmbeddedService::renew(const Caller& caller, std::string_view key, std::string_view handle,
                                    Millis ttl_ms) {
  if (auto denied = gate(caller, LockOperation::kRenew, key)) return std::move(*denied);
  return table_.renew(key, handle, ttl_ms, now());
}

Result<ReleaseOutcome> EmbeddedService::release(const Caller&, std::string_view key, std::string_view handle) {
  return table_.release(key, handle, now());
}

Result<StatusView> EmbeddedService::status(const Caller&, std::string_view key) {
  return table_.status(key, now());
}

Result<ListPage> EmbeddedService::list(const Caller& caller, std::string_view match, std::string_view cursor,
                               std::size_t count) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "listing locks needs the admin or owner role");
  return table_.list(match, cursor, count, now());
}

Result<AcquireOutcome> EmbeddedService::assign(const Caller& caller, const AssignArgs& args,
                                       WaiterClient* client) {
  AssignRequest r;
  r.key = args.key;
  r.holder_id = args.holder_id;
  r.ttl_ms = args.ttl_ms;
  r.timeout_ms = args.timeout_ms;
  r.session = caller.session;
  const std::string held_by = caller.principal->held_by();
  r.held_by = held_by;
  if (auto denied = gate(caller, LockOperation::kAssign, args.key)) return std::move(*denied);
  if (limiter_.cap() > 0) {
    if (auto err = check_key(args.key)) return std::move(*err);
    if (auto err = check_label(args.holder_id, "holderId")) return std::move(*err);
    if (auto retry = over_limit(*caller.principal)) {
      if (!args.timeout_ms || *args.timeout_ms == 0) return rate_limited(*retry);
      Deferred d = make_deferred(caller, client, args.key, *args.timeout_ms);
      d.assign = true;
      d.holder_id = std::string(args.holder_id);
      d.ttl_ms = args.ttl_ms;
      return defer(std::move(d), *retry);
    }
  }
  auto out = table_.assign(r, now());
  if (out.ok() && out->kind == AcquireOutcome::Kind::kQueued) waiting_[out->waiter] = client;
  return out;
}

Result<HoldState> EmbeddedService::transfer(const Caller& caller, std::string_view key,
                                    std::string_view to_id, std::string_view from_id) {
  if (auto denied = gate(caller, LockOperation::kTransfer, key)) return std::move(*denied);
  return table_.transfer(key, to_id, from_id, caller.principal->held_by(), now());
}

Result<ReleaseOutcome> EmbeddedService::unassign(const Caller& caller, std::string_view key,
                                         std::optional<std::string_view> holder_id) {
  if (auto denied = gate(caller, LockOperation::kUnassign, key)) return std::move(*denied);
  return table_.unassign(key, holder_id, now());
}

Result<HolderView> EmbeddedService::holder(const Caller&, std::string_view key) {
  return table_.holder(key, now());
}

Result<bool> EmbeddedService::set_rule_set(const Caller& caller, std::string_view toml) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "changing the rule set needs the admin or owner role");
  auto parsed = parse_rule_set(toml);
  if (!parsed.ok()) return std::move(parsed).error();
  if (rules_ && rules_->name != parsed->name)
    return Error(ErrorCode::kRulesetConflict, "a lock rule set is already installed; delete it first")
        .with("installed", rules_->name);
  const bool replaced = rules_.has_value();
  rules_ = std::move(*parsed);
  last_sequence_ = store_.append(RuleSetPut{rules_->name, rules_->toml});
  return replaced;
}

Result<std::optional<RuleSetPut>> EmbeddedService::get_rule_set(const Caller& caller) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "reading the rule set needs the admin or owner role");
  std::optional<RuleSetPut> out;
  if (rules_) out = RuleSetPut{rules_->name, rules_->toml};
  return out;
}

ServiceStats EmbeddedService::stats() const {
  return ServiceStats{table_.held_count(), table_.waiter_count(), table_.counters(), store_.stats()};
}

Status EmbeddedService::delete_rule_set(const Caller& caller, std::string_view name) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "changing the rule set needs the admin or owner role");
  if (!rules_ || rules_->name != name)
    return Error(ErrorCode::kNotFound, "no rule set named " + std::string(name) + " is installed");
  rules_.reset();
  last_sequence_ = store_.append(RuleSetDeleted{std::string(name)});
  return ok_status();
}

void EmbeddedService::cancel_waiter(WaiterId waiter) {
  if (waiter & kDeferredBit) {
    if (cancel_deferred(waiter)) return;
    // Decided but not yet delivered: nobody is left to tell.
    for (auto it = deferred_outcomes_.begin(); it != deferred_outcomes_.end(); ++it) {
      if (it->second.waiter == waiter) {
        if (it->second.granted) release_orphan(it->second);
        deferred_outcomes_.erase(it);
        return;
      }
    }
    auto alias = aliases_.find(waiter);
    if (alias == aliases_.end()) return;
    waiter = alias->second;
    aliases_.erase(alias);
  }
  waiting_.erase(waiter);
  table_.cancel_waiter(waiter, now());
}

void EmbeddedService::end_session(SessionId session) {
  for (auto it = deferred_.begin(); it != deferred_.end();) {
    if (it->second.session == session) {
      it = deferred_.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(deferred_outcomes_, [&](const auto& entry) {
    if (entry.second.session != session) return false;
    if (entry.second.granted) release_orphan(entry.second);
    return true;
  });
  table_.end_session(session, now());
}

void EmbeddedService::advance() {
  const Millis t = now();
  table_.advance(t);
  run_deferred(t);
}

std::size_t EmbeddedService::dispatch_outcomes() {
  std::size_t delivered = 0;
  while (!deferred_outcomes_.empty()) {
    auto outcomes = std::move(deferred_outcomes_);
    deferred_outcomes_.clear();
    for (auto& [client, outcome] : outcomes) {
      client->on_waiter_outcome(outcome);
      ++delivered;
    }
  }
  while (table_.has_outcomes()) {
    for (const WaiterOutcome& o : table_.take_outcomes()) {
      auto it = waiting_.find(o.waiter);
      WaiterClient* client = it == waiting_.end() ? nullptr : it->second;
      if (it != waiting_.end()) waiting_.erase(it);
      if (!aliases_.empty()) std::erase_if(aliases_, [&](const auto& kv) { return kv.second == o.waiter; });
      if (client == nullptr) {
        if (o.granted) release_orphan(o);
        continue;
      }
      client->on_waiter_outcome(o);
      ++delivered;
    }
  }
  return delivered;
}

// A grant whose waiter has nobody left to tell: free the key again at once.
void EmbeddedService::release_orphan(const WaiterOutcome& o) {
  if (o.hold.kind == HoldKind::kAssigned) {
    (void)table_.unassign(o.key, o.hold.holder_id, now());
  } else {
    (void)table_.release(o.key, o.hold.handle.to_string(), now());
  }
}

}  // namespace holdfast
