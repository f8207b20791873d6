// ValueStore: the typed values of a single server (counters, sorted sets, hashes, lists), beside
// the lock table and owned by the loop like it. The embedded backend asks the two together
// which one a key belongs to (a key is never both); this class knows only values.
//
// Expiry is Redis's, and exact as the lock table's:
//  1. passive: every lookup first drops a value whose expiry has come (`expires_at <= now`),
//     so a read at that very millisecond finds nothing;
//  2. active: values with an expiry sit in a deadline heap (core/deadline_heap.h, as the
//     table's leases) and advance(now) drops every one that is due, so memory does not wait
//     for a lookup.
// Expiry is never reported as a change: a value whose instant has passed is also dropped by
// recovery, and the next value made on its key is `fresh` (value_edit.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/node_hash_map.h>

#include "core/clock.h"
#include "core/deadline_heap.h"
#include "core/error.h"
#include "core/values/value.h"
#include "core/values/value_ops.h"

namespace holdfast {

class ValueStore {
 public:
  bool empty() const { return values_.empty(); }
  // Values, expired ones not yet dropped included.
  std::size_t size() const { return values_.size(); }

  // The key's value if it has one at `now` (an expired one is dropped first); null otherwise.
  // Valid until the store next changes.
  const ValueCell* find(std::string_view key, Millis now);
  bool contains(std::string_view key, Millis now) { return find(key, now) != nullptr; }

  // Runs a typed operation (value_ops.h) on the key's value at `now`, keeping what it makes,
  // changes or empties.
  Result<ValueOutcome> run(const ValueRequest& r, Millis now) {
    return run(r, now, [] { return std::optional<Error>(); });
  }
  // As run(), but when the key holds no value at `now`, absent() (an std::optional<Error>) is
  // asked first: its error is the answer and nothing runs. One lookup where find() and then
  // run() would take two.
  template <typename Absent>
  Result<ValueOutcome> run(const ValueRequest& r, Millis now, Absent&& absent) {
    const auto it = values_.empty() ? values_.end() : live(r.key, now);
    if (it != values_.end()) return run_on(it, r);
    if (std::optional<Error> err = absent()) return std::move(*err);
    return run_on_none(r);
  }
  // Drops the key's value; false when it had none.
  bool erase(std::string_view key, Millis now);
  // The key's value now expires at `at` (kNever: never). REQUIRES: contains(key, now).
  void set_expiry(std::string_view key, Millis at);

  // Drops every value whose expiry has come.
  void advance(Millis now);
  // The earliest expiry, if any value has one.
  std::optional<Millis> next_deadline() const;

  // REQUIRES: an empty store. Values that expired by `now` are left out.
  void restore(std::vector<DurableValue> values, Millis now);
  // fn(key, value, expires_at) for every value, expired ones not yet dropped included (a
  // snapshot must read the same values twice: docs/wal-format.md, section 6).
  void for_each(const std::function<void(std::string_view, const Value&, Millis)>& fn) const;

 private:
  struct Slot {
    ValueCell cell;
    const std::string* key = nullptr;  // the map's own key (its nodes never move)
    std::uint32_t heap_index = kNotInHeap;
  };
  struct HeapIndex {
    std::uint32_t& operator()(Slot* s) const { return s->heap_index; }
  };
  using Map = absl::node_hash_map<std::string, Slot>;

  Map::iterator live(std::string_view key, Millis now);
  // run() on the key's live value, and on a key with none.
  Result<ValueOutcome> run_on(Map::iterator it, const ValueRequest& r);
  Result<ValueOutcome> run_on_none(const ValueRequest& r);
  void drop(Map::iterator it);
  // Keeps the slot's place in the expiry heap in step with its expiry.
  void track_expiry(Slot& slot);

  Map values_;
  DeadlineHeap<Slot, HeapIndex> expiries_;
};

}  // namespace holdfast
