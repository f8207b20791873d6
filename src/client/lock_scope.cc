// LockScope and LockContext: the machinery of with_lock (see include/holdfast/with_lock.h for
// the lifecycle).
//
// The monitor thread, when there is one, sleeps until the next renewal or the end of the lease
// as the client knows it, whichever is first:
//   - at a renewal: LOCK.RENEW with the scope's TTL. Renewed: move the local lease end and
//     schedule the next one. `lease_lost`: the lease is lost. A transport or server error:
//     try again after a quarter interval, for as long as the lease lasts.
//   - at the local lease end with no successful renewal: the lease is lost.
// Losing the lease sets the flag, wakes wait_lost(), calls on_lost once, and ends the thread.
// Stopping (the scope ends) wakes the thread at once; a renewal already on the wire finishes,
// its answer is ignored, and none is sent after that.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "client/client_impl.h"
#include "holdfast/with_lock.h"

namespace holdfast::inline v0 {

using SteadyClock = std::chrono::steady_clock;

namespace detail {

struct ScopeState {
  ScopeState(Client::Impl* client_impl, const WithLockOptions& opts, Client::Impl::Grant grant)
      : impl(client_impl),
        options(opts),
        turn(std::move(grant.turn)),
        hold(std::move(grant.hold)),
        surely_held_until(grant.surely_held_until) {}

  bool lost_locked() const { return lost || SteadyClock::now() >= surely_held_until; }
  void monitor();
  void declare_lost(std::unique_lock<std::mutex>& lock);
  void stop_monitor();

  Client::Impl* const impl;
  const WithLockOptions options;
  std::optional<client_internal::KeyQueue::Turn> turn;  // our place on the local queue
  LockHandle hold;  // key, handle and token never change; lease_expires_at under `mu`

  mutable std::mutex mu;
  mutable std::condition_variable changed;
  SteadyClock::time_point surely_held_until;
  bool lost = false;
  bool stopping = false;
  bool released = false;
  std::thread monitor_thread;
};

void ScopeState::declare_lost(std::unique_lock<std::mutex>& lock) {
  lost = true;
  changed.notify_all();
  LockHandle snapshot = hold;
  lock.unlock();
  if (options.on_lost) {
    try {
      options.on_lost(snapshot);
    } catch (...) {
      // A callback must not throw (options.h); there is nobody to hand it to on this thread.
    }
  }
  lock.lock();
}

void ScopeState::monitor() {
  const milliseconds ttl = options.ttl;
  const auto interval = std::max<SteadyClock::duration>(
      std::chrono::duration_cast<SteadyClock::duration>(ttl * options.renew_fraction),
      milliseconds(1));
  auto next_renewal = SteadyClock::now() + interval;
  std::unique_lock lock(mu);
  while (!stopping && !lost) {
    auto wake = options.renew ? std::min(next_renewal, surely_held_until) : surely_held_until;
    changed.wait_until(lock, wake, [&] { return stopping; });
    if (stopping) break;
    const auto now = SteadyClock::now();
    if (options.renew && now >= next_renewal && now < surely_held_until) {
      const std::string key = hold.key, handle = hold.handle;
      lock.unlock();
      std::optional<RenewResult> result;
      const auto sent = SteadyClock::now();
      try {
        result = impl->renew(key, handle, ttl);
      } catch (const Error&) {
        // Unreachable server, UNAVAILABLE, a revoked rule...: the lease is still ours until it
        // ends, so keep trying until then.
      }
      const auto received = SteadyClock::now();
      lock.lock();
      if (stopping) break;
      if (result && result->renewed) {
        impl->renewals.fetch_add(1);
        surely_held_until = Client::Impl::surely_held_until(sent, received, ttl);
        if (result->lease_expires_at) hold.lease_expires_at = *result->lease_expires_at;
        next_renewal = received + interval;
      } else if (result) {
        declare_lost(lock);
      } else {
        next_renewal = received + interval / 4;
      }
    } else if (now >= surely_held_until) {
      declare_lost(lock);
    }
  }
}

void ScopeState::stop_monitor() {
  {
    std::lock_guard lock(mu);
    stopping = true;
  }
  changed.notify_all();
  if (monitor_thread.joinable()) monitor_thread.join();
}

}  // namespace detail

namespace {

std::unique_ptr<detail::ScopeState> begin_scope(Client::Impl* impl, std::string_view key,
                                                const WithLockOptions& o) {
  if (o.renew && !(o.renew_fraction > 0.0 && o.renew_fraction < 1.0))
    throw InvalidArgumentError(
        "INVALID_ARGUMENT", "INVALID_ARGUMENT renew_fraction must be between 0 and 1 (exclusive)");
  AcquireOptions acquire{
      .ttl = o.ttl, .timeout = o.timeout, .owner = o.owner, .session = o.session, .mode = o.mode};
  auto state = std::make_unique<detail::ScopeState>(impl, o, impl->acquire(key, acquire));
  if (o.renew || o.on_lost) {
    impl->renewing_scopes.fetch_add(1);
    detail::ScopeState* s = state.get();
    state->monitor_thread = std::thread([s] {
      s->monitor();
      s->impl->renewing_scopes.fetch_sub(1);
    });
  }
  return state;
}

}  // namespace

const std::string& LockContext::key() const noexcept { return state_->hold.key; }
const std::string& LockContext::handle() const noexcept { return state_->hold.handle; }
std::uint64_t LockContext::token() const noexcept { return state_->hold.token; }

LockHandle LockContext::lock_handle() const {
  std::lock_guard lock(state_->mu);
  return state_->hold;
}

bool LockContext::lost() const {
  std::lock_guard lock(state_->mu);
  return state_->lost_locked();
}

bool LockContext::wait_lost(milliseconds timeout) const {
  const auto deadline = SteadyClock::now() + timeout;
  std::unique_lock lock(state_->mu);
  for (;;) {
    if (state_->lost_locked()) return true;
    if (SteadyClock::now() >= deadline) return false;
    // Wake at the local lease end too: without a monitor nobody would notify us then.
    state_->changed.wait_until(lock, std::min(deadline, state_->surely_held_until));
  }
}

LockScope::LockScope(Client& client, std::string_view key, const WithLockOptions& options)
    : state_(begin_scope(client.impl_.get(), key, options)), context_(state_.get()) {}

LockScope::~LockScope() {
  try {
    release();
  } catch (...) {
    // The hold ends at its lease; a destructor has nowhere to report this.
  }
}

ReleaseResult LockScope::release() {
  state_->stop_monitor();
  if (state_->released) return ReleaseResult{false, "already_released"};
  state_->released = true;
  // Leave the local queue however the release goes: the next local caller can then ask the
  // server, which decides.
  struct LeaveQueue {
    detail::ScopeState* s;
    ~LeaveQueue() { s->turn.reset(); }
  } leave{state_.get()};
  return state_->impl->release(state_->hold.key, state_->hold.handle);
}

}  // namespace holdfast::inline v0
