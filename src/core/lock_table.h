// LockTable: the lock server's state machine (docs/reference.md section 2). Pure: no I/O, no
// threads, no clock of its own; every operation takes `now` and returns a Result.
//
// REQUIRES of every caller: arguments already checked and capped by the policy layer
// (service/policy.h): keys, owners and holder ids valid, TTLs positive and at most the lease
// cap, timeouts non-negative and at most 24 h. The table decides; it does not re-validate.
//
// How a key moves through its life:
//  1. acquire/try: a free key is granted at once (new handle, next token, lease = now + ttl).
//     A held key is re-taken at once when the caller matches the hold (same heldBy, which
//     encodes principal and kind, and the same non-empty owner); the old handle is fenced.
//     Otherwise a try answers Contended and an acquire with a timeout joins the key's FIFO
//     queue as a waiter (its deadline goes into the waiter heap).
//  2. The key frees on release, unassign, the end of its session, or the end of its lease.
//     Lease ends sit in a deadline heap; advance(now) processes every deadline that has come.
//     Every operation also expires its own key lazily first, so status says `held: false`
//     from the exact millisecond the lease ends, whether or not the timer has fired yet.
//  3. When a key frees, the oldest live waiter gets it in the same step (hand-off); waiters
//     whose deadline has come time out instead. The outcomes (granted or timed out) are
//     queued and the server collects them with take_outcomes() at one point of its loop.
//  4. end_session(s) drops the session's waiters and releases its session-scoped holds.
//  5. Lock-delay (lock_table_delay.cc): a hold granted with lock_delay_ms > 0 whose lease ends
//     by expiry, or whose session ends, closes its key until that instant plus the delay. The
//     key then grants nothing (as in a quarantine, but for this key alone); its waiters stay
//     queued and are handed the key, in order, when the delay ends. A release closes nothing.
//     The table re-derives an expiry's delay from the hold's record on restore.
//  6. After an unclean stop in the horizon durability mode, restore() closes grants until the
//     state's grants_closed_until: nothing new is granted or re-taken (a free key answers as a
//     held one: a try is contended, an acquire or assign queues, a transfer is refused), while
//     renewals, releases and reads go on. advance() (or the first acquire) at that instant
//     hands every free key to its oldest waiter.
//
// Every change that must survive a crash is reported to the ChangeSink, in order, before the
// operation returns (expiry is not a change: absolute lease ends are re-derived on recovery).
// While someone watches, every change, expiry and waiter's arrival and departure is also told
// to the LockEventSink as a lock event (lock_table_events.cc); without one the table pays a
// null check where an event would be made.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <absl/container/node_hash_map.h>

#include "core/clock.h"
#include "core/deadline_heap.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/hold.h"
#include "core/lock_event.h"
#include "core/lock_request.h"
#include "core/lock_types.h"

namespace holdfast {

// An acquire as the table runs it: the request (lock_request.h; lock_delay_ms none means 0)
// and who asks.
struct AcquireRequest : AcquireArgs {
  AcquireRequest() = default;
  explicit AcquireRequest(const AcquireArgs& args) : AcquireArgs(args) {}

  SessionId session = 0;     // the caller's connection; waiters belong to it
  std::string_view held_by;  // Principal::held_by() of the caller
  // The Redis SET idiom over the same keys (docs/redis-locks.md): `no_retake` never re-takes
  // by owner (SET NX fails on any held key); `take_over_own` replaces a handle hold of the same
  // principal, whatever its owner (a plain SET), with a new hold and token.
  bool no_retake = false;
  bool take_over_own = false;
};

// A multi-key request, granted all at once or not at all (lock_table_multi.cc).
// REQUIRES: 1..kMaxGroupKeys keys, sorted, no key twice, each checked as for acquire().
struct AcquireAllRequest : AcquireAllArgs {
  AcquireAllRequest() = default;
  explicit AcquireAllRequest(const AcquireAllArgs& args) : AcquireAllArgs(args) {}

  SessionId session = 0;
  std::string_view held_by;
};

struct AcquireOutcome {
  enum class Kind { kGranted, kContended, kQueued };
  Kind kind = Kind::kContended;
  HoldState hold;       // kGranted
  WaiterId waiter = 0;  // kQueued
  GroupHold group;      // kGranted by acquire_all()
};

struct AssignRequest {
  std::string_view key;
  std::string_view holder_id;
  std::optional<Millis> ttl_ms;      // none: never expires
  std::optional<Millis> timeout_ms;  // none: one attempt answering LOCK_HELD
  SessionId session = 0;
  std::string_view held_by;
  Millis lock_delay_ms = 0;
};

// What became of a queued waiter.
struct WaiterOutcome {
  WaiterId waiter = 0;
  SessionId session = 0;
  bool granted = false;  // else timed out
  bool assign = false;   // the waiter came from assign
  HoldState hold;        // when granted
  bool multi = false;    // the waiter came from acquire_all: `group` is its grant
  GroupHold group;
  std::string key;  // a multi-key waiter: its first key
  Millis timeout_ms = 0;
};

// A key's exclusive hold seen in place, without copying a string: what the Redis idiom
// decides on (SET, DEL, EXISTS). Valid only until the table next changes.
struct KeyPeek {
  bool in_use = false;   // the table has the key: held, queued for, or closed by a lock-delay
  bool held = false;     // an exclusive hold: the fields below are its
  bool grouped = false;  // a shared or semaphore key: status() tells its holds
  HoldKind kind = HoldKind::kHandle;
  std::string_view held_by;
  std::string_view owner;
  Millis lease_expires_at = kNever;
  Millis lock_delay_until = 0;  // as StatusView's
};

class LockTable {
 public:
  // `sink` (may be null) receives every durable change; it must outlive the table.
  explicit LockTable(ChangeSink* sink = nullptr);
  // Where lock events go (core/lock_event.h), or null: nobody watches. Events leave with their
  // `at` unset (the sink stamps it).
  void set_events(LockEventSink* events) { events_ = events; }
  ~LockTable();
  LockTable(const LockTable&) = delete;
  LockTable& operator=(const LockTable&) = delete;

  // REQUIRES: called once, on an empty table. Loads the live holds of `state` (leases that
  // ended by `now` are dropped), continues the token sequence above state.last_token, and
  // closes grants until state.grants_closed_until.
  void restore(const DurableState& state, Millis now);
  // The live lease-scoped holds and the token high-water mark, for snapshots.
  DurableState snapshot(Millis now) const;
  // The same holds seen in place, for a snapshot that encodes them straight away: no copy of
  // any string (a million holds: 0.37 s of the loop to copy, 0.18 s to encode in place).
  void for_each_durable_hold(Millis now, const std::function<void(const HoldView&)>& fn) const;

  // acquire (timeout_ms > 0 may queue) and tryAcquire (timeout_ms == 0, never queues).
  Result<AcquireOutcome> acquire(const AcquireRequest& request, Millis now);
  // Several keys at once (docs/lock-kinds.md, "Several keys at once"): granted together when
  // every key fits and no key has a waiter; else contended (timeout 0) or queued in every
  // key's queue at once, granted when it heads all of them and fits beside all their holds.
  Result<AcquireOutcome> acquire_all(const AcquireAllRequest& request, Millis now);
  // Extends the lease of the hold whose handle is `handle`; renewed=false when it is not the
  // key's current handle (fenced, released, expired, or never valid).
  Result<RenewOutcome> renew(std::string_view key, std::string_view handle, Millis ttl_ms,
                             Millis now);
  // Frees the key if `handle` is its current handle; released=false otherwise.
  Result<ReleaseOutcome> release(std::string_view key, std::string_view handle, Millis now);
  Result<StatusView> status(std::string_view key, Millis now);
  KeyPeek peek(std::string_view key, Millis now);
  // Frees the key whoever holds it (the caller decided it may: the Redis DEL idiom); hands it
  // to the next waiter. released=false when the key is free.
  ReleaseOutcome force_release(std::string_view key, Millis now);
  // Moves the key's lease end to `lease_expires_at` whoever holds it (the caller decided it
  // may: PEXPIRE); renewed=false when the key is free.
  RenewOutcome extend(std::string_view key, Millis lease_expires_at, Millis now);
  // Holds whose key matches the glob `match` (empty: all) and sorts after `after` (empty: the
  // start), in key order, at most `count` (> 0); next_cursor (core/list_cursor.h) says where
  // the next page starts. O(number of holds) per page.
  ListPage list(std::string_view match, std::string_view after, std::size_t count, Millis now);

  // Identity-aware holds (docs/reference.md section 2: assign, transfer, unassign, holder).
  Result<AcquireOutcome> assign(const AssignRequest& request, Millis now);
  Result<HoldState> transfer(std::string_view key, std::string_view to_id, std::string_view from_id,
                             std::string_view held_by, Millis now);
  Result<ReleaseOutcome> unassign(std::string_view key, std::optional<std::string_view> holder_id,
                                  Millis now);
  Result<HolderView> holder(std::string_view key, Millis now);

  // Processes every lease end and waiter timeout at or before `now`.
  void advance(Millis now);
  // The earliest pending deadline, if any.
  std::optional<Millis> next_deadline() const;
  // The connection `session` is gone: its waiters leave their queues and its session-scoped
  // holds are released (handing their keys to the next waiters).
  void end_session(SessionId session, Millis now);
  // One waiter gives up (e.g. its HTTP client disconnected). No outcome is reported for it.
  void cancel_waiter(WaiterId waiter, Millis now);

  // Outcomes of queued waiters since the last call, in the order they happened.
  std::vector<WaiterOutcome> take_outcomes();
  bool has_outcomes() const { return !outcomes_.empty(); }

  // While grants are closed: the instant they open again; 0 once they are open.
  Millis grants_closed_until() const { return grants_closed_until_; }
  std::size_t held_count() const { return held_count_; }
  // Of held_count(): the shared and semaphore holds (the rest are exclusive), and the permits
  // the semaphore holds take.
  struct HeldKinds {
    std::size_t shared = 0;
    std::size_t semaphore = 0;
    std::uint64_t permits_taken = 0;
  };
  const HeldKinds& held_kinds() const { return held_kinds_; }
  std::size_t waiter_count() const { return waiters_.size(); }
  std::uint64_t last_token() const { return last_token_; }
  const LockCounters& counters() const { return counters_; }

 private:
  struct Waiter;
  struct WaiterQueue;
  struct Entry;
  struct Extras;
  struct Member;
  struct Group;
  struct KeyDelay;
  struct MultiHold;
  struct MultiWait;
  using Slot = std::pair<const std::string, Entry>;
  struct HoldIndex {
    std::uint32_t& operator()(Slot* slot) const;
  };
  struct WaiterIndex {
    std::uint32_t& operator()(Waiter* w) const;
  };
  struct MemberIndex {
    std::uint32_t& operator()(Member* m) const;
  };
  struct DelayIndex {
    std::uint32_t& operator()(KeyDelay* d) const;
  };

  using Interned = std::pair<const std::string, std::uint32_t>;  // heldBy and its reference count
  Slot* find_live(std::string_view key, Millis now);
  // The key's entry, created if missing, with an ended lease already expired: one hash lookup.
  Slot* live_or_new(std::string_view key, Millis now);
  Slot& slot_for(std::string_view key);
  void maybe_erase(Slot* slot);
  HoldState view(const Slot& slot, bool with_handle) const;
  HoldState grant(Slot* slot, std::string_view held_by, std::optional<std::string_view> owner,
                  std::string_view holder_id, Millis ttl_ms, Scope scope, HoldKind kind,
                  SessionId session, Millis lock_delay_ms, Millis now);
  // grant() without telling the sink: the hold takes `handle`; a hold of a multi-key group
  // (`multi`) is indexed under its group, not its session.
  void place_hold(Slot* slot, std::string_view held_by, std::optional<std::string_view> owner,
                  std::string_view holder_id, Millis lease_expires_at, Scope scope, HoldKind kind,
                  SessionId session, Millis lock_delay_ms, Millis now, const Handle& handle,
                  MultiHold* multi);
  void drop_hold(Slot* slot);
  void free_key(Slot* slot, Millis now);
  void expire(Slot* slot, Millis now);
  // Grants the key to its waiters as far as they fit. Re-entrant: a call made while another
  // hand-off runs (a multi-key grant or timeout touches other keys) is queued in deferred_ and
  // run by the outermost call, so no hand-off erases an entry another one is working on.
  void hand_off(Slot* slot, Millis now);
  void hand_off_key(Slot* slot, Millis now);
  void defer(const Slot* slot);
  void drain(Millis now);
  WaiterId enqueue(Slot* slot, const AcquireRequest& request, bool assign,
                   std::string_view holder_id, std::optional<Millis> ttl_ms, Millis timeout_ms,
                   Millis now);
  // `reason` other than kNone: a `dequeued` event for it (while someone watches).
  void unlink_waiter(Waiter* waiter, DequeueReason reason = DequeueReason::kNone, Millis now = 0);
  void time_out(Waiter* waiter, Millis now);
  Interned* intern(std::string_view held_by);
  void unintern(Interned* held_by);
  // `slot`: the key the change is about, when the caller has it (its lock event then needs no
  // lookup).
  void emit(const Change& change, const Slot* slot = nullptr);
  // Shared and semaphore holds (lock_table_groups.cc).
  Result<AcquireOutcome> acquire_shared(const AcquireRequest& request, Millis now);
  // INVALID_ARGUMENT when a request of `mode` (and semaphore `permits`) cannot use the key as it
  // is: a lock key asked as a semaphore, a semaphore asked as a lock, or other permits.
  std::optional<Error> kind_conflict(const Slot& slot, LockMode mode, std::uint32_t permits) const;
  // Whether a grant of `mode` taking `take` permits fits beside the key's current holds.
  static bool fits(const Entry& e, LockMode mode, std::uint32_t take);
  bool can_grant(const Entry& e, const Waiter& w) const;
  HoldState grant_member(Slot* slot, const Waiter& w, Millis lease_expires_at, Millis now);
  Member* place_member(Slot* slot, const Waiter& w, Millis lease_expires_at, Millis now,
                       const Handle& handle, MultiHold* multi);
  HoldState member_view(const Slot& slot, const Member& m, bool with_handle) const;
  Member* find_member(Slot* slot, std::string_view handle);
  void drop_member(Member* m);
  // Ends the key's shared or semaphore holds whose lease is over, then hands the key on.
  void expire_due_members(Slot* slot, Millis now);
  void release_member(Member* m, Millis now);
  void release_group(Slot* slot, Millis now);
  StatusView group_status(const Slot& slot, StatusView s) const;
  void restore_member(const HoldState& hold);
  static void start_group(Entry& e, LockMode mode, std::uint32_t permits);
  // A member of `mode` taking `take` permits was placed (+1) or dropped (-1): held_kinds_.
  void count_member(LockMode mode, std::uint32_t take, int sign);
  // Multi-key groups (lock_table_multi.cc).
  bool multi_ready(const MultiWait& mw, Millis now) const;
  void grant_multi(MultiWait& mw, Millis now);
  GroupHold place_group(const std::vector<std::pair<Slot*, const Waiter*>>& parts, Millis now);
  void time_out_multi(MultiWait& mw, Millis now);
  void cancel_multi(MultiWait& mw, DequeueReason reason, Millis now);
  // The group whose handle is `handle` and which holds `key`; null if none.
  MultiHold* find_multi(std::string_view key, std::string_view handle);
  // The groups that hold `key`.
  std::vector<MultiHold*> multis_on(const Slot& slot) const;
  // Drops every hold of the group (reporting Released when not `expired`), forgets it and
  // queues its keys for a hand-off (deferred_; the caller drains).
  void end_multi(MultiHold* g, bool expired);
  void renew_multi(MultiHold* g, Millis lease_expires_at);
  MultiHold* retake_candidate(const AcquireAllRequest& r, const std::vector<Slot*>& slots) const;
  void restore_multis();
  static std::string handle_key(const Handle& h);
  // A waiter left the key's queue without a grant: the ones behind it may fit now.
  void after_waiter_left(Slot* slot, Millis now);
  // Lock-delay (lock_table_delay.cc). A hold of `slot` with `delay_ms` ended at `ended_at`:
  // closes the key until ended_at + delay_ms (if that is after `now`). `durable`: the delay is
  // re-derived from the hold's record after a restart, so snapshots carry it.
  void close_after_end(Slot* slot, Millis ended_at, Millis delay_ms, std::uint64_t token,
                       std::string_view held_by, bool durable, Millis now);
  // While a lock-delay keeps the key closed at `now`: the instant it opens; else 0.
  Millis delay_until(const Slot* slot, Millis now) const;
  // Ends every delay due by `now` and hands each key on to its waiters.
  void lift_due_delays(Millis now);
  void for_each_durable_delay(const std::function<void(const HoldView&)>& fn) const;
  // Lock events (lock_table_events.cc), made only while events_ is set.
  void describe(const Change& change, const Slot* given);
  LockEventView hold_event(LockEventKind kind, const Slot& slot) const;
  void report_member(LockEventKind kind, const Slot& slot, const Member& m);
  void report(const LockEventView& event) { events_->on_lock_event(event); }
  void report_waiter(const Waiter& w, LockEventKind kind, DequeueReason reason, Millis now);
  // Whether grants are open at `now`; the first call at or after the end of a quarantine
  // opens them and hands every free key with waiters on.
  bool granting(Millis now);

  ChangeSink* sink_;
  LockEventSink* events_ = nullptr;
  bool transferring_ = false;  // inside transfer(): its grant is a `transferred` event
  HandleSource handles_;
  std::uint64_t last_token_ = 0;
  Millis grants_closed_until_ = 0;
  WaiterId last_waiter_ = 0;
  std::size_t held_count_ = 0;
  HeldKinds held_kinds_;
  LockCounters counters_;

  // Open addressing over individually allocated nodes (absl::node_hash_map): a lookup probes a
  // few control bytes and touches one node, where a chained std::unordered_map walked a bucket
  // list (its _M_find_before_node was 10% of the pipelined profile); nodes never move, so the
  // heaps and session indexes can point at them.
  absl::node_hash_map<std::string, Entry> keys_;
  std::unordered_map<WaiterId, std::unique_ptr<Waiter>> waiters_;
  // Interned heldBy strings with reference counts: most holds share a few principals, and the
  // last one used is remembered, so a grant by the same caller costs a compare, not a hash.
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> principals_;
  Interned* last_interned_ = nullptr;
  struct SessionIndex {
    std::vector<Slot*> holds;
    std::vector<Waiter*> waiters;
    std::vector<Member*> members;
    std::vector<MultiHold*> multis;  // session-scoped multi-key groups
    bool empty() const;
  };
  std::unordered_map<SessionId, SessionIndex> sessions_;
  DeadlineHeap<Slot, HoldIndex> lease_ends_;
  DeadlineHeap<Waiter, WaiterIndex> wait_ends_;
  DeadlineHeap<Member, MemberIndex> member_ends_;
  std::unordered_map<const Slot*, std::unique_ptr<KeyDelay>> delays_;  // keys kept closed
  DeadlineHeap<KeyDelay, DelayIndex> delay_ends_;
  std::vector<WaiterOutcome> outcomes_;
  // Multi-key groups by their handle's bytes, and multi-key waiters by their id.
  std::unordered_map<std::string, std::unique_ptr<MultiHold>> multis_;
  std::unordered_map<WaiterId, std::unique_ptr<MultiWait>> multi_waits_;
  bool handing_off_ = false;
  std::vector<std::string> deferred_;  // keys whose hand-off waits for the running one
};

}  // namespace holdfast
