// The `redis` table a script sees, as Redis gives it:
//   redis.call(name, ...)    runs a command (command_host.h); an error reply is raised as the
//                            error {err = "..."}, which ends the script unless it catches it;
//   redis.pcall(name, ...)   the same, but an error reply is returned as {err = "..."};
//   redis.error_reply(msg)   {err = msg} (a leading '-' dropped); redis.status_reply(msg)
//                            {ok = msg};
//   redis.sha1hex(s)         the SHA-1 of s in hex;
//   redis.log(level, ...)    writes the message to the server's log (LOG_WARNING as a
//                            warning, LOG_NOTICE as info, the others as debug);
//   redis.setresp(2)         accepted (3 is refused: commands answer scripts in RESP2);
//   redis.replicate_commands() true, redis.set_repl(...) nothing: there are no replicas;
//   LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE, LOG_WARNING, REPL_* constants.
// Command arguments must be strings or numbers (a number is sent as "%.17g" writes it, so
// integers as integers), as in Redis.
#pragma once

struct lua_State;

namespace holdfast::script {

// Sets the global `redis` of the state (before the sandbox makes the globals read-only).
void install_redis_lib(lua_State* L);

}  // namespace holdfast::script
