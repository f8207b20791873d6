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
#include <type_traits>

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

// An event's fields. `Text` is std::string for an event that is kept (LockEvent) and
// std::string_view for one that is told while what it names is in place (LockEventView: the
// lock table tells its events so, with nothing copied). A LockEvent is seen as a view at no
// cost; a view is made a LockEvent explicitly (its strings are copied).
template <typename Text>
struct BasicLockEvent {
  LockEventKind kind = LockEventKind::kAcquired;
  Text key;
  std::uint64_t token = 0;           // 0: none (a waiter has no token): null on the wire
  Text held_by;                      // the hold's principal, or the waiter's
  Text owner;                        // empty: none (left out on the wire)
  Text holder_id;                    // assigned holds and assign waiters; empty: left out
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

  BasicLockEvent() = default;
  template <typename Other>
  requires(!std::is_same_v<Other, Text>) explicit(!std::is_same_v<Text, std::string_view>)
      BasicLockEvent(const BasicLockEvent<Other>& o)
      : kind(o.kind),
        key(o.key),
        token(o.token),
        held_by(o.held_by),
        owner(o.owner),
        holder_id(o.holder_id),
        acquired_at(o.acquired_at),
        lease_expires_at(o.lease_expires_at),
        at(o.at),
        scope(o.scope),
        hold_kind(o.hold_kind),
        mode(o.mode),
        permits(o.permits),
        take(o.take),
        waiter(o.waiter),
        timeout_ms(o.timeout_ms),
        reason(o.reason),
        waited_ms(o.waited_ms) {}
};
using LockEvent = BasicLockEvent<std::string>;
using LockEventView = BasicLockEvent<std::string_view>;

// An event written out already: its kind, its key and its JSON but the id (append_event_body).
// The views are valid during the call that tells it only.
struct WrittenEvent {
  LockEventKind kind = LockEventKind::kAcquired;
  std::string_view key;
  std::string_view body;
};

// Receives the events of a backend, in order, on the loop thread.
class LockEventSink {
 public:
  virtual ~LockEventSink() = default;
  // Valid during the call only: a sink that keeps it copies it (LockEvent(event)) or writes it.
  virtual void on_lock_event(const LockEventView& event) = 0;
  // An event written out already: a backend that holds its events back until they may be told
  // (the single server's, until the log is durable) keeps them as text, not as LockEvents. The
  // lock table tells on_lock_event only, so a sink of a table alone leaves this one be.
  virtual void on_written_event(const WrittenEvent& event) { (void)event; }
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
std::string event_json(const LockEventView& event, std::uint64_t id);
// The event's JSON without its start `{"id":N,` (the id is given when it is told), appended to
// `out`; append_event_json completes it.
void append_event_body(std::string& out, const LockEventView& event);
void append_event_json(std::string& out, std::uint64_t id, std::string_view body);

}  // namespace holdfast
