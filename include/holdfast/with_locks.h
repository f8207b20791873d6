// Scoped multi-key holds: LockGroupScope takes several keys at once, all or none, for the
// lifetime of a C++ scope, and LockGroupContext is what the code inside sees.
// Client::with_locks() is built on them.
//
// Lifecycle of a LockGroupScope (as a LockScope's, with_lock.h, but for a group):
//   1. One LOCK.ACQUIREALL: the server queues the request on every key at once and grants all
//      of them together, or throws LockTimeoutError (naming the first key in key order) when
//      the timeout passes; nothing is held then. There is no local queue for groups: the
//      server's queues order them without deadlock (docs/lock-kinds.md).
//   2. A monitor thread, if renewal or an on_lost callback is asked for, renews the group's
//      one lease every renew_fraction * ttl and marks it lost as a LockScope's monitor does.
//   3. On destruction: stop the monitor, release the whole group with its handle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "holdfast/lock_handle.h"
#include "holdfast/options.h"

namespace holdfast::inline v0 {

class Client;
namespace detail {
struct ScopeState;
}

// What fn sees inside with_locks(keys, opts, [](LockGroupContext& ctx) {...}). Valid until
// with_locks returns; thread-safe.
class LockGroupContext {
 public:
  // The group's handle (the same for every key, for as long as the scope lives).
  const std::string& handle() const noexcept;
  // The fencing token of `key`'s hold: pass it to what that key protects. Throws
  // InvalidArgumentError when the group has no such key.
  std::uint64_t token(std::string_view key) const;
  // The group as of the grant or the last renewal.
  LockGroup group() const;
  // True once the group's lease is known to be lost (as LockContext::lost()).
  bool lost() const;
  // Blocks until the lease is lost or `timeout` passes; returns lost().
  bool wait_lost(milliseconds timeout) const;

 private:
  friend class LockGroupScope;
  explicit LockGroupContext(detail::ScopeState* state) : state_(state) {}
  detail::ScopeState* state_;
};

// Holds every key of `keys` from construction to destruction (RAII). Not copyable or movable.
// REQUIRES: `client` outlives the scope.
class LockGroupScope {
 public:
  // Acquires as described in step 1; throws LockTimeoutError, the server's error
  // (InvalidArgumentError for no keys, more than 64, a key named twice, a bad mode;
  // AccessDeniedError ...), or ConnectionError.
  LockGroupScope(Client& client, const std::vector<KeyRequest>& keys,
                 const WithLocksOptions& options = {});
  // Stops renewal, then releases the group; never throws.
  ~LockGroupScope();
  LockGroupScope(const LockGroupScope&) = delete;
  LockGroupScope& operator=(const LockGroupScope&) = delete;

  LockGroupContext& context() noexcept { return context_; }
  // Stops renewal and releases now; later calls answer {released: false, reason:
  // "already_released"}. Throws ConnectionError if the server cannot be reached.
  ReleaseResult release();

 private:
  std::unique_ptr<detail::ScopeState> state_;
  LockGroupContext context_;
};

}  // namespace holdfast::inline v0
