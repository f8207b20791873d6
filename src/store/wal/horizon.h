// The lease horizon: how the horizon durability mode answers grants, renewals and releases
// without waiting for the disk and still never lets two holders overlap after a crash
// (docs/horizon.md has the safety argument).
//
//  1. The log carries LeaseHorizon records: "no lease answered so far ends after `until` or
//     lasts longer than `max_lease`, no token above `tokens_through` was handed out". A change
//     may be answered before it is on disk when the durable (synced) horizon already covers
//     it: its lease ends at or before the durable `until`, is no longer than the durable
//     `max_lease`, and its token is at or below the durable `tokens_through`.
//  2. The keeper writes the next record ahead of need: when a lease would end within
//     `margin_ms` of the horizon asked for so far, or a token comes within half a block of the
//     reservation, it asks for until = now + the longest lease seen + `slack_ms` and the next
//     token block. Each record also bounds the longest lease answered under it (max_lease).
//     Under a steady load that is one extra sync every (slack - margin) ms, and a grant
//     waits for a sync only when a longer lease than any before appears, or the load outruns
//     the margin.
//  3. A change the durable horizon does not cover waits for the sync that makes the records
//     before it durable. So do changes whose loss would have no end in time: a hold without a
//     lease end (granted, renewed to it, made bounded again, or released), a rule-set change,
//     a change to a typed value.
//  4. After an unclean stop, recovery restores the durable prefix of the log, and the server
//     grants nothing new until the last durable horizon has passed, or its max_lease from
//     the restart if that is sooner (quarantine_end): every lease it answered has ended by
//     then, whatever part of the log was lost.
//
// Loop thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_set>
#include <utility>

#include "core/clock.h"
#include "core/hold.h"

namespace holdfast::wal {

struct HorizonOptions {
  // How far past the longest lease seen the horizon is written (a quarantine is no longer
  // than the longest lease whatever the slack).
  Millis slack_ms = 1000;
  // The horizon is extended once a lease would end less than this before it. Must exceed a
  // sync's latency for grants never to wait under a steady load.
  Millis margin_ms = 500;
  // Tokens reserved per record.
  std::uint64_t token_block = std::uint64_t{1} << 16;
};

// When a server that stopped with `last` as its newest LeaseHorizon record (none: it never
// used the horizon mode) may grant again, given the latest instant any replayed record
// carries and the clock now: at `until`, or `max_lease` from now if that is sooner. 0: at
// once. A wall clock now behind `last_record_at` counts as if no time had passed since then.
Millis quarantine_end(const std::optional<LeaseHorizon>& last, Millis last_record_at, Millis now);

class HorizonKeeper {
 public:
  explicit HorizonKeeper(HorizonOptions options = {}) : options_(options) {}

  // Starts from what recovery found: the token reservation (state.last_token), the holds
  // without a lease end, and a quarantine still to run (every record keeps covering it).
  void start(const DurableState& state);

  struct Need {
    std::optional<LeaseHorizon> record;  // append this record before the change
    bool wait_for_sync = false;          // the change's answer waits for the disk
  };
  // What `change`, about to be appended at `now`, needs, given that the log is on disk through
  // `synced` (a sequence number). Records what it asks for as asked.
  Need classify(const Change& change, Millis now, std::uint64_t synced);

  // The record asked for by classify() (or restated) was appended with this sequence number.
  void appended(const LeaseHorizon& record, std::uint64_t sequence);

  // The horizon asked for so far, restated at `now`: the first record after a snapshot's cut
  // (the segments holding the earlier ones may then be deleted).
  LeaseHorizon restated(Millis now) const;
  // The last record of a clean stop, once everything before it is on disk.
  LeaseHorizon closing(Millis now) const;

  Millis durable_until() const { return durable_.until; }
  std::uint64_t durable_tokens() const { return durable_.tokens_through; }

 private:
  void catch_up(std::uint64_t synced);
  // A record's max_lease written at `now`: the longest lease seen, and at least what is left
  // of a quarantine still running.
  Millis max_lease_at(Millis now) const;

  HorizonOptions options_;
  LeaseHorizon asked_;    // the newest record appended
  LeaseHorizon durable_;  // the newest record on disk
  Millis quarantine_until_ = 0;
  Millis longest_lease_ = 0;
  // The longest lock-delay of any hold seen since start: every lease end counts this much
  // later, so a quarantine after an unclean stop also covers the delays (docs/horizon.md).
  Millis longest_delay_ = 0;
  std::deque<std::pair<std::uint64_t, LeaseHorizon>> in_flight_;  // appended, not yet synced
  std::unordered_set<std::uint64_t> unbounded_;                   // tokens of holds never ending
};

}  // namespace holdfast::wal
