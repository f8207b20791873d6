// ScriptCalls: what a script's redis.call reaches (script/command_host.h), over the same
// command table, argument reading and reply writers as a connection's commands.
//
//  1. The command is looked up in the table. SELECT answers as for a connection (OK for 0,
//     an error for any other database). Connection commands (PING, CLIENT, MULTI...),
//     SCRIPT, EVAL and EVALSHA are refused with Redis's "This Redis command is not allowed
//     from script"; an unknown one with "Unknown Redis command called from script"; a wrong
//     arity with "Wrong number of args calling Redis command from script".
//  2. Its arguments are read as for a connection (read_call_args()), and the call is issued
//     on the service as the script's caller, with a blocking command making one attempt (as
//     in a transaction), and an immediate() completion: the embedded backend finishes it
//     inside the call, without waiting for the log. (The script's own reply waits for the log
//     instead, LockService::complete(); a script runs inside LockService::atomically(), where
//     every call is applied at once.)
//  3. The answer is written by the row's writer in RESP2, as Redis hands replies to scripts,
//     and the engine reads that back into Lua.
//  4. PUBLISH and PUBSUB, connection commands that are no calls of the service, are the
//     exception to 1: PUBLISH publishes at once, as in Redis (the (un)subscribe commands are
//     refused, as there).
#pragma once

#include <memory>
#include <string>

#include "script/command_host.h"
#include "service/lock_service.h"

namespace holdfast::pubsub {
class Registry;
}

namespace holdfast::resp {

class ScriptCalls final : public script::CommandHost {
 public:
  // `service`, `caller` and `pubsub` (null: no PUBLISH) outlive this object (one EVAL).
  ScriptCalls(LockService& service, const Caller& caller, pubsub::Registry* pubsub = nullptr);
  ~ScriptCalls();

  void call(std::span<const std::string_view> args, std::string& reply) override;

 private:
  struct Inner;
  // The completion the last ScriptCalls on this thread left: one allocation fewer per script.
  static std::unique_ptr<Inner>& spare();

  LockService& service_;
  const Caller& caller_;
  pubsub::Registry* pubsub_;
  std::unique_ptr<Inner> inner_;
};

}  // namespace holdfast::resp
