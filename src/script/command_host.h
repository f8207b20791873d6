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
  // and answers its reply as one RESP2 reply: an error reply for a command that is refused.
  virtual std::string call(std::span<const std::string_view> args) = 0;

 protected:
  ~CommandHost() = default;
};

}  // namespace holdfast::script
