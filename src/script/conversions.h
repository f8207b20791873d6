// Redis's conversions between RESP and Lua values (docs/resp.md, "Scripts").
//
// A command's reply, as redis.call returns it to the script:
//   integer -> number; bulk string -> string; nil (bulk or array) -> false;
//   array -> table (nested as the array is); status -> {ok = "..."}; error -> {err = "..."}.
// The script's return value, as EVAL answers it:
//   number -> integer (the fraction dropped); string -> bulk string; true -> 1;
//   false and nil -> nil; a table with a string `err` -> an error, with a string `ok` -> a
//   status; another table -> an array of its elements 1, 2, ... up to the first nil, each
//   converted the same way; anything else (a function, ...) -> nil.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/script_reply.h"

struct lua_State;

namespace holdfast::script {

// The deepest table the reply of a script may nest (a table holding itself would not end).
inline constexpr int kMaxReplyDepth = 64;

// Pushes the Lua value of the one RESP2 reply in `resp`; false (nothing pushed) when `resp`
// is not exactly one well-formed reply.
bool push_resp(lua_State* L, std::string_view resp);

// The reply for the Lua value at `index`, at most `max_bytes` big (roughly: strings plus a
// few dozen bytes a value); past that, or kMaxReplyDepth, an error reply. Reads tables raw:
// no metamethod of the script runs.
ScriptReply to_script_reply(lua_State* L, int index, std::size_t max_bytes);

}  // namespace holdfast::script
