// A typed value: what a key holds when it is not a lock (docs/redis-locks.md, "Typed values").
// A counter (what INCR makes: a Redis string holding an integer), a sorted set, a hash or a
// list. An aggregate is never empty: the operation that takes its last element deletes the
// key, as Redis does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/clock.h"

#include "core/values/hash.h"
#include "core/values/list.h"
#include "core/values/zset.h"

namespace holdfast {

// The numbers are durable (log records, snapshots, the PostgreSQL rows): never renumber.
enum class ValueType : std::uint8_t { kCounter = 1, kZSet = 2, kHash = 3, kList = 4 };

// TYPE's answer: "string" for a counter, as Redis calls it.
std::string_view type_name(ValueType type);
// Whether `byte` is one of the types' numbers.
bool is_value_type(std::uint8_t byte);

struct Value {
  std::variant<std::int64_t, ZSet, Hash, List> data;

  ValueType type() const { return static_cast<ValueType>(data.index() + 1); }
  // Members, fields or elements; a counter counts as one.
  std::size_t size() const;
};

// A key's value as an operation finds it and leaves it. `value` empty: the key holds no value
// (never had one, deleted, or its expiry has passed). expires_at kNever: it does not expire.
struct ValueCell {
  std::optional<Value> value;
  Millis expires_at = kNever;
};

// A value that survives a restart (store.h's DurableState).
struct DurableValue {
  std::string key;
  Value value;
  Millis expires_at = kNever;
};

}  // namespace holdfast
