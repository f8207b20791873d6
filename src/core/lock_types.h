// The names every part of the lock server shares about locks: connection and waiter ids, and
// the answer of each operation. The lock table, both backends, the policy layer and the front
// ends use these; none of them needs the table itself to speak of a lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/hold.h"

namespace holdfast {

using SessionId = std::uint64_t;  // a client connection; 0 = none
using WaiterId = std::uint64_t;

// Lets maps keyed by std::string be searched with a std::string_view, without a copy.
// Deliberately not noexcept: libstdc++ then stores each key's hash in its node, so a lookup
// compares hashes before strings and a rehash never hashes a key again.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A page of LOCK.LIST holds COUNT holds: 100 unless asked, at most this many.
inline constexpr std::size_t kDefaultListPage = 100;
inline constexpr std::size_t kMaxListPage = 10'000;

// The longest lock-delay a hold may ask for (docs/lock-kinds.md, "Lock-delay").
inline constexpr Millis kMaxLockDelayMs = 60'000;

// A multi-key request names at most this many keys (docs/lock-kinds.md).
inline constexpr std::size_t kMaxGroupKeys = 64;

// A multi-key grant: one handle for the whole group, and one hold per key (in key order, each
// with its own token and mode; every hold carries the group's handle).
struct GroupHold {
  Handle handle;
  Millis lease_expires_at = 0;
  std::vector<HoldState> holds;
};

struct RenewOutcome {
  bool renewed = false;
  Millis lease_expires_at = 0;  // when renewed
};

struct ReleaseOutcome {
  bool released = false;
};

struct StatusView {
  std::string key;
  bool held = false;
  HoldState hold;  // when held; its handle is always null (only the acquirer learns it). A
                   // shared or semaphore key shows its newest hold here.
  std::size_t waiters = 0;
  LockMode mode = LockMode::kExclusive;  // when held
  std::vector<HoldState> holders;        // shared or semaphore: every hold, oldest first
  std::uint32_t permits = 0;             // semaphore: the key's permits
  std::uint32_t free_permits = 0;        // semaphore: the permits no hold takes
  // While a lock-delay keeps the key closed (docs/lock-kinds.md): the instant it opens; else 0.
  Millis lock_delay_until = 0;
  Millis as_of = 0;  // the server's clock when the status was taken (PTTL counts from it)
};

struct ListPage {
  std::string next_cursor;       // "0" when this is the last page
  std::vector<HoldState> holds;  // handles nulled
};

struct HolderView {
  std::string key;
  bool held = false;
  std::optional<std::string> holder;  // the holder id of an assigned hold
  std::uint64_t token = 0;            // when held: the hold's fencing token
  Millis acquired_at = 0;
  Millis lease_expires_at = kNever;
};

// Counters for /metrics, kept by whichever backend holds the locks.
struct LockCounters {
  std::uint64_t grants = 0;
  std::uint64_t releases = 0;
  std::uint64_t expiries = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t renewals = 0;
};

}  // namespace holdfast
