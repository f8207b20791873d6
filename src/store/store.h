// The Store: what the lock server needs from durability, named by the lock table's needs, not
// by files. The embedded write-ahead log (store/wal) and the PostgreSQL store implement it.
//
// Lifecycle:
//  1. recover() once at start-up: the durable state (live holds, token high-water mark, rule set,
//     typed values).
//  2. append(change) for every change, on the loop thread, in order. It never waits for the disk;
//     it returns the change's sequence number. submit() hands everything appended so far to the
//     disk; the loop calls it after every piece of work (a connection's commands, a timer), and
//     it is cheap: changes handed over while the writer is busy go into its next batch (nothing
//     becomes durable before it is submitted).
//  3. A reply that reports a change (or was computed after it) is sent only once
//     durable_sequence() has reached that change's number. The store calls the on_durable
//     callback (from its own thread) whenever the durable sequence advances.
//  4. The store may ask the state source for a snapshot of the live state (on the loop thread,
//     from inside submit, never append: the state must be that of finished operations, which
//     the loop guarantees when it submits) to compact its log. The source hands the state to a
//     StateSink, hold by hold, seen in place: the store encodes each as it comes, so the loop
//     pauses for an encoding pass, not for a copy of the table.
//  5. A store may be unable to make changes durable for a while (a full or failing disk): it
//     keeps what was appended, reports fault() until it is durable again, and retries by
//     itself. The caller refuses new changes meanwhile (the answers waiting for durability
//     simply wait).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/hold.h"
#include "core/loop_hooks.h"

namespace holdfast {

struct StoreStats {
  std::uint64_t appended = 0;            // changes appended
  std::uint64_t syncs = 0;               // fdatasync calls (or commits)
  std::uint64_t syncs_on_loop = 0;       // of them, made by before_sleep() on the loop
  std::uint64_t sync_nanos = 0;          // total time spent in syncs
  std::uint64_t snapshots = 0;           // snapshots written
  std::uint64_t snapshots_skipped = 0;   // snapshots given up (their encoder child failed)
  std::uint64_t snapshots_in_child = 0;  // snapshots encoded in a forked child
  std::uint64_t log_bytes = 0;           // bytes in the live log
  bool snapshot_in_progress = false;     // requested and not yet written and compacted (or skipped)
  std::uint64_t faults = 0;              // times the store became unable to make changes durable
  std::optional<Error> fault;            // set while it is (Store::fault())
};

// Receives the live state for a snapshot: last_token and rule_set at most once, then hold() for
// every live lease-scoped hold, then value() for every typed value (all holds come before the
// first value). The views are valid only during the call.
class StateSink {
 public:
  virtual ~StateSink() = default;
  virtual void last_token(std::uint64_t token) = 0;
  virtual void rule_set(const RuleSetPut& rules) = 0;
  // About how many holds follow (lets the sink size its buffer once).
  virtual void expect_holds(std::size_t count) = 0;
  virtual void hold(const HoldView& hold) = 0;
  virtual void value(std::string_view key, const Value& value, Millis expires_at) = 0;
};

// Hands the live state to the sink. Called on the loop thread.
using StateSource = std::function<void(StateSink&)>;

// Hands a whole DurableState to a sink (tests and tools; the server streams from its table).
inline void hand_over(const DurableState& state, StateSink& sink) {
  sink.last_token(state.last_token);
  if (state.rule_set) sink.rule_set(*state.rule_set);
  sink.expect_holds(state.holds.size());
  for (const HoldState& hold : state.holds) sink.hold(view_of(hold));
  for (const DurableValue& v : state.values) sink.value(v.key, v.value, v.expires_at);
}

// A source that builds a whole DurableState first.
inline StateSource state_source_of(std::function<DurableState()> make) {
  return [make = std::move(make)](StateSink& sink) { hand_over(make(), sink); };
}

class Store : public LoopHooks {
 public:
  virtual ~Store() = default;

  // Reads what survived the last run. An error means the data is unreadable (corruption in
  // the middle of the log, a bad snapshot, a lock held by another server): refuse to start.
  virtual Result<DurableState> recover() = 0;

  // Queues a change; returns its sequence number (strictly increasing from 1).
  virtual std::uint64_t append(const Change& change) = 0;

  // Hands the changes appended since the last submit to the writer. Loop thread only, and only
  // between operations (every change of a finished operation appended, and applied to what the
  // state source reads); cheap when nothing was appended. A store the loop also tells of its
  // rounds (end_of_round(), before_sleep()) may hand them over then instead, once a
  // round: the embedded log with commit_on_loop does.
  virtual void submit() = 0;

  // LoopHooks (core/loop_hooks.h): the store's commit may happen in the loop's own moments,
  // before it sleeps and at the end of a busy round. By default it never does.

  // The highest sequence number that is durable. Thread-safe.
  virtual std::uint64_t durable_sequence() const = 0;

  // The answer to the operation in progress must not leave before every change appended so
  // far is on disk, even in a mode that answers sooner (fsync horizon): an effect that nothing
  // would bound if it were lost, such as releasing another client's hold. Loop thread only.
  virtual void require_sync() {}

  // fn(durable) is called from the store's thread when the durable sequence advances, and when
  // fault() changes.
  virtual void set_on_durable(std::function<void(std::uint64_t)> fn) = 0;

  // Set while the store cannot make changes durable: STORE_UNAVAILABLE with the cause in the
  // message. Changes appended meanwhile are kept and become durable, in order, once it can
  // again; until then durable_sequence() stays where it was. Thread-safe.
  virtual std::optional<Error> fault() const { return std::nullopt; }

  // The live state, for snapshots. Called on the loop thread.
  virtual void set_state_source(StateSource source) = 0;
  // How many holds the state source would hand over now, counted without handing them (a
  // store may take a small state differently). Optional; called on the loop thread.
  virtual void set_state_size(std::function<std::size_t()> /*size*/) {}

  virtual StoreStats stats() const = 0;

  // Flushes what was appended and stops background work. Idempotent.
  virtual void close() = 0;
};

}  // namespace holdfast
