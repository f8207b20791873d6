#include "server/service.h"

namespace holdfast {

Service::Service(const Clock& clock, Store& store, ServiceOptions options)
    : clock_(clock), store_(store), table_(options.table, this) {}

Status Service::recover() {
  auto state = store_.recover();
  if (!state.ok()) return std::move(state).error();
  table_.restore(*state, now());
  store_.set_state_source([this] { return table_.snapshot(now()); });
  return ok_status();
}

void Service::on_change(const Change& change) { last_sequence_ = store_.append(change); }

Result<AcquireOutcome> Service::acquire(const Caller& caller, const AcquireArgs& args,
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
  auto out = table_.acquire(r, now());
  if (out.ok() && out->kind == AcquireOutcome::Kind::kQueued) waiting_[out->waiter] = client;
  return out;
}

Result<RenewOutcome> Service::renew(const Caller&, std::string_view key, std::string_view handle,
                                    Millis ttl_ms) {
  return table_.renew(key, handle, ttl_ms, now());
}

Result<ReleaseOutcome> Service::release(const Caller&, std::string_view key, std::string_view handle) {
  return table_.release(key, handle, now());
}

Result<StatusView> Service::status(const Caller&, std::string_view key) {
  return table_.status(key, now());
}

Result<ListPage> Service::list(const Caller& caller, std::string_view match, std::string_view cursor,
                               std::size_t count) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "listing locks needs the admin or owner role");
  return table_.list(match, cursor, count, now());
}

Result<AcquireOutcome> Service::assign(const Caller& caller, const AssignArgs& args,
                                       WaiterClient* client) {
  AssignRequest r;
  r.key = args.key;
  r.holder_id = args.holder_id;
  r.ttl_ms = args.ttl_ms;
  r.timeout_ms = args.timeout_ms;
  r.session = caller.session;
  const std::string held_by = caller.principal->held_by();
  r.held_by = held_by;
  auto out = table_.assign(r, now());
  if (out.ok() && out->kind == AcquireOutcome::Kind::kQueued) waiting_[out->waiter] = client;
  return out;
}

Result<HoldState> Service::transfer(const Caller& caller, std::string_view key,
                                    std::string_view to_id, std::string_view from_id) {
  return table_.transfer(key, to_id, from_id, caller.principal->held_by(), now());
}

Result<ReleaseOutcome> Service::unassign(const Caller&, std::string_view key,
                                         std::optional<std::string_view> holder_id) {
  return table_.unassign(key, holder_id, now());
}

Result<HolderView> Service::holder(const Caller&, std::string_view key) {
  return table_.holder(key, now());
}

void Service::cancel_waiter(WaiterId waiter) {
  waiting_.erase(waiter);
  table_.cancel_waiter(waiter, now());
}

void Service::end_session(SessionId session) { table_.end_session(session, now()); }

void Service::advance() { table_.advance(now()); }

std::size_t Service::dispatch_outcomes() {
  std::size_t delivered = 0;
  while (table_.has_outcomes()) {
    for (const WaiterOutcome& o : table_.take_outcomes()) {
      auto it = waiting_.find(o.waiter);
      WaiterClient* client = it == waiting_.end() ? nullptr : it->second;
      if (it != waiting_.end()) waiting_.erase(it);
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
void Service::release_orphan(const WaiterOutcome& o) {
  if (o.hold.kind == HoldKind::kAssigned) {
    (void)table_.unassign(o.key, o.hold.holder_id, now());
  } else {
    (void)table_.release(o.key, o.hold.handle.to_string(), now());
  }
}

}  // namespace holdfast
