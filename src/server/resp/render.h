// How lock results look on RESP (docs/resp.md): hold maps, status maps, errors. The fields of
// a hold come from core/hold_fields.h; times are integer milliseconds since the Unix epoch.
#pragma once

#include <span>

#include "core/error.h"
#include "core/field_values.h"
#include "core/lock_types.h"
#include "server/resp/codec.h"

namespace holdfast::resp {

// "-CODE message name=value ..." with values JSON-quoted when they hold spaces, quotes or '='.
std::string error_text(const Error& error);
void write_error(ReplyWriter& w, const Error& error);
// A command's error: as write_error, except that Redis's own commands (kRedisErrors) answer
// bad input as Redis does, `-ERR <message>`.
void write_command_error(ReplyWriter& w, std::uint32_t command_flags, const Error& error);

// A map of `fields` of the hold (plus holder for an assignment).
void write_hold(ReplyWriter& w, std::span<const HoldField> fields, const HoldState& hold);
void write_status(ReplyWriter& w, const StatusView& status);
void write_holder(ReplyWriter& w, const HolderView& view);

}  // namespace holdfast::resp
