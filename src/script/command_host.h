// CommandHost: what redis.call and redis.pcall reach. The server implements it over its
// command table (server/resp/script_calls.h); tests implement it with canned replies.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace holdfast::script {

class CommandHost {
 public:
  // Runs one command for a script (args[0] is its name; args are valid for the call only)
  // and writes its reply into `reply` (empty on entry) as one RESP2 reply: an error reply
  // for a command that is refused. The caller reuses `reply` from call to call.
  virtual void call(std::span<const std::string_view> args, std::string& reply) = 0;

 protected:
  ~CommandHost() = default;
};

}  // namespace holdfast::script
