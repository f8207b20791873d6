// The Holdfast C++ client: lease-based named locks from a Holdfast server.
//
//   holdfast::Client client("holdfast://127.0.0.1:7420");
//   client.with_lock("portfolio-import:user-123", {.ttl = 60s, .timeout = 10s},
//                    [&](holdfast::LockContext& ctx) { import(user, ctx.token()); });
//
// One Client per process is the intended use: it is thread-safe, keeps a small pool of
// connections, and its local per-key queue is what keeps this process down to one acquire
// request per key at the server (two Client objects do not queue against each other).
//
// Errors: a refused call throws the typed exceptions of holdfast/errors.h (code() is the
// server's code); "not acquired", "not renewed" and "not released" are ordinary results, not
// exceptions, except for the blocking acquire whose timeout is LockTimeoutError. A broken or
// unreachable server is ConnectionError; a new call after a break reconnects by itself, a call
// that was in flight when the connection broke fails (its effect on the server is unknown).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "holdfast/errors.h"
#include "holdfast/key_format.h"
#include "holdfast/lock_handle.h"
#include "holdfast/options.h"
#include "holdfast/with_lock.h"
#include "holdfast/with_locks.h"

namespace holdfast::inline v0 {

class LockedSection;

// Counters for tests and monitoring; a snapshot.
struct ClientStats {
  std::size_t open_connections = 0;  // idle + in use
  std::size_t idle_connections = 0;
  std::uint64_t connections_opened = 0;
  // The most exclusive acquire requests (LOCK.ACQUIRE / LOCK.TRY) ever in flight at the
  // server at once for any one key. The local queue keeps this at 1. Shared, semaphore and
  // multi-key requests skip the local queue and are not counted.
  std::size_t max_in_flight_per_key = 0;
  std::size_t local_waiters = 0;    // callers now waiting on the local queue (all keys)
  std::uint64_t renewals = 0;       // background renewals sent by with_lock scopes
  std::size_t renewing_scopes = 0;  // with_lock scopes whose monitor thread is running
};

// What a server says of itself when a connection opens (its HELLO answer).
struct ServerInfo {
  std::string version;  // the server's version, e.g. "0.1.0"
  // "auth": the server has credentials and checks every token; "open": local open mode, where
  // every caller is the owner and a token is accepted without being checked.
  std::string mode;
};

class Client {
 public:
  // `url`: holdfast://[user][:token@]host[:port] (port 7420 by default), unix:///path/to.sock
  // (or unix://:token@/path), or the shorthands host:port and /path/to.sock. Throws
  // InvalidArgumentError for a malformed URL. Connects lazily: the first call connects, so a
  // server that is down is reported by that call (ConnectionError), not here.
  // Scale-out: holdfast://[user][:token@]h1:7420,h2:7420,h3:7420 names the nodes of one
  // cluster. New connections go to the first node that can be reached, in list order, and
  // stay with it until it cannot be reached; a call that was in flight when its node went
  // away still fails with ConnectionError (docs/scale-out.md).
  explicit Client(std::string_view url = "127.0.0.1:7420", ClientOptions options = {});
  // Closes every connection (ending this Client's session holds).
  // REQUIRES: no LockScope / with_lock of this Client is still running.
  ~Client();
  // Movable, not copyable. A moved-from Client may only be destroyed or assigned to; scopes
  // begun before the move keep working with the moved-to Client.
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;

  // The server as connected to, for messages: "127.0.0.1:7420" or "unix:/path". No token.
  // With a node list: the node new connections go to now.
  std::string server() const;

  // One round trip; throws ConnectionError when the server cannot be reached.
  void ping();
  // One round trip (HELLO on a pooled connection): the server's version and whether it checks
  // tokens. Throws what ping() throws.
  ServerInfo server_info();

  // Blocks until the key is granted or options.timeout passes (first on the local queue, then
  // in the server's FIFO queue with the time left); TIMEOUT 0 makes one attempt. Throws
  // LockTimeoutError (key(), timeout() == options.timeout) when not granted; the other server
  // errors as typed exceptions (InvalidArgumentError, AccessDeniedError, RateLimitedError ...).
  // The caller must release() or let the lease end; nothing here releases for you.
  LockHandle acquire(std::string_view key, const AcquireOptions& options = {});

  // One attempt. nullopt when the key is held by someone else, or when another caller of this
  // Client is acquiring or holding it through with_lock right now (no request is sent then).
  // RateLimitedError when over the server's acquire cap (retry_after() says when to retry).
  std::optional<LockHandle> try_acquire(std::string_view key,
                                        const TryAcquireOptions& options = {});

  // Several keys at once, each in its own mode, all or none (docs/lock-kinds.md, "Several keys
  // at once"): blocks until every key can be granted together or options.timeout passes
  // (TIMEOUT 0 makes one attempt), waiting in every key's queue on the server at once. The
  // group has one handle and one lease; renew(group) and release(group) act on every key.
  // Throws LockTimeoutError naming the first key (in key order) when not granted;
  // InvalidArgumentError for no keys, more than 64, a key named twice, or what a single
  // acquire of a key would refuse. Multi-key requests skip the local queue: they wait only in
  // the server's queues, which order them against every other request without deadlock.
  LockGroup acquire_all(const std::vector<KeyRequest>& keys, const AcquireAllOptions& options = {});
  // One attempt at every key: nullopt when any key is held in a way that excludes its request,
  // has waiters, or is closed by a lock-delay; nothing is held then.
  std::optional<LockGroup> try_acquire_all(const std::vector<KeyRequest>& keys,
                                           const TryAcquireAllOptions& options = {});

  // Extends the lease to now + ttl if `hold` is still the key's current hold; otherwise
  // {renewed: false, reason: "lease_lost"}. `hold` itself is not changed.
  RenewResult renew(const LockHandle& hold, milliseconds ttl);
  RenewResult renew(std::string_view key, std::string_view handle, milliseconds ttl);
  // Renews the whole group (through its first key); `group` itself is not changed.
  RenewResult renew(const LockGroup& group, milliseconds ttl);

  // Frees the key if `hold` is its current hold; otherwise {released: false, reason:
  // "not_holder"} and nothing changes. Never refused by rules: the handle proves the holder.
  ReleaseResult release(const LockHandle& hold);
  ReleaseResult release(std::string_view key, std::string_view handle);
  // Frees every key of the group; {released: false, reason: "not_holder"} when the group has
  // already ended. InvalidArgumentError for a group without holds.
  ReleaseResult release(const LockGroup& group);

  // Who holds the key (never the handle) and how many wait for it.
  LockStatus status(std::string_view key);

  // One page of holds; admin/owner role only (ForbiddenError otherwise).
  ListPage list(const ListOptions& options = {});
  // Every hold matching `match` (empty: all), following the cursor to the end in pages of
  // 10 000 (each page is a scan of the server's table, so the largest pages cost least).
  std::vector<HoldInfo> list_all(std::string_view match = {});

  // Identity-aware holds. A holder id is whatever the application names (a player, a
  // worker); with credentials, a member's own holder id is its userId, and the calls below
  // that leave it out mean the connecting user (a function, or a server in local open mode,
  // must name it: InvalidArgumentError otherwise).

  // Holds the key on behalf of `holder_id` (an assigned hold, no handle). Re-assigning to the
  // same holder refreshes it. LockHeldError when held by anyone else and no timeout was given;
  // LockTimeoutError when a timeout was given and passed.
  Assignment assign(std::string_view key, std::string_view holder_id,
                    const AssignOptions& options = {});
  // The same for the connecting user's own holder id.
  Assignment assign(std::string_view key, const AssignOptions& options = {});
  // Moves an assigned hold from `from_id` (none: the connecting user) to `to_id` with a new
  // token; NotHolderError when `from_id` does not hold it.
  TransferResult transfer(std::string_view key, std::string_view to_id,
                          std::optional<std::string_view> from_id = std::nullopt);
  // Frees an assigned hold: true if it was freed, false if the key was free. Only the
  // assignment of `holder_id` (none: the connecting user's; for a function or in open mode,
  // whoever's) is freed: NotHolderError for another holder.
  bool unassign(std::string_view key, std::optional<std::string_view> holder_id = std::nullopt);
  // The holder id of an assigned key, and the hold's fencing token.
  HolderInfo holder(std::string_view key);
  // Asks the server whether `holder_id` (none: the connecting user) holds the key; answers the
  // hold, with its fencing token, when it does, and throws NotHolderError (whose message says
  // whose turn it is not) when the key is free, held by a handle or assigned to another.
  HolderInfo verify_holder(std::string_view key,
                           std::optional<std::string_view> holder_id = std::nullopt);
  // A client-side reading of the "@locked with @auth" guard: true when the key is not assigned
  // to anyone (free, or held by a handle rather than an assignment) or assigned to
  // `caller_id`. Advisory only; as_holder() is the guard the server answers.
  bool check_holder(std::string_view key, std::string_view caller_id);

  // "Only the current holder may run this": runs fn when verify_holder(key) answers that the
  // connecting user holds the key, else throws NotHolderError without running it. fn is fn()
  // or fn(std::uint64_t token): the token of the hold checked, which fn should carry into its
  // writes (holdfast/sql/fencing.h) so that a write made after the turn moved on is refused.
  // The check and fn are not one atomic step; the token is what makes them safe together.
  // Returns what fn returns.
  template <typename Fn>
  decltype(auto) as_holder(std::string_view key, Fn&& fn) {
    return run_as_holder(verify_holder(key), std::forward<Fn>(fn));
  }
  // The same for a named holder id (a trusted service acting for its players, a function).
  template <typename Fn>
  decltype(auto) as_holder(std::string_view key, std::string_view holder_id, Fn&& fn) {
    return run_as_holder(verify_holder(key, holder_id), std::forward<Fn>(fn));
  }

  // The lock rule set (admins, owners and functions; members get ForbiddenError). push
  // installs `toml` and answers whether a set of the same name was replaced; a set of another
  // name throws RulesetConflictError; a rule that does not compile throws InvalidArgumentError
  // naming the rule and position. rule_set() is nullopt when none is installed.
  bool push_rule_set(std::string_view toml);
  std::optional<RuleSetInfo> rule_set();
  // Throws Error with code NOT_FOUND when no set of that name is installed.
  void delete_rule_set(std::string_view name);

  // Acquires `key`, runs fn, always releases (also when fn throws; the exception propagates),
  // returns what fn returns (void too). fn is either fn() or fn(LockContext&); the context
  // gives the fencing token and the lost-lease signal. By default the lease is renewed in the
  // background at a third of the TTL while fn runs (WithLockOptions::renew). Throws what
  // acquire() throws when the key is not won; fn does not run then.
  template <class Fn>
  decltype(auto) with_lock(std::string_view key, const WithLockOptions& options, Fn&& fn);
  template <class Fn>
  decltype(auto) with_lock(std::string_view key, Fn&& fn) {
    return with_lock(key, WithLockOptions{}, std::forward<Fn>(fn));
  }
  // with_lock in shared mode: any number of shared holders at once, and no exclusive one
  // (docs/lock-kinds.md). Sets options.mode; everything else is as with_lock.
  template <class Fn>
  decltype(auto) with_shared_lock(std::string_view key, WithLockOptions options, Fn&& fn) {
    options.mode = AcquireMode::shared();
    return with_lock(key, options, std::forward<Fn>(fn));
  }
  template <class Fn>
  decltype(auto) with_shared_lock(std::string_view key, Fn&& fn) {
    return with_shared_lock(key, WithLockOptions{}, std::forward<Fn>(fn));
  }
  // with_lock on `take` of the `permits` permits of a semaphore key. Sets options.mode.
  template <class Fn>
  decltype(auto) with_permits(std::string_view key, std::uint32_t permits, std::uint32_t take,
                              WithLockOptions options, Fn&& fn) {
    options.mode = AcquireMode::semaphore(permits, take);
    return with_lock(key, options, std::forward<Fn>(fn));
  }
  template <class Fn>
  decltype(auto) with_permits(std::string_view key, std::uint32_t permits, std::uint32_t take,
                              Fn&& fn) {
    return with_permits(key, permits, take, WithLockOptions{}, std::forward<Fn>(fn));
  }

  // Acquires every key of `keys` at once (acquire_all), runs fn, always releases the group,
  // returns what fn returns. fn is fn() or fn(LockGroupContext&) (tokens per key, the lost
  // signal). Renews the group's lease in the background as with_lock does. Throws what
  // acquire_all() throws when the keys are not won; fn does not run then.
  //   client.with_locks({{"accounts/1"}, {"accounts/2"}}, {.ttl = 10s, .timeout = 5s},
  //                     [&](holdfast::LockGroupContext& ctx) { move_money(ctx); });
  template <class Fn>
  decltype(auto) with_locks(const std::vector<KeyRequest>& keys, const WithLocksOptions& options,
                            Fn&& fn);
  template <class Fn>
  decltype(auto) with_locks(const std::vector<KeyRequest>& keys, Fn&& fn) {
    return with_locks(keys, WithLocksOptions{}, std::forward<Fn>(fn));
  }

  // A critical section for one resource, its key built from a template (see format_key):
  //   client.locked("task:{}", task_id).run([&] { move_task(task_id, column); });
  //   client.locked("payment:{orderId}", {{"orderId", order_id}}).run([&] { charge(order_id); });
  template <class... Args>
  LockedSection locked(std::string_view pattern, const Args&... args);
  LockedSection locked(std::string_view pattern, std::initializer_list<KeyField> fields);

  ClientStats stats() const;

  // Internal (src/client/client_impl.h). Named here, and public, only so that the library's own
  // files can refer to it; nothing about it is promised.
  struct Impl;

 private:
  friend class LockScope;
  friend class LockGroupScope;
  template <typename Fn>
  static decltype(auto) run_as_holder(const HolderInfo& hold, Fn&& fn) {
    static_assert(std::is_invocable_v<Fn&, std::uint64_t> || std::is_invocable_v<Fn&>,
                  "as_holder: fn must be callable as fn() or fn(std::uint64_t token)");
    if constexpr (std::is_invocable_v<Fn&, std::uint64_t>) {
      return std::invoke(std::forward<Fn>(fn), hold.token);
    } else {
      return std::invoke(std::forward<Fn>(fn));
    }
  }

  std::unique_ptr<Impl> impl_;
};

// A key plus options, waiting to wrap a function; made by Client::locked(). Cheap to copy.
// REQUIRES: the Client outlives it.
class LockedSection {
 public:
  LockedSection(Client& client, std::string key) : client_(&client), key_(std::move(key)) {}

  const std::string& key() const noexcept { return key_; }
  // Replaces the options used by run(). Default: WithLockOptions{}.
  LockedSection& options(WithLockOptions options) {
    options_ = std::move(options);
    return *this;
  }
  // client.with_lock(key(), options, fn).
  template <class Fn>
  decltype(auto) run(Fn&& fn) {
    return client_->with_lock(key_, options_, std::forward<Fn>(fn));
  }

 private:
  Client* client_;
  std::string key_;
  WithLockOptions options_;
};

template <class Fn>
decltype(auto) Client::with_lock(std::string_view key, const WithLockOptions& options, Fn&& fn) {
  static_assert(std::is_invocable_v<Fn&, LockContext&> || std::is_invocable_v<Fn&>,
                "with_lock: fn must be callable as fn() or fn(holdfast::LockContext&)");
  LockScope scope(*this, key, options);  // its destructor releases, after fn's result exists
  if constexpr (std::is_invocable_v<Fn&, LockContext&>) {
    return std::invoke(fn, scope.context());
  } else {
    return std::invoke(fn);
  }
}

template <class Fn>
decltype(auto) Client::with_locks(const std::vector<KeyRequest>& keys,
                                  const WithLocksOptions& options, Fn&& fn) {
  static_assert(std::is_invocable_v<Fn&, LockGroupContext&> || std::is_invocable_v<Fn&>,
                "with_locks: fn must be callable as fn() or fn(holdfast::LockGroupContext&)");
  LockGroupScope scope(*this, keys, options);  // its destructor releases the whole group
  if constexpr (std::is_invocable_v<Fn&, LockGroupContext&>) {
    return std::invoke(fn, scope.context());
  } else {
    return std::invoke(fn);
  }
}

template <class... Args>
LockedSection Client::locked(std::string_view pattern, const Args&... args) {
  return LockedSection(*this, format_key(pattern, args...));
}

inline LockedSection Client::locked(std::string_view pattern,
                                    std::initializer_list<KeyField> fields) {
  return LockedSection(*this, format_key(pattern, fields));
}

}  // namespace holdfast::inline v0
