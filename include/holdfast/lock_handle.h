// The values the Holdfast client hands back: a LockHandle for a hold you took, HoldInfo for a
// hold as others see it (status, list), and the small results of renew, release and the
// assigned-hold calls. All are plain copyable values; none keeps a reference to the Client.
//
// Times are std::chrono::system_clock instants with millisecond precision, exactly as the
// server reported them (milliseconds since the Unix epoch). They are the server's clock;
// a client whose clock differs sees them shifted by the difference.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::inline v0 {

using Clock = std::chrono::system_clock;
using TimePoint = std::chrono::time_point<Clock, std::chrono::milliseconds>;

// How long a hold lives: until its lease ends (kLease), or also until the connection that took
// it closes (kSession).
enum class Scope { kLease, kSession };

// kHandle: taken by acquire/try_acquire, freed with its handle. kAssigned: held on behalf of a
// holder id (assign/transfer/unassign), no handle.
enum class HoldKind { kHandle, kAssigned };

// How a key is held (docs/lock-kinds.md): one exclusive hold, any number of shared holds, or
// holds on a semaphore's permits.
enum class LockMode { kExclusive, kShared, kSemaphore };

// The wire names: "lease"/"session", "handle"/"assigned", "exclusive"/"shared"/"semaphore".
const char* to_string(Scope scope) noexcept;
const char* to_string(HoldKind kind) noexcept;
const char* to_string(LockMode mode) noexcept;

// A hold you own. Everything release() and renew() need is in here, so it can be stored,
// copied or passed to another thread; it stays valid after the Client is gone (it is only
// data). `token` is the fencing token: pass it on to the resource you protect so that it can
// refuse a writer whose lease has already ended (see docs/client.md).
struct LockHandle {
  std::string key{};
  std::string handle{};     // opaque, 20-64 printable characters; proves you are the holder
  std::uint64_t token = 0;  // fencing token, strictly increasing across all grants
  std::string held_by{};    // the principal, e.g. "user:local"
  std::optional<std::string> owner{};
  TimePoint acquired_at{};
  TimePoint lease_expires_at{};  // as of the grant or the last renew() through this value
  Scope scope = Scope::kLease;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t permits = 0;  // kSemaphore: the key's permits; 0 otherwise
  std::uint32_t take = 0;     // kSemaphore: how many of them this hold takes; 0 otherwise
  // How long the key stays closed after this hold vanishes without a release; 0 when the hold
  // has no lock-delay (docs/lock-kinds.md, "Lock-delay").
  std::chrono::milliseconds lock_delay{0};
};

// A multi-key grant (acquire_all, try_acquire_all): one handle and one lease for every key,
// one hold per key. Renewing or releasing the group through any of its keys renews or releases
// all of them. Plain data, like LockHandle.
struct LockGroup {
  std::string handle{};             // the group's handle, shared by every hold in `holds`
  TimePoint lease_expires_at{};     // as of the grant or the last renew() through this value
  std::vector<LockHandle> holds{};  // one per key, in key order (the keys sorted as bytes)

  // The hold of `key`; nullptr when the group does not have that key.
  const LockHandle* find(std::string_view key) const noexcept {
    for (const LockHandle& h : holds)
      if (h.key == key) return &h;
    return nullptr;
  }
};

// A hold as status() and list() show it: never with the handle (only the acquirer learns it).
struct HoldInfo {
  std::string key{};
  std::uint64_t token = 0;
  std::string held_by{};
  std::optional<std::string> owner{};
  TimePoint acquired_at{};
  std::optional<TimePoint> lease_expires_at{};  // empty: an assignment without TTL, never expires
  Scope scope = Scope::kLease;
  HoldKind kind = HoldKind::kHandle;
  std::optional<std::string> holder{};  // the holder id of an assigned hold
  LockMode mode = LockMode::kExclusive;
  std::uint32_t permits = 0;                // kSemaphore: the key's permits; 0 otherwise
  std::uint32_t take = 0;                   // kSemaphore: how many of them this hold takes
  std::chrono::milliseconds lock_delay{0};  // as LockHandle::lock_delay
};

// status(key): the hold if the key is held, and the length of its FIFO queue either way. A key
// held shared or as a semaphore has several holds: `hold` is the newest, `holders` all of them.
struct LockStatus {
  std::string key{};
  std::int64_t waiters = 0;
  std::optional<HoldInfo> hold{};        // empty: the key is free
  LockMode mode = LockMode::kExclusive;  // how the key is held (kExclusive when free)
  std::vector<HoldInfo> holders{};       // every hold, oldest first; empty when free
  std::uint32_t permits = 0;             // kSemaphore: the key's permits; 0 otherwise
  std::uint32_t free_permits = 0;        // kSemaphore: permits no hold takes; 0 otherwise
  // While a lock-delay keeps the key closed (nobody holds it, and nothing is granted): the
  // instant it opens again. Empty otherwise.
  std::optional<TimePoint> lock_delay_until{};

  bool held() const noexcept { return hold.has_value(); }
};

// renew(): renewed, with the new lease end; or not, with the server's reason ("lease_lost": the
// handle is no longer the key's current handle: the lease ended and/or someone else took the key).
struct RenewResult {
  bool renewed = false;
  std::optional<TimePoint> lease_expires_at{};  // set when renewed
  std::string reason{};                         // set when not renewed

  explicit operator bool() const noexcept { return renewed; }
};

// release(): released; or not, with the reason ("not_holder": the handle is not the current
// one, so the key was already free or belongs to someone else, and nothing changed).
struct ReleaseResult {
  bool released = false;
  std::string reason{};

  explicit operator bool() const noexcept { return released; }
};

// One page of list(). `next_cursor` "0" means there are no more pages.
struct ListPage {
  std::vector<HoldInfo> holds{};
  std::string next_cursor = "0";

  bool last() const noexcept { return next_cursor == "0"; }
};

// assign(): the key is now held on behalf of `holder`.
struct Assignment {
  std::string key{};
  std::string holder{};
  std::uint64_t token = 0;
  std::string held_by{};  // the principal that made the assignment
  TimePoint acquired_at{};
  std::optional<TimePoint> lease_expires_at{};  // empty: no TTL, never expires
  std::chrono::milliseconds lock_delay{0};      // as LockHandle::lock_delay
};

// transfer(): the new holder and the new token minted for it.
// The server's lock rule set, as pushed.
struct RuleSetInfo {
  std::string name{};
  std::string toml{};
};

struct TransferResult {
  std::string holder{};
  std::uint64_t token = 0;
};

// holder(key) and verify_holder(key): who holds an assigned key. `held` with no `holder` means
// the key is held by a handle (acquire/try_acquire), not by an assignment.
struct HolderInfo {
  std::string key{};
  bool held = false;
  std::optional<std::string> holder{};
  std::uint64_t token = 0;  // the hold's fencing token; 0 when the key is free
  std::optional<TimePoint> acquired_at{};
  std::optional<TimePoint> lease_expires_at{};
};

}  // namespace holdfast::inline v0
