#include "core/hold_fields.h"

namespace holdfast {

std::string_view field_name(HoldField field) {
  switch (field) {
    case HoldField::kKey:
      return "key";
    case HoldField::kHandle:
      return "handle";
    case HoldField::kToken:
      return "token";
    case HoldField::kHeldBy:
      return "heldBy";
    case HoldField::kOwner:
      return "owner";
    case HoldField::kAcquiredAt:
      return "acquiredAt";
    case HoldField::kLeaseExpiresAt:
      return "leaseExpiresAt";
    case HoldField::kScope:
      return "scope";
    case HoldField::kKind:
      return "kind";
    case HoldField::kHolder:
      return "holder";
    case HoldField::kMode:
      return "mode";
    case HoldField::kPermits:
      return "permits";
    case HoldField::kTake:
      return "take";
  }
  return "?";
}

}  // namespace holdfast
