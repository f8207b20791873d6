// Hash: a Redis hash, field -> value, each field once.
//
// Each field and its value share one allocation (8 bytes of lengths, then both), which a hash
// set indexes by the field: about 10 bytes of index per field plus the allocation. A value
// that changes gets a new allocation in the same slot. Fields come out in no particular order,
// as from Redis's large hashes (HGETALL is a map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <absl/container/flat_hash_set.h>

namespace holdfast {

class Hash {
 public:
  Hash() = default;
  ~Hash();
  Hash(const Hash& other);
  Hash& operator=(const Hash& other);
  Hash(Hash&& other) noexcept;
  Hash& operator=(Hash&& other) noexcept;

  std::size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }
  std::optional<std::string_view> get(std::string_view field) const;
  // Sets the field's value; true when the field is new.
  bool put(std::string_view field, std::string_view value);
  bool remove(std::string_view field);

  // fn(field, value) for every field.
  template <typename Fn>
  void for_each(Fn fn) const {
    for (const Slot& s : fields_) fn(s.entry->field(), s.entry->value());
  }

  void clear();

 private:
  struct Entry {
    std::uint32_t field_size;
    std::uint32_t value_size;
    const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
    std::string_view field() const { return {bytes(), field_size}; }
    std::string_view value() const { return {bytes() + field_size, value_size}; }
  };
  struct Slot {
    mutable Entry* entry;  // replaced in place when the value changes; the field never does
  };
  struct FieldHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view field) const;
    std::size_t operator()(const Slot& s) const { return (*this)(s.entry->field()); }
  };
  struct FieldEq {
    using is_transparent = void;
    static std::string_view of(std::string_view f) { return f; }
    static std::string_view of(const Slot& s) { return s.entry->field(); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return of(a) == of(b);
    }
  };

  static Entry* make_entry(std::string_view field, std::string_view value);
  static void free_entry(Entry* entry);

  absl::flat_hash_set<Slot, FieldHash, FieldEq> fields_;
};

}  // namespace holdfast
