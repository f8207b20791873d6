// The values of a HoldState's fields (core/hold_fields.h), for the server's renderers.
#pragma once

#include <span>

#include "core/handle.h"
#include "core/hold.h"
#include "core/hold_fields.h"

namespace holdfast {

// `handle_text` receives the printed handle when `field` is kHandle; the value is valid while
// the hold and `handle_text` are.
FieldValue field_value(HoldField field, const HoldState& hold, char (&handle_text)[kHandleChars]);

inline bool is_assigned(const HoldState& hold) { return hold.kind == HoldKind::kAssigned; }

// The fields a hold of `mode` shows after the others (kSharedFields, kSemaphoreFields; none
// for an exclusive hold).
inline std::span<const HoldField> mode_fields(LockMode mode) {
  switch (mode) {
    case LockMode::kExclusive:
      return {};
    case LockMode::kShared:
      return kSharedFields;
    case LockMode::kSemaphore:
      return kSemaphoreFields;
  }
  return {};
}

}  // namespace holdfast
