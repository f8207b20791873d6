// Options of the Holdfast client and of its calls. Every default is stated where the option is
// declared; designated initializers read well at the call site:
//
//   client.acquire("jobs:import", {.ttl = 60s, .timeout = 10s, .owner = run_id});
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "holdfast/lock_handle.h"

namespace holdfast::inline v0 {

using std::chrono::milliseconds;

// The mode an acquire asks for (docs/lock-kinds.md); the default is exclusive. Made only by
// the three functions below, so that a mode and semaphore permits cannot be mixed:
//   client.acquire("catalog", {.mode = AcquireMode::shared()});
//   client.acquire("gpu-pool", {.mode = AcquireMode::semaphore(8, 2)});  // 2 of the key's 8
class AcquireMode {
 public:
  constexpr AcquireMode() = default;
  static constexpr AcquireMode exclusive() { return {}; }
  static constexpr AcquireMode shared() { return AcquireMode(LockMode::kShared, 0, 0); }
  // A hold of `take` permits on a key of `permits` permits. The server decides a key's permits
  // at its first hold; asking for another number while it has holds or waiters, permits or
  // take out of 1..1 000 000, or take above permits is InvalidArgumentError.
  static constexpr AcquireMode semaphore(std::uint32_t permits, std::uint32_t take = 1) {
    return AcquireMode(LockMode::kSemaphore, permits, take);
  }

  constexpr LockMode mode() const noexcept { return mode_; }
  constexpr std::uint32_t permits() const noexcept { return permits_; }  // kSemaphore only
  constexpr std::uint32_t take() const noexcept { return take_; }        // kSemaphore only

 private:
  constexpr AcquireMode(LockMode mode, std::uint32_t permits, std::uint32_t take)
      : mode_(mode), permits_(permits), take_(take) {}
  LockMode mode_ = LockMode::kExclusive;
  std::uint32_t permits_ = 0;
  std::uint32_t take_ = 0;
};

// How a Client connects. The URL (see Client) names the server; these tune the connections.
struct ClientOptions {
  // Bearer token sent as `AUTH <token>` on every new connection. Empty (the default): the
  // token of the URL (holdfast://:TOKEN@host:port) if any, else no AUTH (a server in local open
  // mode needs none). A token given here wins over the URL's.
  std::string token{};
  // With a token, `AUTH <user> <token>` instead of `AUTH <token>`. Default: empty (the URL's
  // user part, if any).
  std::string user{};
  // Time allowed to open a connection and finish the handshake (AUTH, HELLO). Default 5 s.
  milliseconds connect_timeout{5000};
  // Time allowed for one ordinary call to be written and answered. When it passes the call
  // fails with ConnectionError and its connection is closed (a late reply would confuse the
  // next call). Default 10 s.
  milliseconds io_timeout{10000};
  // A blocking acquire waits on the server; its reply may take the whole acquire timeout. Its
  // connection waits for the acquire timeout plus this margin before giving up. Default 5 s.
  milliseconds acquire_margin{5000};
  // Idle connections kept open for reuse. Busy connections are not capped: a call never waits
  // for another call's connection (a release must not queue behind blocked acquires). Default 4.
  std::size_t max_idle_connections = 4;
};

// acquire(): a blocking acquire in the key's FIFO queue on the server.
struct AcquireOptions {
  // The lease: the hold ends this long after the grant unless renewed. Must be positive; the
  // server caps it at 24 h. Default 30 s.
  milliseconds ttl{30000};
  // How long to wait for the key, first behind other callers of this process (the local
  // queue), then on the server with the time left. 0 means one attempt. Default 30 s.
  milliseconds timeout{30000};
  // Names the run that holds the key. A later acquire by the same principal with the same
  // owner re-takes the hold at once (fresh handle and token, the old handle fenced). Default:
  // none (the hold is never re-entered). Never a static string shared by unrelated callers.
  std::optional<std::string> owner{};
  // Session scope: the hold also ends when the connection that took it closes. The Client keeps
  // that connection open until the Client is destroyed or the connection breaks. Default false.
  bool session = false;
  // Exclusive (the default), shared, or permits of a semaphore. Shared and semaphore acquires
  // skip the local queue (several callers of one process may hold the key together) and wait
  // only in the server's queue.
  AcquireMode mode{};
};

// try_acquire(): one attempt, no waiting.
struct TryAcquireOptions {
  milliseconds ttl{30000};             // as AcquireOptions::ttl. Default 30 s.
  std::optional<std::string> owner{};  // as AcquireOptions::owner. Default none.
  bool session = false;                // as AcquireOptions::session. Default false.
  AcquireMode mode{};                  // as AcquireOptions::mode. Default exclusive.
};

// with_lock() / LockScope: acquire, run, always release; optionally renew in the background.
struct WithLockOptions {
  milliseconds ttl{30000};             // the lease of each grant and renewal. Default 30 s.
  milliseconds timeout{30000};         // as AcquireOptions::timeout. Default 30 s.
  std::optional<std::string> owner{};  // as AcquireOptions::owner. Default none.
  bool session = false;                // as AcquireOptions::session. Default false.
  // Renew the lease in the background while fn runs, every `renew_fraction * ttl`, so work of
  // unknown length keeps the key. Renewal stops before with_lock returns. Default true.
  bool renew = true;
  // Fraction of the TTL between renewals, in (0, 1). Default 1/3: two renewals can fail
  // before the lease ends.
  double renew_fraction = 1.0 / 3.0;
  // Called once, on a background thread, when the lease is known to be lost: a renewal
  // answered `lease_lost` (the hold was re-taken, or it expired and someone else took the key),
  // or the lease ran out without a successful renewal. It must be quick and must not throw or
  // block on the scope. Default: none (poll LockContext::lost() instead).
  std::function<void(const LockHandle&)> on_lost{};
  AcquireMode mode{};  // as AcquireOptions::mode. Default exclusive.
};

// list(): one page of holds.
struct ListOptions {
  std::string match{};       // a glob on the key (`*`, `?`, `[...]`); empty: every key
  std::string cursor = "0";  // "0" starts; pass the previous page's next_cursor to go on
  std::size_t count = 100;   // at most this many holds in the page (the server caps 10000)
};

// assign(): an identity-aware hold on behalf of a holder id.
struct AssignOptions {
  // The lease. Default none: the assignment never expires until unassigned or transferred.
  std::optional<milliseconds> ttl{};
  // Wait in the key's FIFO queue this long. Default none: one attempt that fails with
  // LockHeldError when the key is held by anyone else.
  std::optional<milliseconds> timeout{};
};

}  // namespace holdfast::inline v0
