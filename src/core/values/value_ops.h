// The typed-value commands as pure operations on one key's value (Dragonfly's OpXxx style): no
// I/O, no clock, no keyspace. Both backends run every command through here, the embedded one
// on the value in its store (value_store.h), a node over PostgreSQL on the value it read from
// its row and writes back (service/postgres/value_rows.h), so Redis's semantics, errors and
// the limits are written once.
//
// An operation:
//  1. finds the key's value: none, one of its type, or one of another type (WRONGTYPE);
//  2. checks what it would do against the limits (core/values/limits.h) and Redis's rules
//     (a counter that would overflow, a hash field that is not an integer), changing nothing
//     when it refuses;
//  3. changes the value, reporting each change as a ValueEdit (for the log); a value it
//     creates starts with no expiry, and an aggregate it empties is gone;
//  4. answers Redis's reply.
// Parsing is the front end's (server/resp/value_commands_*.cc): it has already refused bad
// numbers, flags and arity in Redis's words, before the key is looked at, as Redis does.
#pragma once

#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/values/value.h"
#include "core/values/value_edit.h"
#include "core/values/value_reply.h"
#include "core/values/value_request.h"

namespace holdfast {

struct ValueOutcome {
  ValueReply reply;
  std::vector<ValueEdit> edits;  // in order; empty when nothing changed
};

// The caller drops an expired value before it asks. REQUIRES: r.op is a typed op (not kType, kPTtl
// or kGetDel, which the backends answer from the keyspace).
Result<ValueOutcome> run_value_op(const ValueRequest& r, ValueCell& cell);

// The key holds a value of another type than the command's.
Error wrong_type();

}  // namespace holdfast
