/* Value: the runtime value of a CEL expression.
 *
 * A Value is one of null, bool, int (int64), uint (uint64), double, string (valid UTF-8),
 * bytes, list or map. Scalars are stored inline; strings, bytes, lists and maps are immutable
 * and shared by reference count, so copying a Value never copies its payload and never
 * allocates. That is what lets the evaluator hand out copies of bindings and literals freely
 * (`record.key` is a reference-count bump, not a string copy).
 *
 * Maps accept int, uint, bool and string keys. Numeric keys are compared by numeric value
 * across int and uint (CEL's heterogeneous equality), so {1: 'a', 1u: 'b'} is a repeated key,
 * and a lookup with the double 1.0 finds the key 1. Entries keep their insertion order (for
 * display); maps larger than a few entries also keep a sorted index for O(log n) lookups.
 *
 * Every value has a weight, an upper bound on the work of comparing or scanning it: 1 for a
 * scalar, its length for string and bytes, the sum of its parts for lists and maps (computed
 * once, when the list or map is built). The evaluator charges operations by weight, so a rule
 * cannot hide quadratic work behind a single step.
 *
 * Equality and ordering follow the CEL definition: values of different kinds are unequal
 * except int/uint/double, which compare by numeric value (int with uint exactly; an integer
 * with a double after converting the integer to double, as the conformance suite specifies);
 * NaN equals nothing; ordering exists for bool, numbers, string and bytes only.
 */
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.h"

namespace holdfast::cel {

enum class ValueKind : std::uint8_t {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap
};

// The CEL type name: "null_type", "bool", "int", "uint", "double", "string", "bytes", "list",
// "map".
std::string_view kind_name(ValueKind kind);

class MapValue;

class Value {
 public:
  Value() = default;  // null

  static Value from_bool(bool value) { return Value(Rep(std::in_place_index<1>, value)); }
  static Value from_int(std::int64_t value) { return Value(Rep(std::in_place_index<2>, value)); }
  static Value from_uint(std::uint64_t value) { return Value(Rep(std::in_place_index<3>, value)); }
  static Value from_double(double value) { return Value(Rep(std::in_place_index<4>, value)); }
  // REQUIRES: `utf8` is valid UTF-8 (see utf8.h); callers holding untrusted text validate first.
  static Value from_string(std::string utf8);
  static Value from_bytes(std::string bytes);
  static Value from_list(std::vector<Value> elements);
  // Fails with INVALID_ARGUMENT when a key is not int, uint, bool or string, or when two keys
  // are equal (numerically equal int and uint keys count as equal).
  static Result<Value> from_map(std::vector<std::pair<Value, Value>> entries);

  ValueKind kind() const { return static_cast<ValueKind>(rep_.index()); }
  bool is(ValueKind kind) const { return this->kind() == kind; }
  bool is_null() const { return is(ValueKind::kNull); }

  // Accessors. REQUIRES: kind() is the matching kind.
  bool as_bool() const { return std::get<1>(rep_); }
  std::int64_t as_int() const { return std::get<2>(rep_); }
  std::uint64_t as_uint() const { return std::get<3>(rep_); }
  double as_double() const { return std::get<4>(rep_); }
  std::string_view as_string() const;
  std::string_view as_bytes() const;
  std::span<const Value> as_list() const;
  const MapValue& as_map() const;

  // The work bound described above; at least 1.
  std::uint64_t weight() const;

 private:
  struct ListData;
  struct StringRep {
    std::shared_ptr<const std::string> text;
  };
  struct BytesRep {
    std::shared_ptr<const std::string> data;
  };
  // A null list or map pointer is the empty list or map, so `[]` and `{}` never allocate.
  using Rep =
      std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, StringRep, BytesRep,
                   std::shared_ptr<const ListData>, std::shared_ptr<const MapValue>>;

  explicit Value(Rep rep) : rep_(std::move(rep)) {}

  Rep rep_;
};

struct Value::ListData {
  std::vector<Value> items;
  std::uint64_t weight = 1;
};

class MapValue {
 public:
  using Entry = std::pair<Value, Value>;

  std::span<const Entry> entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  std::uint64_t weight() const { return weight_; }

  // The value stored under `key`, or nullptr when absent. Numeric keys match across int, uint
  // and double (3.0 finds 3 and 3u; 3.5 finds nothing); keys of other kinds match nothing.
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;

 private:
  friend class Value;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> sorted_;  // entry indexes ordered by key; empty for small maps
  std::uint64_t weight_ = 1;
};

// CEL equality (`==`): never fails; values of different kinds are unequal except numbers.
bool values_equal(const Value& a, const Value& b);

// CEL ordering (`<`, `<=`, ...): nullopt when the two values have no ordering (lists, maps,
// null, mixed non-numeric kinds); `unordered` when a NaN is involved.
std::optional<std::partial_ordering> compare_values(const Value& a, const Value& b);

// Comparisons between the numeric kinds: int/uint exact; with a double, the integer is first
// converted to double (rounding to nearest).
std::partial_ordering compare_int_uint(std::int64_t a, std::uint64_t b);
std::partial_ordering compare_int_double(std::int64_t a, double b);
std::partial_ordering compare_uint_double(std::uint64_t a, double b);

}  // namespace holdfast::cel
