// ReplayState: rebuilds the durable state from a snapshot and the records after it
// (docs/wal-format.md, section 5, "Applying a record").
//
// Applying is idempotent for records the state already reflects: a Granted whose token is
// below the key's current hold is stale and ignored, Renewed and Released act only on the
// hold with their token. That is what lets a snapshot contain a change or two that the log
// records again just after the snapshot's cut.
//
// A key held in shared or semaphore mode has several holds at once; they are kept apart, by
// token (tokens are unique), and a Renewed or Released that matches no exclusive hold of its
// key looks there.
//
// Typed values (ValueEdit records) are kept apart by key, each edit applied as the server
// applied it (core/values/value_edit.h); unlike grants, edits are not idempotent (a push
// applied twice pushes twice): they rely on a snapshot's cut being exact (wal-format.md,
// section 6).
//
// Restart time is the point of the layout. The snapshot's holds stay in the vector they were
// decoded into (they are moved once more, into the result); holds on new keys go to a second
// vector. A key index (open addressing over 32-bit hashes and positions, 8 bytes a slot,
// no allocation per key) is built only when the first log record arrives, so a restart from a
// snapshot alone never hashes a million keys, and one with a log tail does it cheaply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/hold.h"
#include "core/values/value.h"

namespace holdfast::wal {

class ReplayState {
 public:
  // Starts from a snapshot's state (or an empty one).
  explicit ReplayState(DurableState base);

  void apply(const Change& change);

  // What survives: lease-scoped holds whose lease has not ended at `now`, the highest token
  // seen (in the snapshot, its holds, every Granted record and every token reservation of a
  // LeaseHorizon record), the rule set, the quarantine the last LeaseHorizon asks for
  // (horizon.h), and the typed values whose expiry has not come.
  DurableState finish(Millis now) &&;

 private:
  using Position = std::uint32_t;
  struct Slot {
    std::uint32_t hash = 0;
    Position position_plus_one = 0;  // 0: empty slot
  };

  HoldState& at(Position p) { return p < base_.size() ? base_[p] : added_[p - base_.size()]; }
  std::optional<Position> find(std::string_view key, std::uint32_t hash);
  void insert(std::uint32_t hash, Position position);
  void grow();
  void build_index();
  // The live hold on key, or null.
  HoldState* live(std::string_view key);
  void put(const HoldState& hold);
  // A Granted record's hold, or one of a GroupGranted record's.
  void grant(const HoldState& hold);

  std::uint64_t last_token_ = 0;
  std::vector<HoldState> base_;   // the snapshot's holds, in snapshot order
  std::vector<HoldState> added_;  // holds on keys the snapshot did not have
  std::vector<bool> alive_;       // by position; a released hold keeps its slot and key
  std::vector<Slot> slots_;       // power-of-two size, at most 70% full
  std::size_t used_slots_ = 0;
  bool indexed_ = false;
  std::optional<RuleSetPut> rule_set_;
  std::optional<LeaseHorizon> horizon_;                  // the last one in log order
  std::unordered_map<std::uint64_t, HoldState> shares_;  // shared and semaphore holds by token
  Millis last_record_at_ = 0;  // the latest instant a replayed record carries
  std::unordered_map<std::string, ValueCell> values_;
};

}  // namespace holdfast::wal
