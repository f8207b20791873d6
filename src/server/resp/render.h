// How lock results look on the wire (SPEC sections 6 and 8): hold maps, status maps, errors.
// One place maps every Result to its reply, so each command handler only picks a shape.
#pragma once

#include "core/error.h"
#include "core/lock_table.h"
#include "server/resp/codec.h"

namespace holdfast::resp {

// "-CODE message name=value ..." with values JSON-quoted when they hold spaces, quotes or '='.
std::string error_text(const Error& error);
void write_error(ReplyWriter& w, const Error& error);

// key handle token heldBy owner acquiredAt leaseExpiresAt scope kind [holder]
void write_hold(ReplyWriter& w, const HoldState& hold);
// The same without the handle (status, list).
void write_public_hold(ReplyWriter& w, const HoldState& hold);
void write_status(ReplyWriter& w, const StatusView& status);
// key holder token heldBy acquiredAt leaseExpiresAt: the reply of LOCK.ASSIGN.
void write_assignment(ReplyWriter& w, const HoldState& hold);
void write_holder(ReplyWriter& w, const HolderView& view);
void write_lock_timeout(ReplyWriter& w, std::string_view key, Millis timeout_ms);

}  // namespace holdfast::resp
