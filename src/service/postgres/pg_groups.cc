// PgBackend::acquire_all: several keys at once, all or nothing (docs/lock-kinds.md, "Several
// keys at once"; docs/scale-out.md, "Several keys at once").
//
//  1. A grant is one call of holdfast_grant_group (schema.cc): one transaction that locks every
//     key's row in key order (two groups, on any nodes, never wait for each other's rows in a
//     cycle), refuses a key of another kind, and grants each key as a single acquire of it
//     would; if any key does not fit, the whole transaction's work is undone. Every hold of the
//     group carries the group's one handle, so release and renew by any of its keys reach all
//     of them (holdfast_release_handle, holdfast_renew_handle).
//  2. One attempt (TRYALL, TIMEOUT 0): not while this node has single waiters queued for one
//     of the keys (no barging past them), else the grant.
//  3. Blocking: the request becomes a multi-key waiter of this node (LocalWaiters::watch): it
//     registers every key it opened in holdfast_waits before its first attempt, holds no key
//     while it waits, and attempts the whole group again on a NOTIFY or local release of any
//     of its keys, at the lease end the refusal reported, and at least every recheck_ms, until
//     its timeout: LOCK_TIMEOUT naming the first key. It has no place in any key's FIFO order.
#include "core/kind_conflict.h"
#include "service/postgres/pg_backend.h"

namespace holdfast {

Issued PgBackend::acquire_all(const Caller& caller, const AcquireAllArgs& args,
                              Contention contention, Charge charge, Completion& done) {
  return run(done, [this, caller, kept = AcquireAllCopy(args), contention, charge] {
    return do_acquire_all(caller, kept.args(), contention, charge);
  });
}

Result<Answer> PgBackend::do_acquire_all(const Caller& caller, const AcquireAllArgs& args,
                                         Contention contention, Charge charge) {
  const Millis timeout = contention == Contention::kNil ? 0 : args.timeout_ms;
  for (const KeyRequest& k : args.keys) {
    if (auto err = value_in_the_way(k.key)) return std::move(*err);
  }
  if (auto err = charge_attempt(*caller.principal, charge)) return std::move(*err);
  const std::string held_by = caller.principal->held_by();
  pg::GroupRequest g;
  g.grant = grant_request(caller, held_by, args.one(0));
  g.grant.key = {};  // each key is in `keys`
  g.keys = args.keys;
  const std::string_view first = args.keys.front().key;

  if (!waiters_.begin_call(caller.session)) return waiter_gone();
  auto r = run_group_grant(caller, g, timeout);
  if (r.ok() && r->granted && g.grant.scope == Scope::kSession)
    waiters_.note_session_hold(caller.session);
  const bool closed = waiters_.end_call(caller.session);
  if (!r.ok()) return std::move(r).error();
  if (r->other_kind) {
    std::uint32_t wanted = 0;
    for (const KeyRequest& k : g.keys) {
      if (k.key == r->key) wanted = k.permits;
    }
    return kind_conflict_error(r->key, *r->other_kind, wanted);
  }
  if (!r->granted) {
    if (contention == Contention::kNil) return Answer();
    return lock_timeout(first, 0);
  }
  ++counters_.writes;
  if (closed && (timeout > 0 || args.session_scoped)) {
    // As for a single acquire: nobody will learn the handle, so the group goes at once.
    if (auto undone = holds_->release_handle(first, g.grant.handle.to_string()); undone.ok())
      keys_freed(*undone);
    return waiter_gone();
  }
  for (const HoldState& h : r->holds) {
    ++counters_.grants;
    if (h.mode == LockMode::kShared) ++counters_.shared_grants;
    if (h.mode == LockMode::kSemaphore) ++counters_.semaphore_grants;
    ++held_;
  }
  GroupHold out;
  out.handle = g.grant.handle;
  out.lease_expires_at = r->holds.front().lease_expires_at;
  out.holds = std::move(r->holds);
  return Answer(std::move(out));
}

Result<pg::GroupGrant> PgBackend::run_group_grant(const Caller& caller,
                                                  const pg::GroupRequest& group, Millis timeout) {
  if (timeout == 0) {
    for (const KeyRequest& k : group.keys) {
      if (waiters_.has_queue(k.key)) return pg::GroupGrant{};
    }
    return db(holds_->grant_group(group));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
  std::vector<std::string> keys;
  keys.reserve(group.keys.size());
  for (const KeyRequest& k : group.keys) keys.emplace_back(k.key);
  auto ticket = waiters_.watch(keys, caller.session);
  for (const auto& [key, generation] : waiters_.opened_generations(*ticket)) {
    // As for a single waiter: registered before the first attempt (pg_acquire.cc).
    if (auto st = db(holds_->register_wait(key, node_id_, generation)); !st.ok())
      return std::move(st).error();
  }
  LockEvent who;
  who.held_by = std::string(group.grant.held_by);
  if (group.grant.owner) who.owner = std::string(*group.grant.owner);
  pg::ToldWaiter told(*events_, who, keys, timeout);
  for (;;) {
    switch (waiters_.wait(*ticket, deadline)) {
      case LocalWaiters::Wake::kCancelled:
        return waiter_gone();
      case LocalWaiters::Wake::kDeadline:
        ++counters_.timeouts;
        told.ends(DequeueReason::kTimeout);
        return lock_timeout(group.keys.front().key, timeout);
      case LocalWaiters::Wake::kAttempt:
        break;
    }
    auto r = db(holds_->grant_group(group));
    if (!r.ok()) return r;
    if (r->granted || r->other_kind) {
      if (r->granted) told.ends(DequeueReason::kGranted);
      waiters_.leave(*ticket);
      return r;
    }
    waiters_.retry_at(*ticket, next_try(r->holder_lease_end, r->db_now));
  }
}

}  // namespace holdfast
