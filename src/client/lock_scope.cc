// LockScope and LockContext: the machinery of with_lock (see include/holdfast/with_lock.h for
// the lifecycle), and the ScopeState that LockGroupScope (with_locks) shares.
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

#include "client/scope_state.h"
#include "holdfast/with_lock.h"

namespace holdfast::inline v0 {

using SteadyClock = std::chrono::steady_clock;

namespace detail {

ScopeState::ScopeState(Client::Impl* client_impl, Renewal r, Client::Impl::Grant grant,
                       std::function<void(const LockHandle&)> on_lost)
    : impl(client_impl),
      renewal(r),
      turn(std::move(grant.turn)),
      hold(std::move(grant.hold)),
      on_hold_lost_(std::move(on_lost)),
      held_until_(grant.surely_held_until) {}

ScopeState::ScopeState(Client::Impl* client_impl, Renewal r, Client::Impl::GroupGrant grant,
                       std::function<void(const LockGroup&)> on_lost)
    : impl(client_impl),
      renewal(r),
      hold(grant.group.holds.front()),
      group(std::move(grant.group)),
      on_group_lost_(std::move(on_lost)),
      held_until_(grant.surely_held_until) {}

void ScopeState::start() {
  if (!renewal.renew && !on_hold_lost_ && !on_group_lost_) return;
  impl->renewing_scopes.fetch_add(1);
  monitor_thread_ = std::thread([this] {
    monitor();
    impl->renewing_scopes.fetch_sub(1);
  });
}

void ScopeState::declare_lost(std::unique_lock<std::mutex>& lock) {
  lost_ = true;
  changed_.notify_all();
  const LockHandle hold_snapshot = hold;
  const std::optional<LockGroup> group_snapshot = group;
  lock.unlock();
  try {
    // A callback must not throw (options.h); there is nobody to hand it to on this thread.
    if (on_hold_lost_) on_hold_lost_(hold_snapshot);
    if (on_group_lost_ && group_snapshot) on_group_lost_(*group_snapshot);
  } catch (...) {
  }
  lock.lock();
}

void ScopeState::monitor() {
  const milliseconds ttl = renewal.ttl;
  const auto interval = std::max<SteadyClock::duration>(
      std::chrono::duration_cast<SteadyClock::duration>(ttl * renewal.renew_fraction),
      milliseconds(1));
  auto next_renewal = SteadyClock::now() + interval;
  std::unique_lock lock(mu);
  while (!stopping_ && !lost_) {
    auto wake = renewal.renew ? std::min(next_renewal, held_until_) : held_until_;
    changed_.wait_until(lock, wake, [&] { return stopping_; });
    if (stopping_) break;
    const auto now = SteadyClock::now();
    if (renewal.renew && now >= next_renewal && now < held_until_) {
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
      if (stopping_) break;
      if (result && result->renewed) {
        impl->renewals.fetch_add(1);
        held_until_ = Client::Impl::surely_held_until(sent, received, ttl);
        if (result->lease_expires_at) {
          hold.lease_expires_at = *result->lease_expires_at;
          if (group) {
            group->lease_expires_at = *result->lease_expires_at;
            for (LockHandle& h : group->holds) h.lease_expires_at = *result->lease_expires_at;
          }
        }
        next_renewal = received + interval;
      } else if (result) {
        declare_lost(lock);
      } else {
        next_renewal = received + interval / 4;
      }
    } else if (now >= held_until_) {
      declare_lost(lock);
    }
  }
}

void ScopeState::stop_monitor() {
  {
    std::lock_guard lock(mu);
    stopping_ = true;
  }
  changed_.notify_all();
  if (monitor_thread_.joinable()) monitor_thread_.join();
}

bool ScopeState::lost() const {
  std::lock_guard lock(mu);
  return lost_locked();
}

bool ScopeState::wait_lost(milliseconds timeout) const {
  const auto deadline = SteadyClock::now() + timeout;
  std::unique_lock lock(mu);
  for (;;) {
    if (lost_locked()) return true;
    if (SteadyClock::now() >= deadline) return false;
    // Wake at the local lease end too: without a monitor nobody would notify us then.
    changed_.wait_until(lock, std::min(deadline, held_until_));
  }
}

ReleaseResult ScopeState::release() {
  stop_monitor();
  if (released_) return ReleaseResult{false, "already_released"};
  released_ = true;
  // Leave the local queue however the release goes: the next local caller can then ask the
  // server, which decides.
  struct LeaveQueue {
    ScopeState* s;
    ~LeaveQueue() { s->turn.reset(); }
  } leave{this};
  return impl->release(hold.key, hold.handle);
}

void validate_renewal(bool renew, double renew_fraction) {
  if (renew && !(renew_fraction > 0.0 && renew_fraction < 1.0))
    throw InvalidArgumentError(
        "INVALID_ARGUMENT", "INVALID_ARGUMENT renew_fraction must be between 0 and 1 (exclusive)");
}

}  // namespace detail

namespace {

std::unique_ptr<detail::ScopeState> begin_scope(Client::Impl* impl, std::string_view key,
                                                const WithLockOptions& o) {
  detail::validate_renewal(o.renew, o.renew_fraction);
  AcquireOptions acquire{.ttl = o.ttl,
                         .timeout = o.timeout,
                         .owner = o.owner,
                         .session = o.session,
                         .mode = o.mode,
                         .lock_delay = o.lock_delay};
  auto state = std::make_unique<detail::ScopeState>(
      impl, detail::ScopeState::Renewal{o.ttl, o.renew, o.renew_fraction},
      impl->acquire(key, acquire), o.on_lost);
  state->start();
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

bool LockContext::lost() const { return state_->lost(); }

bool LockContext::wait_lost(milliseconds timeout) const { return state_->wait_lost(timeout); }

LockScope::LockScope(Client& client, std::string_view key, const WithLockOptions& options)
    : state_(begin_scope(client.impl_.get(), key, options)), context_(state_.get()) {}

LockScope::~LockScope() {
  try {
    release();
  } catch (...) {
    // The hold ends at its lease; a destructor has nowhere to report this.
  }
}

ReleaseResult LockScope::release() { return state_->release(); }

}  // namespace holdfast::inline v0
