// A CommandHost for the engine's tests: records each command a script runs and answers the
// RESP2 reply queued for it (or +OK).
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "script/command_host.h"
#include "script/engine.h"

namespace holdfast::script {

class ScriptHost final : public CommandHost {
 public:
  void call(std::span<const std::string_view> args, std::string& reply) override {
    calls.emplace_back(args.begin(), args.end());
    if (replies.empty()) {
      reply = "+OK\r\n";
      return;
    }
    reply = std::move(replies.front());
    replies.pop_front();
  }
  std::deque<std::string> replies;
  std::vector<std::vector<std::string>> calls;
};

// A clock that moves 1 ms each time it is read: a runaway script reaches any limit after
// that many reads, with no waiting.
struct TickingClock {
  Millis now = 0;
  Millis operator()() { return ++now; }
};

inline ScriptReply eval(Engine& engine, std::string_view body, CommandHost& host,
                        std::vector<std::string_view> keys = {},
                        std::vector<std::string_view> args = {}) {
  return engine.eval(body, keys, args, host);
}

}  // namespace holdfast::script
