// The durable description of a hold and the changes the lock table reports to its store.
// These are the records of docs/reference.md section 2 "Durability": the store persists them,
// recovery rebuilds the table from them.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/clock.h"
#include "core/handle.h"
#include "core/values/value.h"
#include "core/values/value_edit.h"

namespace holdfast {

enum class Scope : std::uint8_t { kLease = 0, kSession = 1 };
enum class HoldKind : std::uint8_t { kHandle = 0, kAssigned = 1 };
// How a grant shares its key (docs/lock-kinds.md). An exclusive hold is the key's only hold; a
// shared key has any number of shared holds; a semaphore key has holds whose takes add up to
// at most the key's permits.
enum class LockMode : std::uint8_t { kExclusive = 0, kShared = 1, kSemaphore = 2 };

inline std::string_view scope_name(Scope s) { return s == Scope::kSession ? "session" : "lease"; }
inline std::string_view kind_name(HoldKind k) {
  return k == HoldKind::kAssigned ? "assigned" : "handle";
}
inline std::string_view mode_name(LockMode m) {
  switch (m) {
    case LockMode::kExclusive:
      return "exclusive";
    case LockMode::kShared:
      return "shared";
    case LockMode::kSemaphore:
      return "semaphore";
  }
  return "exclusive";
}

// A hold as stored and as shown to the caller who made it.
struct HoldState {
  std::string key;
  Handle handle;            // null for assigned holds
  std::uint64_t token = 0;  // fencing token
  std::string held_by;      // "user:<id>" | "function:<name>"
  std::string owner;        // empty: no owner
  std::string holder_id;    // assigned holds: the holder id
  Millis acquired_at = 0;
  Millis lease_expires_at = kNever;  // kNever: an assigned hold without TTL
  Scope scope = Scope::kLease;
  HoldKind kind = HoldKind::kHandle;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t permits = 0;  // semaphore: the key's number of permits
  std::uint32_t take = 0;     // semaphore: how many of them this hold takes
  // Lock-delay (docs/lock-kinds.md): when this hold's lease ends by expiry (or its session
  // ends), the key grants nothing until that instant plus this many milliseconds. 0: none.
  Millis lock_delay_ms = 0;

  bool operator==(const HoldState&) const = default;
};

// A hold seen where it lives, without copying its strings: what a snapshot encodes. Valid only
// while the hold it was taken from is unchanged.
struct HoldView {
  std::string_view key;
  Handle handle;
  std::uint64_t token = 0;
  std::string_view held_by;
  std::string_view owner;
  std::string_view holder_id;
  Millis acquired_at = 0;
  Millis lease_expires_at = kNever;
  Scope scope = Scope::kLease;
  HoldKind kind = HoldKind::kHandle;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t permits = 0;
  std::uint32_t take = 0;
  Millis lock_delay_ms = 0;
};

inline HoldView view_of(const HoldState& h) {
  return HoldView{h.key,         h.handle,           h.token, h.held_by, h.owner, h.holder_id,
                  h.acquired_at, h.lease_expires_at, h.scope, h.kind,    h.mode,  h.permits,
                  h.take,        h.lock_delay_ms};
}

inline HoldState state_of(const HoldView& v) {
  return HoldState{std::string(v.key),
                   v.handle,
                   v.token,
                   std::string(v.held_by),
                   std::string(v.owner),
                   std::string(v.holder_id),
                   v.acquired_at,
                   v.lease_expires_at,
                   v.scope,
                   v.kind,
                   v.mode,
                   v.permits,
                   v.take,
                   v.lock_delay_ms};
}

// What the store must make durable before the reply that reports it leaves.
struct Granted {  // a new hold on key (acquire, re-take, hand-off, assign, transfer)
  HoldState hold;
};
// The holds of one multi-key grant (docs/lock-kinds.md), made all at once: one handle, one
// hold per key, in key order, tokens rising in that order. Durable all or nothing.
struct GroupGranted {
  std::vector<HoldState> holds;
};
struct Renewed {  // the hold with this token now ends at lease_expires_at
  std::string key;
  std::uint64_t token = 0;
  Millis lease_expires_at = 0;
};
struct Released {  // the hold with this token is gone (release, unassign, session end)
  std::string key;
  std::uint64_t token = 0;
};
struct RuleSetPut {  // the lock rule set, as pushed (TOML text)
  std::string name;
  std::string toml;
};
struct RuleSetDeleted {
  std::string name;
};
// Expiry is not a change: a lease that ended is ended on recovery too (absolute expiry).

// The store's own promise in the horizon durability mode (docs/horizon.md), never reported by
// the lock table: no lease answered so far ends after `until` or lasts longer than
// `max_lease` from its grant or renewal, and no token above `tokens_through` was handed out.
// `clean`: written by a clean stop after everything appended was on disk; `until` is then the
// end of a quarantine that was still running, if any.
struct LeaseHorizon {
  static constexpr Millis kNoLeaseBound = std::numeric_limits<Millis>::max();

  Millis until = 0;
  std::uint64_t tokens_through = 0;
  Millis written_at = 0;  // the wall clock when the record was made
  bool clean = false;
  // At least the time from `written_at` to the end of a quarantine still running. A record
  // from a log written before the field existed has no bound.
  Millis max_lease = kNoLeaseBound;
};

// A typed value's changes (core/values/value_edit.h) are changes like a grant: logged, and
// answered once durable.
using Change = std::variant<Granted, Renewed, Released, RuleSetPut, RuleSetDeleted, LeaseHorizon,
                            GroupGranted, ValueEdit>;

// Everything that survives a restart.
struct DurableState {
  std::uint64_t last_token = 0;  // tokens after a restart start above this
  std::vector<HoldState> holds;  // live lease-scoped holds (session holds never survive)
  std::optional<RuleSetPut> rule_set;
  // After an unclean stop of a server that answered before the disk (the horizon mode): no new
  // grant before this instant, when every lease it may have answered has ended. 0: none.
  Millis grants_closed_until = 0;
  // The typed values (counters, sorted sets, hashes, lists) whose expiry had not come.
  std::vector<DurableValue> values;
};

// Receives every change the lock table makes, in order, on the loop thread.
class ChangeSink {
 public:
  virtual ~ChangeSink() = default;
  virtual void on_change(const Change& change) = 0;
};

}  // namespace holdfast
