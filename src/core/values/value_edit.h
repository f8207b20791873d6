// ValueEdit: one change to a typed value, as the value operations report it and the
// write-ahead log records it (docs/wal-format.md, record type 8). Edits say what happened to
// elements (these members now have these scores; these fields are gone; two elements were
// popped from the head), not which command did it, so replaying them rebuilds exactly the
// value the server had.
//
// Expiry is never an edit of its own when it happens (as for leases, recovery drops a value
// whose expiry has passed); a value made on a key whose old value had expired says so with
// `fresh`, so that replay does not add to the expired one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/values/value.h"

namespace holdfast {

struct ValueEdit {
  // The numbers are durable: never renumber.
  enum class Op : std::uint8_t {
    kDelete = 1,       // the key's value is gone (DEL, GETDEL, an expiry set in the past)
    kExpire = 2,       // `number`: the instant it expires; kNever: it no longer expires
    kCounterSet = 3,   // `number`: the counter's value
    kZSetPut = 4,      // `items` now have `scores` (one each), added or moved
    kZSetRemove = 5,   // `items` left the sorted set
    kHashPut = 6,      // `items` is field, value, field, value...: set
    kHashRemove = 7,   // `items`: fields removed
    kListPush = 8,     // `items` pushed, one after another, at the head (or the tail: `right`)
    kListPop = 9,      // `number` elements popped from the head (or the tail)
    kListRemove = 10,  // LREM `number` items[0]
  };

  std::string key;
  Op op = Op::kDelete;
  bool fresh = false;  // the key held no value before this edit (replay starts from nothing)
  bool right = false;  // kListPush, kListPop: at the tail
  std::int64_t number = 0;
  std::vector<std::string> items;
  std::vector<double> scores;

  bool operator==(const ValueEdit&) const = default;
};

inline constexpr ValueEdit::Op kLastValueEditOp = ValueEdit::Op::kListRemove;

// Applies `edit` to the key's value (`value` empty: it holds none) and its expiry, as replay
// does. An aggregate left empty is deleted, as the operations delete it.
void apply_edit(const ValueEdit& edit, std::optional<Value>& value, Millis& expires_at);

}  // namespace holdfast
