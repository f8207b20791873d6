// LuaRuntime: one Lua 5.1 state with a memory cap and a time limit.
//
//  1. Memory: every allocation of the state goes through alloc(), which counts the bytes the
//     state holds. While a script runs (enforcing), a request that would take the state past
//     the cap is refused: Lua raises "not enough memory" inside the script, which ends it (or
//     which it may catch with pcall and carry on, smaller). Outside a script, and inside the
//     server's own C functions (Unlimited), nothing is refused, so a Lua API call the server
//     makes never fails half-way through C++ code (Lua errors are longjmps: they must not
//     cross C++ frames with objects to destroy).
//  2. Time: begin_run() sets a deadline and a count hook that reads the clock every
//     kHookInstructions VM instructions. Past the deadline the hook raises an error and then
//     fires on every line, so a script that catches the error with pcall is stopped again at
//     its next line, as Redis does. stopped() tells the engine to answer with the time-limit
//     error whatever the script's own error was. The hook does not run inside C functions:
//     one long library call (a pattern match) finishes before the script is stopped.
//  3. The runtime is found from the state through the allocator's userdata (of()), so hooks
//     and C functions need no globals.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "core/clock.h"
#include "script/limits.h"

struct lua_State;
struct lua_Debug;

namespace holdfast::script {

class CommandHost;

class LuaRuntime {
 public:
  // `now` is a monotonic clock in milliseconds.
  LuaRuntime(Limits limits, std::function<Millis()> now);
  ~LuaRuntime();
  LuaRuntime(const LuaRuntime&) = delete;
  LuaRuntime& operator=(const LuaRuntime&) = delete;

  lua_State* state() const { return L_; }
  static LuaRuntime& of(lua_State* L);
  const Limits& limits() const { return limits_; }

  // A script starts: the clock runs and the memory cap holds until end_run().
  void begin_run();
  void end_run();
  bool stopped() const { return stopped_; }
  bool enforcing() const { return enforcing_; }
  std::size_t used_bytes() const { return used_; }

  // Lifts the memory cap for a scope of the server's own code inside a script.
  class Unlimited {
   public:
    explicit Unlimited(LuaRuntime& r) : r_(r), was_(r.enforcing_) { r_.enforcing_ = false; }
    ~Unlimited() { r_.enforcing_ = was_; }
    Unlimited(const Unlimited&) = delete;
    Unlimited& operator=(const Unlimited&) = delete;

   private:
    LuaRuntime& r_;
    const bool was_;
  };

  // Holds the memory cap for a scope outside a script (compiling one).
  class Capped {
   public:
    explicit Capped(LuaRuntime& r) : r_(r), was_(r.enforcing_) { r_.enforcing_ = true; }
    ~Capped() { r_.enforcing_ = was_; }
    Capped(const Capped&) = delete;
    Capped& operator=(const Capped&) = delete;

   private:
    LuaRuntime& r_;
    const bool was_;
  };

  // The commands redis.call runs while a script runs (null between scripts).
  CommandHost* host = nullptr;
  // Where redis.call has its command's reply written: one buffer, reused.
  std::string reply_buffer;
  // A script changed how the collector runs (collectgarbage "stop", "setpause"...): the
  // sandbox sets it back after the script.
  bool collector_changed = false;

 private:
  static void* alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size);
  static void hook(lua_State* L, lua_Debug* ar);

  const Limits limits_;
  std::function<Millis()> now_;
  lua_State* L_ = nullptr;
  std::size_t used_ = 0;
  bool enforcing_ = false;
  bool stopped_ = false;
  Millis deadline_ = 0;
};

}  // namespace holdfast::script
