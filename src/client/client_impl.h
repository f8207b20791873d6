// Client::Impl: what a Client owns (the pool, the local key queue, counters) and the lock
// operations themselves. client.cc is the thin public facade over it; lock_scope.cc uses it
// directly, so a LockScope keeps working while the Client object it came from is moved.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "client/key_queue.h"
#include "client/pool.h"
#include "client/resp_codec.h"
#include "client/url.h"
#include "holdfast/client.h"

namespace holdfast::inline v0 {

struct Client::Impl {
  Impl(std::vector<client_internal::ServerAddress> addresses, const ClientOptions& options);

  // A grant together with this caller's turn on the local queue (with_lock keeps the turn for
  // its whole scope; a shared or semaphore grant has none) and the local monotonic instant until
  // which the lease is surely ours.
  struct Grant {
    std::optional<client_internal::KeyQueue::Turn> turn;
    LockHandle hold;
    std::chrono::steady_clock::time_point surely_held_until;
  };

  // A multi-key grant and the local monotonic instant until which its lease is surely ours.
  struct GroupGrant {
    LockGroup group;
    std::chrono::steady_clock::time_point surely_held_until;
  };

  // Local queue, then LOCK.ACQUIRE with the time left (see Client::acquire).
  Grant acquire(std::string_view key, const AcquireOptions& options);
  std::optional<LockHandle> try_acquire(std::string_view key, const TryAcquireOptions& options);
  // LOCK.ACQUIREALL / LOCK.TRYALL; no local queue (see locks_api.cc).
  GroupGrant acquire_all(const std::vector<KeyRequest>& keys, const AcquireAllOptions& options);
  std::optional<LockGroup> try_acquire_all(const std::vector<KeyRequest>& keys,
                                           const TryAcquireAllOptions& options);
  RenewResult renew(std::string_view key, std::string_view handle, milliseconds ttl);
  ReleaseResult release(std::string_view key, std::string_view handle);
  LockStatus status(std::string_view key);
  ListPage list(const ListOptions& options);
  Assignment assign(std::string_view key, std::optional<std::string_view> holder_id,
                    const AssignOptions& options);
  TransferResult transfer(std::string_view key, std::string_view to_id,
                          std::optional<std::string_view> from_id);
  bool unassign(std::string_view key, std::optional<std::string_view> holder_id);
  HolderInfo holder(std::string_view key);
  HolderInfo check(std::string_view key, std::optional<std::string_view> holder_id);
  void ping();
  ServerInfo server_info();

  // Runs one command; an error reply is thrown as its typed exception.
  client_internal::Reply call(const std::vector<std::string>& args,
                              std::chrono::milliseconds reply_timeout, bool pin_on_success = false);
  client_internal::Reply call(const std::vector<std::string>& args) {
    return call(args, options.io_timeout);
  }

  // How long after `received` a lease of `ttl` granted by a request sent at `sent` is surely
  // still ours: the grant happened between the two instants, so subtract their distance, but
  // at most a tenth of the TTL (a blocking grant's wait is not network delay).
  static std::chrono::steady_clock::time_point surely_held_until(
      std::chrono::steady_clock::time_point sent, std::chrono::steady_clock::time_point received,
      milliseconds ttl);

  const ClientOptions options;
  client_internal::ConnectionPool pool;
  client_internal::KeyQueue queue;
  std::atomic<std::uint64_t> renewals{0};
  std::atomic<std::size_t> renewing_scopes{0};
};

}  // namespace holdfast::inline v0
