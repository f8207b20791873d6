// PgBackend::acquire and ::assign: grants (exclusive, and shared or semaphore ones through
// pg_members.cc's queue seat), and waiting for a key held elsewhere.
//
// A grant is one conditional statement (hold_rows.h); the database picks the
// winner. Waiting happens on this node (LocalWaiters, FIFO per key):
//  1. One attempt (TIMEOUT 0, tryAcquire, assign without TIMEOUT): if this node already has
//     callers queued for the key, a newcomer must not take the key ahead of them, so it only
//     tries the re-take (acquire with the holder's owner) or the refresh (assign to the same
//     holder), which never takes a free key; otherwise the full grant.
//  2. Blocking: join the key's queue. A newcomer behind others first tries the re-take or
//     refresh (those never wait, docs/reference.md section 8). Then the head of the queue attempts
//     the grant whenever there is a reason: at once when it becomes head, on a NOTIFY for the key
//     from any node (the first waiter of a node registers the key in holdfast_waits before
//     its first attempt; a release, unassign or session end then notifies it), on a
//     release through this node, at the holder's lease end as the database reported it (its
//     clock; the wait is the distance between the lease end and the statement's own
//     database time, plus 2 ms), and at least every recheck_ms (250) in case a notification
//     was lost. On a grant the next waiter becomes head and retries at the new lease's end.
//  3. The timeout is LOCK_TIMEOUT key=... timeoutMs=...; a closed connection or a stopping
//     node wakes the waiter with UNAVAILABLE.
// Fairness: FIFO among one node's waiters. Across nodes, each node's head competes in the
// database when a key frees; whoever's statement reaches it first wins (docs/scale-out.md).
// Shared and semaphore requests (pg_members.cc) also keep a cross-node order: a blocked one
// joins holdfast_queue before its first attempt, and so does an exclusive one that found the
// key held shared; a member grant never passes a request another node queued earlier.
//
// Rate limits: when the policy asks, one attempt is counted in the database's shared window
// before the grant (every node counts against the same window); over the cap the call
// answers RATE_LIMITED and the policy's rate gate decides what happens next.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>

#include "core/kind_conflict.h"
#include "service/postgres/pg_backend.h"

namespace holdfast {

struct PgBackend::Attempt {
  std::string_view key;
  std::optional<Millis> timeout_ms;  // none or 0: one attempt
  // The grant (free key, ended lease, or the caller's own re-take/refresh).
  std::function<Result<pg::Grant>()> grant;
  // Only the re-take/refresh, which never takes a free key; empty when there is none.
  std::function<Result<pg::Grant>()> narrow;
  // Blocking only: called once this node has registered its wait for the key, before the
  // first attempt (a member request joins the queue across nodes here).
  std::function<Status()> joined;
  // Who waits, as lock events tell a waiter (pg_events.h): principal, owner, holder id, mode.
  LockEvent who;
  // `grant` goes through the commit batches (pg_batch.h): a release may bring it along.
  bool batched = false;
};

namespace {

LockEvent waiter(std::string_view held_by, const AcquireArgs& args) {
  LockEvent w;
  w.held_by = std::string(held_by);
  if (args.owner) w.owner = std::string(*args.owner);
  w.mode = args.mode;
  if (args.mode == LockMode::kSemaphore) {
    w.permits = args.permits;
    w.take = args.take;
  }
  return w;
}

}  // namespace

Handle PgBackend::next_handle() {
  thread_local HandleSource handles;  // not thread-safe: one per executor thread
  return handles.next();
}

Error PgBackend::waiter_gone() {
  return Error(ErrorCode::kUnavailable, "the connection closed or the server is shutting down");
}

PgBackend::TimePoint PgBackend::next_try(const pg::Grant& seen) const {
  return next_try(
      seen.granted ? std::optional<Millis>(seen.hold.lease_expires_at) : seen.holder_lease_end,
      seen.db_now);
}

PgBackend::TimePoint PgBackend::next_try(std::optional<Millis> lease_end, Millis db_now) const {
  const auto now = std::chrono::steady_clock::now();
  Millis wait = options_.recheck_ms;
  if (lease_end && *lease_end != kNever)
    wait = std::clamp<Millis>(*lease_end - db_now + 2, 0, options_.recheck_ms);
  return now + std::chrono::milliseconds(wait);
}

std::optional<Error> PgBackend::charge_attempt(const Principal& who, Charge charge) {
  if (charge.per_hour <= 0) return std::nullopt;
  auto d = cluster_->consume_attempt(who.id, charge.per_hour);
  if (!d.ok()) return store_error(std::move(d).error());
  ++counters_.writes;
  if (d->allowed) return std::nullopt;
  return rate_limited(d->retry_after_ms);
}

Result<pg::Grant> PgBackend::run_grant(const Caller& caller, Attempt& a) {
  if (!a.timeout_ms || *a.timeout_ms == 0) {
    if (waiters_.has_queue(a.key)) {
      if (!a.narrow) return pg::Grant{};
      return a.narrow();
    }
    return a.grant();
  }
  const Millis timeout = *a.timeout_ms;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
  auto ticket = waiters_.join(a.key, caller.session, a.batched);
  if (const std::uint64_t generation = waiters_.opened_generation(*ticket)) {
    // First waiter of this node for the key: ask releases on every node to notify it, before
    // the first attempt (so a release either sees the request or precedes the attempt).
    if (auto st = db(holds_->register_wait(a.key, node_id_, generation)); !st.ok())
      return std::move(st).error();
  }
  if (a.joined) {
    if (auto st = a.joined(); !st.ok()) return std::move(st).error();
  }
  pg::ToldWaiter told(*events_, a.who, {std::string(a.key)}, timeout);
  if (a.narrow && !waiters_.is_head(*ticket)) {
    auto r = a.narrow();
    if (!r.ok()) return r;
    if (r->granted || r->other_kind) return r;  // not the head: leaving changes nobody's turn
  }
  for (;;) {
    switch (waiters_.wait(*ticket, deadline)) {
      case LocalWaiters::Wake::kCancelled:
        return waiter_gone();
      case LocalWaiters::Wake::kDeadline:
        ++counters_.timeouts;
        told.ends(DequeueReason::kTimeout);
        return lock_timeout(a.key, timeout);
      case LocalWaiters::Wake::kAttempt:
        break;
    }
    auto r = a.grant();
    if (!r.ok()) return r;
    if (r->granted || r->other_kind) {
      if (r->granted) told.ends(DequeueReason::kGranted);
      // After a shared or semaphore grant the next waiter may fit beside it: it tries at once.
      const bool exclusive = r->granted && r->hold.mode == LockMode::kExclusive;
      waiters_.leave(*ticket, exclusive ? std::optional(next_try(*r)) : std::nullopt);
      return r;
    }
    waiters_.retry_at(*ticket, next_try(*r));
  }
}

Issued PgBackend::acquire(const Caller& caller, const AcquireArgs& args, Contention contention,
                          Charge charge, Completion& done) {
  if (auto issued = try_now(caller, args, contention, charge, done)) return *issued;
  return run(done, [this, caller, kept = AcquireCopy(args), contention, charge] {
    return do_acquire(caller, kept.args(), contention, charge);
  });
}

std::optional<Issued> PgBackend::try_now(const Caller& caller, const AcquireArgs& args,
                                         Contention contention, Charge charge, Completion& done) {
  const Millis timeout = contention == Contention::kNil ? 0 : args.timeout_ms;
  if (inline_ || timeout != 0 || args.mode != LockMode::kExclusive || charge.per_hour > 0 ||
      !holds_->batching() || waiters_.has_queue(args.key))
    return std::nullopt;
  const std::string held_by = caller.principal->held_by();
  const pg::GrantRequest g = grant_request(caller, held_by, args);
  if (!waiters_.begin_call(caller.session)) {
    done.finish(waiter_gone());
    return Issued::kApplied;
  }
  Granted how{std::string(args.key), g.scope, args.session_scoped, contention, timeout};
  holds_->acquire_async(g, [this, caller, how = std::move(how), &done](Result<pg::Grant> r) {
    r = db(std::move(r));
    if (r.ok() && !r->granted) {
      QueueSeat seat(*this);
      if (auto st = kind_seen(*r, false, 0, how.key, seat); !st.ok()) r = std::move(st).error();
    }
    auto answer = std::make_shared<Result<Answer>>(granted(caller, how, std::move(r)));
    on_loop([&done, answer] { done.finish(std::move(*answer)); });
  });
  return Issued::kWaiting;
}

pg::GrantRequest PgBackend::grant_request(const Caller& caller, std::string_view held_by,
                                          const AcquireArgs& args) {
  pg::GrantRequest g;
  g.key = args.key;
  g.handle = next_handle();
  g.held_by = held_by;
  g.owner = args.owner;
  g.ttl_ms = args.ttl_ms;
  g.scope = args.session_scoped ? Scope::kSession : Scope::kLease;
  g.node_id = node_id_;
  g.session = caller.session;
  g.lock_delay_ms = args.lock_delay_ms.value_or(0);
  return g;
}

Result<Answer> PgBackend::do_acquire(const Caller& caller, const AcquireArgs& args,
                                     Contention contention, Charge charge) {
  const Millis timeout = contention == Contention::kNil ? 0 : args.timeout_ms;
  if (auto err = value_in_the_way(args.key)) return std::move(*err);
  if (auto err = charge_attempt(*caller.principal, charge)) return std::move(*err);
  if (args.mode != LockMode::kExclusive)
    return do_acquire_member(caller, args, timeout, contention);
  const std::string held_by = caller.principal->held_by();
  const pg::GrantRequest g = grant_request(caller, held_by, args);
  Attempt a;
  a.key = args.key;
  a.timeout_ms = timeout;
  a.who = waiter(held_by, args);
  a.batched = true;
  QueueSeat seat(*this);
  a.grant = [&]() -> Result<pg::Grant> {
    auto r = db(holds_->acquire(g, !(timeout > 0 && contested(std::string(args.key), false))));
    if (r.ok() && !r->granted) {
      if (auto st = kind_seen(*r, timeout > 0, 0, args.key, seat); !st.ok())
        return std::move(st).error();
    }
    return r;
  };
  if (args.owner) a.narrow = [&] { return db(holds_->retake(g)); };

  if (!waiters_.begin_call(caller.session)) return waiter_gone();
  auto r = run_grant(caller, a);
  seat.leave();
  return granted(caller,
                 Granted{std::string(args.key), g.scope, args.session_scoped, contention, timeout},
                 std::move(r));
}

Result<Answer> PgBackend::granted(const Caller& caller, const Granted& how, Result<pg::Grant> r) {
  if (r.ok() && r->granted && how.scope == Scope::kSession)
    waiters_.note_session_hold(caller.session);
  const bool closed = waiters_.end_call(caller.session);
  if (!r.ok()) return std::move(r).error();
  if (r->other_kind) return kind_conflict_error(how.key, *r->other_kind, 0);
  if (!r->granted) {
    if (how.contention == Contention::kNil) return Answer();
    return lock_timeout(how.key, 0);
  }
  ++counters_.writes;
  if (closed && (how.timeout_ms > 0 || how.session_scoped)) {
    // The connection closed while this grant was on its way: nobody will learn the handle,
    // so free the key again at once rather than leave it wedged until the lease ends.
    if (auto undone = holds_->release(how.key, r->hold.handle.to_string());
        undone.ok() && *undone) {
      waiters_.poke(how.key);
    }
    return waiter_gone();
  }
  ++counters_.grants;
  ++held_;
  return Answer(std::move(r->hold));
}

Issued PgBackend::assign(const Caller& caller, const AssignArgs& args, Charge charge,
                         Completion& done) {
  return run(done, [this, caller, kept = AssignCopy(args), charge] {
    return do_assign(caller, kept.args(), charge);
  });
}

Result<Answer> PgBackend::do_assign(const Caller& caller, const AssignArgs& args, Charge charge) {
  if (auto err = value_in_the_way(args.key)) return std::move(*err);
  if (auto err = charge_attempt(*caller.principal, charge)) return std::move(*err);
  const bool blocking = args.timeout_ms && *args.timeout_ms > 0;
  const std::string held_by = caller.principal->held_by();
  const std::optional<Millis> ttl = args.ttl_ms;
  Attempt a;
  a.key = args.key;
  a.timeout_ms = args.timeout_ms;
  a.who.held_by = held_by;
  a.who.holder_id = std::string(*args.holder_id);
  QueueSeat seat(*this);
  a.grant = [&]() -> Result<pg::Grant> {
    auto r =
        db(holds_->assign(args.key, held_by, *args.holder_id, ttl, args.lock_delay_ms.value_or(0)));
    if (r.ok() && !r->granted) {
      if (auto st = kind_seen(*r, blocking, 0, args.key, seat); !st.ok())
        return std::move(st).error();
    }
    return r;
  };
  a.narrow = [&] { return db(holds_->refresh(args.key, *args.holder_id, ttl)); };

  if (!waiters_.begin_call(caller.session)) return waiter_gone();
  auto r = run_grant(caller, a);
  seat.leave();
  const bool closed = waiters_.end_call(caller.session);
  if (!r.ok()) return std::move(r).error();
  if (r->other_kind) return kind_conflict_error(args.key, *r->other_kind, 0);
  if (!r->granted) {
    if (!args.timeout_ms) {
      return lock_held(args.key);
    }
    return lock_timeout(args.key, 0);  // TIMEOUT 0: one attempt
  }
  ++counters_.writes;
  if (closed && blocking && !r->refreshed) {
    if (auto undone = holds_->unassign(args.key, args.holder_id); undone.ok() && *undone)
      waiters_.poke(args.key);
    return waiter_gone();
  }
  if (r->refreshed) {
    ++counters_.renewals;
  } else {
    ++counters_.grants;
    ++held_;
  }
  return Answer(std::move(r->hold));
}

Result<Answer> PgBackend::do_acquire_member(const Caller& caller, const AcquireArgs& args,
                                            Millis timeout, Contention contention) {
  const std::string held_by = caller.principal->held_by();
  pg::MemberRequest m;
  m.grant = grant_request(caller, held_by, args);
  m.shape = args;
  QueueSeat seat(*this);
  auto attempt = [&](bool retake_only) -> Result<pg::Grant> {
    m.queue_seq = seat.seq();
    auto r = db(holds_->grant_member(m, retake_only));
    if (r.ok() && r->granted) seat.forget();  // the grant deleted the row
    return r;
  };
  Attempt a;
  a.key = args.key;
  a.timeout_ms = timeout;
  a.who = waiter(held_by, args);
  a.grant = [&] { return attempt(false); };
  // Also without an owner: the statement answers a key of another kind before anything else.
  a.narrow = [&] { return attempt(true); };
  if (timeout > 0) a.joined = [&] { return seat.join(args.key, args.mode, args.permits); };

  if (!waiters_.begin_call(caller.session)) return waiter_gone();
  auto r = run_grant(caller, a);
  seat.leave();
  if (r.ok() && r->granted && m.grant.scope == Scope::kSession)
    waiters_.note_session_hold(caller.session);
  const bool closed = waiters_.end_call(caller.session);
  if (!r.ok()) return std::move(r).error();
  if (r->other_kind)
    return kind_conflict_error(args.key, *r->other_kind,
                               args.mode == LockMode::kSemaphore ? args.permits : 0);
  if (!r->granted) {
    if (contention == Contention::kNil) return Answer();
    return lock_timeout(args.key, 0);
  }
  ++counters_.writes;
  if (closed && (timeout > 0 || args.session_scoped)) {
    // As in do_acquire: nobody will learn the handle, so the hold goes at once.
    if (auto undone = holds_->release_member(args.key, r->hold.handle.to_string());
        undone.ok() && *undone) {
      waiters_.poke(args.key);
    }
    return waiter_gone();
  }
  ++counters_.grants;
  ++(args.mode == LockMode::kShared ? counters_.shared_grants : counters_.semaphore_grants);
  ++held_;
  return Answer(std::move(r->hold));
}

}  // namespace holdfast
