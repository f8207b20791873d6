#include "script/lua_runtime.h"

#include <cstdlib>
#include <string>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace holdfast::script {
namespace {

// Redis reads its clock every 100 000 instructions too: a few hundred microseconds of work.
constexpr int kHookInstructions = 100'000;

}  // namespace

LuaRuntime::LuaRuntime(Limits limits, std::function<Millis()> now)
    : limits_(limits), now_(std::move(now)) {
  L_ = lua_newstate(&LuaRuntime::alloc, this);
  if (L_ == nullptr) std::abort();  // no memory for an empty state: nothing can run
}

LuaRuntime::~LuaRuntime() { lua_close(L_); }

LuaRuntime& LuaRuntime::of(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return *static_cast<LuaRuntime*>(ud);
}

void* LuaRuntime::alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) {
  auto& self = *static_cast<LuaRuntime*>(ud);
  if (new_size == 0) {
    self.used_ -= old_size;
    std::free(ptr);
    return nullptr;
  }
  // Lua passes old_size 0 with a null ptr; growing past the cap while a script runs fails
  // (Lua 5.1 never asks to shrink a block and gets null: shrinking is always allowed).
  if (new_size > old_size && self.enforcing_ &&
      self.used_ - old_size + new_size > self.limits_.memory_bytes)
    return nullptr;
  void* out = std::realloc(ptr, new_size);
  if (out != nullptr) self.used_ = self.used_ - old_size + new_size;
  return out;
}

void LuaRuntime::begin_run() {
  stopped_ = false;
  enforcing_ = true;
  deadline_ = now_() + limits_.time_ms;
  lua_sethook(L_, &LuaRuntime::hook, LUA_MASKCOUNT, kHookInstructions);
}

void LuaRuntime::end_run() {
  enforcing_ = false;
  lua_sethook(L_, nullptr, 0, 0);
}

void LuaRuntime::hook(lua_State* L, lua_Debug*) {
  LuaRuntime& self = of(L);
  if (!self.stopped_) {
    if (self.now_() < self.deadline_) return;
    self.stopped_ = true;
    // From now on every line raises again, so a pcall inside the script cannot swallow it.
    // (On the thread that runs, a coroutine perhaps, and on the main one.)
    lua_sethook(L, &LuaRuntime::hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
    lua_sethook(self.L_, &LuaRuntime::hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
  }
  lua_pushliteral(L, "script stopped: time limit");
  lua_error(L);
}

}  // namespace holdfast::script
