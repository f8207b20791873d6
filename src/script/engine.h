// Engine: Lua scripts as Redis runs them (EVAL, EVALSHA, SCRIPT LOAD | EXISTS | FLUSH), over
// one sandboxed Lua 5.1 state (sandbox.h) with a memory cap and a time limit (lua_runtime.h).
//
//  1. A script is compiled once and kept under the SHA-1 of its body (load(), or the first
//     eval()); eval_sha() runs a kept one, or answers NOSCRIPT so clients send the body.
//  2. A run: KEYS and ARGV are set, the clock starts, and the script runs to its end. Its
//     redis.call reaches the CommandHost given for that run. Nothing else runs meanwhile: the
//     server's loop is single-threaded, so a script is atomic.
//  3. The script's value becomes the reply (conversions.h). An error it raised becomes an
//     error reply: an error table {err = ...} (a failed redis.call) as its own line, a Lua
//     error as "ERR Error running script (call to f_<sha>): <message>". A script past the
//     time limit answers "ERR script stopped: ran longer than <N> ms", one that runs out of
//     memory "ERR script stopped: out of memory (the scripts' limit is <N> bytes)"; in both
//     cases what its commands changed before stays changed (a lock server cannot roll them
//     back, and Redis does not either).
//  4. After the run the sandbox is reset, so nothing of one script reaches the next.
// Used on one thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/lock_types.h"  // StringHash
#include "core/script_reply.h"
#include "script/command_host.h"
#include "script/limits.h"
#include "script/sandbox.h"

namespace holdfast::script {

class LuaRuntime;

class Engine {
 public:
  // `now`: a monotonic clock in milliseconds (default: std::chrono::steady_clock).
  explicit Engine(Limits limits = {}, std::function<Millis()> now = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // SCRIPT LOAD: compiles and keeps `body`; its SHA-1 (a bulk string), or the compile error.
  ScriptReply load(std::string_view body);
  // SCRIPT EXISTS: whether a script of that SHA-1 (either case) is kept.
  bool exists(std::string_view sha) const;
  // SCRIPT FLUSH: forgets every kept script.
  void flush();

  // EVAL: keeps and runs `body`.
  ScriptReply eval(std::string_view body, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, CommandHost& host);
  // EVALSHA: runs a kept script, or answers NOSCRIPT.
  ScriptReply eval_sha(std::string_view sha, std::span<const std::string_view> keys,
                       std::span<const std::string_view> args, CommandHost& host);

  std::size_t scripts() const { return shas_.size(); }
  std::size_t memory_bytes() const;
  const Limits& limits() const;

 private:
  // Compiles `body` under `sha` unless kept; the compile error if it does not compile.
  std::optional<ScriptReply> compile(std::string_view body, const std::string& sha);
  // Kept scripts: SHA-1 to the compiled function's reference in the Lua registry.
  using Scripts = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;
  ScriptReply run(const Scripts::value_type& script, std::span<const std::string_view> keys,
                  std::span<const std::string_view> args, CommandHost& host);

  std::unique_ptr<LuaRuntime> runtime_;
  Sandbox sandbox_;
  Scripts shas_;
};

}  // namespace holdfast::script
