// ReplayState: rebuilds the durable state from a snapshot and the records after it
// (docs/wal-format.md, section 5, "Applying a record").
//
// Applying is idempotent for records the state already reflects: a Granted whose token is
// below the key's current hold is stale and ignored, Renewed and Released act only on the
// hold with their token. That is what lets a snapshot contain a change or two that the log
// records again just after the snapshot's cut.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/hold.h"

namespace holdfast::wal {

class ReplayState {
 public:
  // Starts from a snapshot's state (or an empty one).
  explicit ReplayState(DurableState base);

  void apply(const Change& change);

  std::uint64_t last_token() const { return last_token_; }

  // What survives: lease-scoped holds whose lease has not ended at `now`, the highest token
  // seen, the rule set.
  DurableState finish(Millis now) &&;

 private:
  HoldState* find(std::string_view key);
  void put(HoldState&& hold);
  void erase(HoldState& hold);
  void build_index();

  std::uint64_t last_token_ = 0;
  // Holds from the snapshot stay where they were decoded; holds on keys the snapshot did not
  // have go to a deque, whose elements never move, so the index can point into both and
  // key it by views of the holds' own key strings. An erased hold has an empty key (a real
  // key is never empty).
  std::vector<HoldState> base_holds_;
  std::deque<HoldState> added_holds_;
  std::unordered_map<std::string_view, HoldState*> index_;
  bool indexed_ = false;  // built on the first record: a restart with no log skips it
  std::optional<RuleSetPut> rule_set_;
};

}  // namespace holdfast::wal
