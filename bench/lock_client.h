// LockClient: one connection to one target, speaking that target's lock recipe. The
// workloads are written once against this interface; each target maps it to its own wire
// protocol (RESP for Holdfast and Redis, libpq for PostgreSQL, HTTP/JSON for etcd).
//
// Contract shared by every implementation:
//   - Operations are queued and go out at the event loop's flush point (see event_loop.h), so
//     what a workload asks for in one iteration leaves in one write.
//   - Replies come back in request order, one OpReply per operation, through the listener.
//     The reply's string_views are valid only during the callback.
//   - `tag` is returned untouched; workloads put the send time or a slot number in it.
//   - A lock is named by a number; each target turns it into its own key (a string key, or the
//     bigint of a PostgreSQL advisory lock).
//   - A transport failure closes the connection: every operation still in flight is answered
//     with kError and healthy() turns false; later operations are answered kError at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace holdfast::bench {

enum class OpKind : std::uint8_t { kTryAcquire, kAcquire, kRelease, kPing };

enum class OpStatus : std::uint8_t {
  kGranted,   // try/acquire: the lock is ours; handle says how to release it
  kBusy,      // try: held by someone else (not an error)
  kTimeout,   // blocking acquire: the server gave up waiting (LOCK_TIMEOUT)
  kReleased,  // release: it was ours and is free now
  kNotHeld,   // release: it was not ours any more (expired, or a bug somewhere)
  kPong,      // ping answered
  kError,     // anything unexpected: an error reply, an unparsable reply, a closed socket
};

struct OpReply {
  OpKind kind;
  OpStatus status;
  std::uint64_t tag;
  std::string_view handle;  // kGranted: what release() needs
  std::string_view detail;  // kError: what went wrong, for the report
};

class ReplyListener {
 public:
  virtual ~ReplyListener() = default;
  virtual void on_reply(const OpReply& reply) = 0;
};

// The mode of a blocking acquire (docs/lock-kinds.md): exclusive by default, shared, or
// `take` of the `permits` of a semaphore (permits > 0).
struct AcquireMode {
  bool shared = false;
  std::uint32_t permits = 0;
  std::uint32_t take = 1;
};

class LockClient {
 public:
  virtual ~LockClient() = default;

  void set_listener(ReplyListener* listener) { listener_ = listener; }

  // One attempt; kGranted or kBusy.
  virtual void try_acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint64_t tag) = 0;
  // Waits on the server (FIFO) for up to timeout_ms; kGranted or kTimeout. Only targets whose
  // supports_blocking_acquire() is true implement it; others answer kError.
  virtual void acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint32_t timeout_ms,
                       std::uint64_t tag);
  // The same in a shared or semaphore mode. Only Holdfast's own commands implement it; others
  // answer kError.
  virtual void acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint32_t timeout_ms,
                       const AcquireMode& mode, std::uint64_t tag);
  // Releases what try_acquire/acquire granted with this handle.
  virtual void release(std::uint64_t lock, std::string_view handle, std::uint64_t tag) = 0;
  // A request that does nothing (the loopback floor). Only RESP targets implement it.
  virtual void ping(std::uint64_t tag);

  // Operations sent or queued and not answered yet.
  virtual std::size_t in_flight() const = 0;
  // False once the connection failed.
  virtual bool healthy() const = 0;

 protected:
  void deliver(const OpReply& reply) {
    if (listener_ != nullptr) listener_->on_reply(reply);
  }

 private:
  ReplyListener* listener_ = nullptr;
};

inline void LockClient::acquire(std::uint64_t, std::uint32_t, std::uint32_t, std::uint64_t tag) {
  deliver({OpKind::kAcquire, OpStatus::kError, tag, {}, "blocking acquire not supported"});
}

inline void LockClient::acquire(std::uint64_t, std::uint32_t, std::uint32_t, const AcquireMode&,
                                std::uint64_t tag) {
  deliver(
      {OpKind::kAcquire, OpStatus::kError, tag, {}, "shared and semaphore modes not supported"});
}

inline void LockClient::ping(std::uint64_t tag) {
  deliver({OpKind::kPing, OpStatus::kError, tag, {}, "ping not supported"});
}

}  // namespace holdfast::bench
