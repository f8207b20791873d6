/* Value construction and map key lookup; see value.h.
 *
 * Map keys are normalised into a MapKey so that one comparison serves both duplicate
 * detection and lookup: bools, numbers and strings are three separate classes (bools sort
 * first, strings last), and a number is kept as (negative int64) or (non-negative uint64), so
 * that 1, 1u and the double 1.0 all become the same key. A double with a fraction, or outside
 * the int64/uint64 range, is not a key at all: it can never be stored and never found.
 */
#include "cel/value.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace holdfast::cel {
namespace {

// Maps up to this size are searched linearly; beyond it a sorted index is kept.
constexpr std::size_t kLinearSearchLimit = 8;

struct MapKey {
  enum class Class : std::uint8_t { kBool, kNumber, kString };
  Class cls;
  bool negative = false;   // kNumber: true when the number is below zero
  std::uint64_t bits = 0;  // kBool: 0/1; kNumber: the uint64, or the int64's bit pattern
  std::string_view text;   // kString

  std::strong_ordering operator<=>(const MapKey& other) const {
    if (cls != other.cls) return cls <=> other.cls;
    switch (cls) {
      case Class::kBool:
        return bits <=> other.bits;
      case Class::kString:
        return text.compare(other.text) <=> 0;
      case Class::kNumber:
        if (negative != other.negative) return other.negative <=> negative;  // negatives first
        if (negative) {
          return static_cast<std::int64_t>(bits) <=> static_cast<std::int64_t>(other.bits);
        }
        return bits <=> other.bits;
    }
    return std::strong_ordering::equal;
  }
  bool operator==(const MapKey& other) const { return (*this <=> other) == 0; }
};

MapKey number_key(std::int64_t value) {
  if (value >= 0)
    return MapKey{MapKey::Class::kNumber, false, static_cast<std::uint64_t>(value), {}};
  return MapKey{MapKey::Class::kNumber, true, static_cast<std::uint64_t>(value), {}};
}

// The normalised key, or nullopt when `key` cannot be a map key. Doubles qualify only for
// lookups (allow_double), and only when they hold an integral value within range.
std::optional<MapKey> to_key(const Value& key, bool allow_double) {
  switch (key.kind()) {
    case ValueKind::kBool:
      return MapKey{MapKey::Class::kBool, false, key.as_bool() ? 1u : 0u, {}};
    case ValueKind::kInt:
      return number_key(key.as_int());
    case ValueKind::kUint:
      return MapKey{MapKey::Class::kNumber, false, key.as_uint(), {}};
    case ValueKind::kString:
      return MapKey{MapKey::Class::kString, false, 0, key.as_string()};
    case ValueKind::kDouble: {
      const double d = key.as_double();
      if (!allow_double || std::trunc(d) != d) return std::nullopt;  // also rejects NaN, inf
      if (d >= 0 && d < 18446744073709551616.0) {
        return MapKey{MapKey::Class::kNumber, false, static_cast<std::uint64_t>(d), {}};
      }
      if (d < 0 && d >= -9223372036854775808.0) return number_key(static_cast<std::int64_t>(d));
      return std::nullopt;
    }
    case ValueKind::kNull:
    case ValueKind::kBytes:
    case ValueKind::kList:
    case ValueKind::kMap:
      return std::nullopt;
  }
  return std::nullopt;
}

// Weights saturate rather than wrap; they only ever feed a budget.
std::uint64_t add_weight(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t sum = a + b;
  return sum < a ? std::numeric_limits<std::uint64_t>::max() : sum;
}

}  // namespace

std::string_view kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNull:
      return "null_type";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kUint:
      return "uint";
    case ValueKind::kDouble:
      return "double";
    case ValueKind::kString:
      return "string";
    case ValueKind::kBytes:
      return "bytes";
    case ValueKind::kList:
      return "list";
    case ValueKind::kMap:
      return "map";
  }
  return "unknown";
}

Value Value::from_string(std::string utf8) {
  return Value(
      Rep(std::in_place_index<5>, StringRep{std::make_shared<const std::string>(std::move(utf8))}));
}

Value Value::from_bytes(std::string bytes) {
  return Value(
      Rep(std::in_place_index<6>, BytesRep{std::make_shared<const std::string>(std::move(bytes))}));
}

Value Value::from_list(std::vector<Value> elements) {
  std::shared_ptr<const ListData> list;
  if (!elements.empty()) {
    auto data = std::make_shared<ListData>();
    for (const Value& item : elements) data->weight = add_weight(data->weight, item.weight());
    data->items = std::move(elements);
    list = std::move(data);
  }
  return Value(Rep(std::in_place_index<7>, std::move(list)));
}

Result<Value> Value::from_map(std::vector<std::pair<Value, Value>> entries) {
  std::vector<MapKey> keys;
  keys.reserve(entries.size());
  for (const auto& [key, value] : entries) {
    auto normalised = to_key(key, /*allow_double=*/false);
    if (!normalised) {
      return invalid_argument("unsupported map key type '" + std::string(kind_name(key.kind())) +
                              "'");
    }
    keys.push_back(*normalised);
  }
  if (entries.empty()) return Value(Rep(std::in_place_index<8>, std::shared_ptr<const MapValue>()));

  auto map = std::make_shared<MapValue>();
  if (entries.size() <= kLinearSearchLimit) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (keys[i] == keys[j]) return invalid_argument("repeated map key");
      }
    }
  } else {
    std::vector<std::uint32_t> order(entries.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
    for (std::size_t i = 1; i < order.size(); ++i) {
      if (keys[order[i - 1]] == keys[order[i]]) return invalid_argument("repeated map key");
    }
    map->sorted_ = std::move(order);
  }
  for (const auto& [key, value] : entries)
    map->weight_ = add_weight(map->weight_, add_weight(key.weight(), value.weight()));
  map->entries_ = std::move(entries);
  return Value(Rep(std::in_place_index<8>, std::shared_ptr<const MapValue>(std::move(map))));
}

std::string_view Value::as_string() const { return *std::get<5>(rep_).text; }

std::string_view Value::as_bytes() const { return *std::get<6>(rep_).data; }

std::span<const Value> Value::as_list() const {
  const auto& list = std::get<7>(rep_);
  if (!list) return {};
  return list->items;
}

std::uint64_t Value::weight() const {
  switch (kind()) {
    case ValueKind::kString:
      return as_string().size() + 1;
    case ValueKind::kBytes:
      return as_bytes().size() + 1;
    case ValueKind::kList: {
      const auto& list = std::get<7>(rep_);
      return list ? list->weight : 1;
    }
    case ValueKind::kMap:
      return as_map().weight();
    default:
      return 1;
  }
}

const MapValue& Value::as_map() const {
  static const MapValue kEmpty;
  const auto& map = std::get<8>(rep_);
  return map ? *map : kEmpty;
}

const Value* MapValue::find(const Value& key) const {
  const auto wanted = to_key(key, /*allow_double=*/true);
  if (!wanted) return nullptr;
  if (sorted_.empty()) {
    for (const auto& [k, v] : entries_) {
      if (to_key(k, false) == wanted) return &v;
    }
    return nullptr;
  }
  const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), *wanted,
                                   [&](std::uint32_t index, const MapKey& w) {
                                     return *to_key(entries_[index].first, false) < w;
                                   });
  if (it != sorted_.end() && *to_key(entries_[*it].first, false) == *wanted)
    return &entries_[*it].second;
  return nullptr;
}

const Value* MapValue::find(std::string_view key) const {
  if (sorted_.empty()) {
    // The common case for rule bindings (`user.userId`): a handful of string keys.
    for (const auto& [k, v] : entries_) {
      if (k.is(ValueKind::kString) && k.as_string() == key) return &v;
    }
    return nullptr;
  }
  const MapKey wanted{MapKey::Class::kString, false, 0, key};
  const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), wanted,
                                   [&](std::uint32_t index, const MapKey& w) {
                                     return *to_key(entries_[index].first, false) < w;
                                   });
  if (it != sorted_.end() && *to_key(entries_[*it].first, false) == wanted)
    return &entries_[*it].second;
  return nullptr;
}

}  // namespace holdfast::cel
