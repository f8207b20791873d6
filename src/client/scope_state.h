// What a LockScope (with_lock) and a LockGroupScope (with_locks) keep while they hold: the hold
// they renew and release, the monitor thread that renews it, and the lost flag. A group is
// renewed and released through the hold of its first key, which carries the group's handle
// (the server renews and releases the whole group through any of its keys).
// lock_scope.cc has the monitor; include/holdfast/with_lock.h the lifecycle.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "client/client_impl.h"

namespace holdfast::inline v0::detail {

struct ScopeState {
  struct Renewal {
    milliseconds ttl;
    bool renew = true;
    double renew_fraction = 1.0 / 3.0;
  };

  // A single key's hold, with its turn on the local queue (if any).
  ScopeState(Client::Impl* client_impl, Renewal renewal, Client::Impl::Grant grant,
             std::function<void(const LockHandle&)> on_lost);
  // A group, renewed and released through its first hold.
  ScopeState(Client::Impl* client_impl, Renewal renewal, Client::Impl::GroupGrant grant,
             std::function<void(const LockGroup&)> on_lost);
  ~ScopeState() { stop_monitor(); }
  ScopeState(const ScopeState&) = delete;
  ScopeState& operator=(const ScopeState&) = delete;

  // Starts the monitor thread when renewal or an on_lost callback asks for one.
  void start();
  bool lost() const;
  bool wait_lost(milliseconds timeout) const;
  // Stops the monitor, then releases (once; later calls answer "already_released") and leaves
  // the local queue however the release goes.
  ReleaseResult release();

  Client::Impl* const impl;
  const Renewal renewal;
  std::optional<client_internal::KeyQueue::Turn> turn;  // our place on the local queue
  // key, handle and token never change; lease_expires_at (here and in `group`) under `mu`.
  LockHandle hold;
  std::optional<LockGroup> group;

  mutable std::mutex mu;

 private:
  bool lost_locked() const { return lost_ || std::chrono::steady_clock::now() >= held_until_; }
  void monitor();
  void declare_lost(std::unique_lock<std::mutex>& lock);
  void stop_monitor();

  std::function<void(const LockHandle&)> on_hold_lost_;
  std::function<void(const LockGroup&)> on_group_lost_;
  mutable std::condition_variable changed_;
  std::chrono::steady_clock::time_point held_until_;
  bool lost_ = false;
  bool stopping_ = false;
  bool released_ = false;
  std::thread monitor_thread_;
};

// InvalidArgumentError unless renew_fraction is in (0, 1) when renewing.
void validate_renewal(bool renew, double renew_fraction);

}  // namespace holdfast::inline v0::detail
