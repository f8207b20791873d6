#include "core/field_values.h"

namespace holdfast {

FieldValue field_value(HoldField field, const HoldState& h, char (&handle_text)[kHandleChars]) {
  using Type = FieldValue::Type;
  auto text = [](std::string_view s) { return FieldValue{Type::kText, 0, s}; };
  auto optional_text = [&](std::string_view s) { return s.empty() ? FieldValue{} : text(s); };
  switch (field) {
    case HoldField::kKey:
      return text(h.key);
    case HoldField::kHandle:
      if (h.kind == HoldKind::kAssigned) return FieldValue{};
      h.handle.write(handle_text);
      return text(std::string_view(handle_text, kHandleChars));
    case HoldField::kToken:
      return FieldValue{Type::kInteger, static_cast<std::int64_t>(h.token), {}};
    case HoldField::kHeldBy:
      return text(h.held_by);
    case HoldField::kOwner:
      return optional_text(h.owner);
    case HoldField::kAcquiredAt:
      return FieldValue{Type::kTime, h.acquired_at, {}};
    case HoldField::kLeaseExpiresAt:
      if (h.lease_expires_at == kNever) return FieldValue{};
      return FieldValue{Type::kTime, h.lease_expires_at, {}};
    case HoldField::kScope:
      return text(scope_name(h.scope));
    case HoldField::kKind:
      return text(kind_name(h.kind));
    case HoldField::kHolder:
      return text(h.holder_id);
    case HoldField::kMode:
      return text(mode_name(h.mode));
    case HoldField::kTake:
      return FieldValue{Type::kInteger, static_cast<std::int64_t>(h.take), {}};
    case HoldField::kPermits:
      return FieldValue{Type::kInteger, static_cast<std::int64_t>(h.permits), {}};
  }
  return FieldValue{};
}

}  // namespace holdfast
