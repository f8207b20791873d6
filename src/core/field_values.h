// The values of a HoldState's fields (core/hold_fields.h), for the server's renderers.
#pragma once

#include "core/handle.h"
#include "core/hold.h"
#include "core/hold_fields.h"

namespace holdfast {

// `handle_text` receives the printed handle when `field` is kHandle; the value is valid while
// the hold and `handle_text` are.
FieldValue field_value(HoldField field, const HoldState& hold, char (&handle_text)[kHandleChars]);

inline bool is_assigned(const HoldState& hold) { return hold.kind == HoldKind::kAssigned; }

}  // namespace holdfast
