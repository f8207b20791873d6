// The fields of a hold as callers see them, described once. RESP maps (server/resp/render),
// JSON bodies (server/http/json_body) and the CLI's --json output all render from these
// lists, so a field is named, ordered and null-ed the same way everywhere; each front end
// only decides how a value is spelled (a time is milliseconds on RESP, ISO-8601 in JSON).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace holdfast {

enum class HoldField : std::uint8_t {
  kKey,
  kHandle,  // only ever shown to the caller that acquired the hold
  kToken,
  kHeldBy,
  kOwner,  // null when the hold has none
  kAcquiredAt,
  kLeaseExpiresAt,  // null for an assignment without a lease
  kScope,
  kKind,
  kHolder,   // the holder id of an assignment
  kMode,     // shared and semaphore holds only: "shared" or "semaphore"
  kPermits,  // semaphore holds: the key's permits
  kTake,     // semaphore holds: how many of them this hold takes
};

std::string_view field_name(HoldField field);

// One field's value, seen in place. Each side reads its own type of hold into these
// (core/field_values.h for the server's HoldState).
struct FieldValue {
  enum class Type : std::uint8_t { kNull, kInteger, kText, kTime };
  Type type = Type::kNull;
  std::int64_t number = 0;  // kInteger; kTime: milliseconds since the Unix epoch
  std::string_view text;    // kText
};

// The shapes a hold takes; kHolder is added to the first three for an assigned hold.
// A grant (acquire, try, a waiter's grant): the caller learns its handle.
inline constexpr HoldField kGrantFields[] = {
    HoldField::kKey,   HoldField::kHandle,     HoldField::kToken,          HoldField::kHeldBy,
    HoldField::kOwner, HoldField::kAcquiredAt, HoldField::kLeaseExpiresAt, HoldField::kScope,
    HoldField::kKind};
// Anyone else's view (list): no handle.
inline constexpr HoldField kPublicFields[] = {
    HoldField::kKey,        HoldField::kToken,          HoldField::kHeldBy, HoldField::kOwner,
    HoldField::kAcquiredAt, HoldField::kLeaseExpiresAt, HoldField::kScope,  HoldField::kKind};
// What status shows of a held key, between `key, held` and `waiters`.
inline constexpr HoldField kStatusFields[] = {
    HoldField::kHeldBy, HoldField::kOwner, HoldField::kAcquiredAt, HoldField::kLeaseExpiresAt,
    HoldField::kToken,  HoldField::kScope, HoldField::kKind};
// The answer of assign (and a waiting assign's grant).
inline constexpr HoldField kAssignmentFields[] = {
    HoldField::kKey,    HoldField::kHolder,     HoldField::kToken,
    HoldField::kHeldBy, HoldField::kAcquiredAt, HoldField::kLeaseExpiresAt};

// Calls fn(field) for each field of `fields`, then kHolder when the hold is an assignment
// and `fields` is not kAssignmentFields (which has it already).
template <typename Fn>
void for_each_field(std::span<const HoldField> fields, bool assigned, Fn&& fn) {
  bool holder_seen = false;
  for (HoldField f : fields) {
    holder_seen = holder_seen || f == HoldField::kHolder;
    fn(f);
  }
  if (assigned && !holder_seen) fn(HoldField::kHolder);
}

// The fields a shared or semaphore hold shows after all the others; an exclusive hold shows
// none of them, so its shape is the same as before these modes existed (mode_fields() in
// core/field_values.h picks them).
inline constexpr HoldField kSharedFields[] = {HoldField::kMode};
inline constexpr HoldField kSemaphoreFields[] = {HoldField::kMode, HoldField::kPermits,
                                                 HoldField::kTake};

// How many fields for_each_field() visits.
inline std::size_t field_count(std::span<const HoldField> fields, bool assigned) {
  std::size_t n = 0;
  for_each_field(fields, assigned, [&n](HoldField) { ++n; });
  return n;
}

}  // namespace holdfast
