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
#include <vector>

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
  // TLS, for rediss:// URLs only (docs/tls.md): PEM files of the CAs to trust (default empty:
  // the system's CAs), and of a client certificate and its key, which a server whose
  // credentials give a caller that certificate's common name takes as that caller (no token
  // needed). Default: none. A file that does not load is InvalidArgumentError from the
  // Client's constructor; so is any of them with a URL that is not rediss://.
  std::string tls_ca{};
  std::string tls_cert{};
  std::string tls_key{};
  // Check that the server's certificate names the host of the URL (its DNS name or IP
  // address). Default true; false only for a server known by its CA alone.
  bool tls_verify_hostname = true;
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
  // Keep the key closed this long after the hold vanishes (its lease ran out, or its session
  // ended) so that a holder that did not notice has time to stop (docs/lock-kinds.md,
  // "Lock-delay"). A release closes nothing. 0 to 60 s; anything else is InvalidArgumentError
  // from the server. Default: none asked (the rule set's lockDelayMs, else none).
  std::optional<milliseconds> lock_delay{};
};

// try_acquire(): one attempt, no waiting.
struct TryAcquireOptions {
  milliseconds ttl{30000};                   // as AcquireOptions::ttl. Default 30 s.
  std::optional<std::string> owner{};        // as AcquireOptions::owner. Default none.
  bool session = false;                      // as AcquireOptions::session. Default false.
  AcquireMode mode{};                        // as AcquireOptions::mode. Default exclusive.
  std::optional<milliseconds> lock_delay{};  // as AcquireOptions::lock_delay. Default none.
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
  AcquireMode mode{};                        // as AcquireOptions::mode. Default exclusive.
  std::optional<milliseconds> lock_delay{};  // as AcquireOptions::lock_delay. Default none.
};

// One key of a multi-key request (acquire_all, try_acquire_all, with_locks) and the mode it
// is asked in: {.key = "accounts/1"}, {.key = "catalog", .mode = AcquireMode::shared()}.
struct KeyRequest {
  std::string key{};
  AcquireMode mode{};  // Default exclusive.
};

// acquire_all(): every key at once or none, waiting in every key's queue on the server.
struct AcquireAllOptions {
  milliseconds ttl{30000};             // the group's one lease. Default 30 s.
  milliseconds timeout{30000};         // 0 means one attempt. Default 30 s.
  std::optional<std::string> owner{};  // as AcquireOptions::owner, for the whole group.
  bool session = false;                // as AcquireOptions::session. Default false.
};

// try_acquire_all(): one attempt at every key, no waiting.
struct TryAcquireAllOptions {
  milliseconds ttl{30000};             // as AcquireAllOptions::ttl. Default 30 s.
  std::optional<std::string> owner{};  // as AcquireOptions::owner. Default none.
  bool session = false;                // as AcquireOptions::session. Default false.
};

// with_locks() / LockGroupScope: acquire every key, run, always release the group; optionally
// renew it in the background. The fields mean what they mean in WithLockOptions.
struct WithLocksOptions {
  milliseconds ttl{30000};             // Default 30 s.
  milliseconds timeout{30000};         // Default 30 s.
  std::optional<std::string> owner{};  // Default none.
  bool session = false;                // Default false.
  bool renew = true;                   // Default true.
  double renew_fraction = 1.0 / 3.0;   // in (0, 1). Default 1/3.
  // Called once, on a background thread, when the group's lease is known to be lost (as
  // WithLockOptions::on_lost). Default: none.
  std::function<void(const LockGroup&)> on_lost{};
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
  // As AcquireOptions::lock_delay: keep the key closed this long after the assignment's lease
  // runs out. Default: none asked (the rule set's lockDelayMs, else none).
  std::optional<milliseconds> lock_delay{};
};

}  // namespace holdfast::inline v0
