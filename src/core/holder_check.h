// The holder check (LOCK.CHECK): does this holder id hold the key right now? One decision for
// both backends, made on the key's holder as the backend just read it.
//
// A match answers the assigned hold with its fencing token, which the caller carries into the
// work the check guards (a fenced write refuses it once the turn has moved on). Anything else
// is LOCK_NOT_HOLDER naming the holder id it is not (details key, holderId, and assigned: 1
// when the key is assigned to someone else, 0 when it is free or held by a handle, so a
// caller can tell "not your turn" from "no turn in play"). The current holder is not named
// here: LOCK.HOLDER tells that to whoever asks for it.
#pragma once

#include <string_view>

#include "core/error.h"
#include "core/lock_types.h"

namespace holdfast {

Result<HolderView> check_holder(HolderView current, std::string_view holder_id);

}  // namespace holdfast
