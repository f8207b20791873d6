// Scoped holds: LockScope takes a key for the lifetime of a C++ scope and LockContext is what
// the code inside sees. Client::with_lock() and Client::locked() are built on them.
//
// Lifecycle of a LockScope:
//   1. Wait for the key on the local queue of this Client (one caller per key at a time in this
//      process), then on the server with the time left; throw LockTimeoutError when the
//      timeout passes (nothing is held then).
//   2. Start a monitor thread if renewal or an on_lost callback is asked for. It renews the
//      lease every renew_fraction * ttl; it marks the lease lost when a renewal answers
//      `lease_lost` or when the lease runs out without one.
//   3. On destruction (fn returned or threw): stop the monitor and wait for it (no renewal is
//      sent after this), release the hold with its handle, leave the local queue.
//
// What "lost" means: the client can no longer be sure it holds the key. It is computed on the
// client's monotonic clock from the moment each grant/renewal request was sent, so it errs on
// the early side. Code that writes to a protected resource should still pass token() along
// (fencing): a process can be paused between checking lost() and writing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "holdfast/lock_handle.h"
#include "holdfast/options.h"

namespace holdfast::inline v0 {

class Client;
namespace detail {
struct ScopeState;
}

// What fn sees inside with_lock(key, opts, [](LockContext& ctx) {...}). Valid until with_lock
// returns; thread-safe (fn may hand it to its own worker threads for that long).
class LockContext {
 public:
  const std::string& key() const noexcept;
  // The hold's handle string (stays the same while the scope lives).
  const std::string& handle() const noexcept;
  // The fencing token of this grant: pass it to the resource you write to.
  std::uint64_t token() const noexcept;
  // The hold as of the last grant or renewal (lease_expires_at moves with each renewal).
  LockHandle lock_handle() const;
  // True once the lease is known to be lost (see the file comment). Never goes back to false.
  bool lost() const;
  // Blocks until the lease is lost or `timeout` passes; returns lost(). Useful for a worker
  // that should stop as soon as it no longer holds the key.
  bool wait_lost(milliseconds timeout) const;

 private:
  friend class LockScope;
  explicit LockContext(detail::ScopeState* state) : state_(state) {}
  detail::ScopeState* state_;
};

// Holds `key` from construction to destruction (RAII). Not copyable or movable: the context
// and the monitor thread refer to it.
// REQUIRES: `client` outlives the scope.
class LockScope {
 public:
  // Acquires as described in step 1; throws LockTimeoutError, or the server's error
  // (InvalidArgumentError, AccessDeniedError, ...), or ConnectionError.
  LockScope(Client& client, std::string_view key, const WithLockOptions& options = {});
  // Stops renewal, then releases; never throws (a release that fails leaves the hold to end
  // at its lease).
  ~LockScope();
  LockScope(const LockScope&) = delete;
  LockScope& operator=(const LockScope&) = delete;

  LockContext& context() noexcept { return context_; }
  // Stops renewal and releases now instead of at destruction; later calls answer
  // {released: false, reason: "already_released"}. Throws ConnectionError if the server
  // cannot be reached (the hold then ends at its lease).
  ReleaseResult release();

 private:
  std::unique_ptr<detail::ScopeState> state_;
  LockContext context_;
};

}  // namespace holdfast::inline v0
