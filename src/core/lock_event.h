// Lock events (docs/events.md): what happened to a key, as the event stream, LOCK.WATCH and the
// web page tell it. Both backends describe their changes in these words, so a reader cannot tell
// them apart.
//
// The kinds:
//   acquired     a handle hold was granted (also a re-take, a hand-off, SET, a multi-key grant)
//   assigned     a key was assigned to a holder id
//   transferred  an assigned hold moved to another holder id (its new token)
//   renewed      a hold's lease end moved (renew, PEXPIRE, re-assigning to the same holder)
//   released     a handle hold ended by release, DEL or the end of its session
//   unassigned   an assigned hold ended by unassign (or the end of its session)
//   expired      a hold's lease ended
//   queued       a blocking request joined the key's queue
//   dequeued     a waiter left the queue: `reason` granted (an `acquired` or `assigned` of the
//                same key follows, or precedes it on a node over PostgreSQL), timeout or
//                cancelled (its connection closed)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/hold.h"

namespace holdfast {

enum class LockEventKind : std::uint8_t {
  kAcquired,
  kReleased,
  kExpired,
  kRenewed,
  kTransferred,
  kAssigned,
  kUnassigned,
  kQueued,
  kDequeued,
};
inline constexpr std::size_t kLockEventKinds = 9;

// The wire name ("acquired", ...); parse_event_kind is its inverse (false: unknown).
std::string_view event_name(LockEventKind kind);
bool parse_event_kind(std::string_view name, LockEventKind& kind);

enum class DequeueReason : std::uint8_t { kNone, kGranted, kTimeout, kCancelled };
std::string_view dequeue_reason_name(DequeueReason reason);

struct LockEvent {
  LockEventKind kind = LockEventKind::kAcquired;
  std::string key;
  std::uint64_t token = 0;           // 0: none (a waiter has no token): null on the wire
  std::string held_by;               // the hold's principal, or the waiter's
  std::string owner;                 // empty: none (left out on the wire)
  std::string holder_id;             // assigned holds and assign waiters; empty: left out
  Millis acquired_at = 0;            // holds; 0: left out
  Millis lease_expires_at = kNever;  // kNever: null (no lease end, or a waiter)
  Millis at = 0;                     // when it happened, by the server's (or database's) clock
  Scope scope = Scope::kLease;
  HoldKind hold_kind = HoldKind::kHandle;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t permits = 0;  // semaphore: the key's permits
  std::uint32_t take = 0;     // semaphore: this hold's (or waiter's) permits
  // Waiters (queued, dequeued): an id unique on the server (on a node over PostgreSQL, in the
  // cluster) that ties a queued to its dequeued; 0: not a waiter.
  std::uint64_t waiter = 0;
  Millis timeout_ms = -1;  // queued: how long it may wait; -1: left out
  DequeueReason reason = DequeueReason::kNone;
  Millis waited_ms = -1;  // dequeued: how long it waited; -1: left out
};

// Receives the events of a backend, in order, on the loop thread.
class LockEventSink {
 public:
  virtual ~LockEventSink() = default;
  virtual void on_lock_event(LockEvent&& event) = 0;
  // Some events were lost (a node's LISTEN connection broke): readers must read the state anew.
  virtual void on_events_lost() {}
  // Since set_event_sink(this), events flow: every change from now on is told. At once on a
  // single server; on a node over PostgreSQL once the cluster's triggers are on.
  virtual void on_events_ready() {}
};

// The event as the one JSON object of its `data:` line (docs/events.md has the fields), with
// `id` and `event` first. `key`, `token`, `heldBy`, `leaseExpiresAt` and `at` are always there;
// the others only when they say something: a field at its default value (no owner, `acquiredAt`
// equal to `at`, scope `lease`, kind `handle`, mode `exclusive`) is left out, which makes the
// common event some 40 % shorter for every reader it goes to. Keys, principals, owners and holder
// ids are valid UTF-8 (the policy checked them), so the JSON is too.
std::string event_json(const LockEvent& event, std::uint64_t id);
// The same, appended to `out` (whose memory a caller may reuse).
void append_event_json(std::string& out, const LockEvent& event, std::uint64_t id);

}  // namespace holdfast
