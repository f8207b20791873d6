#include "script/sandbox.h"

#include <string_view>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include "core/values/redis_numbers.h"
#include "script/lua_runtime.h"
#include "script/redis_lib.h"

namespace holdfast::script {
namespace {

// Registry keys.
constexpr const char* kRealGlobals = "holdfast.globals";
constexpr const char* kProxies = "holdfast.proxies";

void open_library(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

int readonly_table(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

// _G reads through to the real globals, whose own __index is this: a global that does not
// exist is an error, not nil. (A table as _G's __index keeps reading a global inside the VM.)
int missing_global(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    name != nullptr ? name : "?");
}

// _G's __newindex.
int global_newindex(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kRealGlobals);
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  if (!lua_isnil(L, -1)) return readonly_table(L);
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to create global variable '%s'",
                    name != nullptr ? name : "?");
}

int do_nothing(lua_State*) { return 0; }

// loadstring without binary chunks; otherwise as Lua 5.1's (nil and the message on an error).
int safe_loadstring(lua_State* L) {
  std::size_t size = 0;
  const char* text = luaL_checklstring(L, 1, &size);
  const char* name = luaL_optstring(L, 2, text);
  if (size > 0 && text[0] == LUA_SIGNATURE[0]) {
    lua_pushnil(L);
    lua_pushliteral(L, "loadstring: binary chunks are not accepted");
    return 2;
  }
  if (luaL_loadbuffer(L, text, size, name) == 0) return 1;
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

// collectgarbage as Lua 5.1's (the original is upvalue 1), noting the options that change
// how the collector runs, so that only then does reset_sandbox() set it back. (Restarting it
// after every script would make each script's first allocation run a collection step.)
int noting_collectgarbage(lua_State* L) {
  const std::string_view option = luaL_optstring(L, 1, "collect");
  if (option == "stop" || option == "restart" || option == "setpause" || option == "setstepmul")
    LuaRuntime::of(L).collector_changed = true;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// tonumber(s) for a string that is a plain decimal integer (a timestamp, a count: what scripts
// pass in ARGV) without strtod, which Lua 5.1's tonumber runs twice (lua_isnumber, then
// lua_tonumber). The double is the one strtod reads (small_decimal()); everything else, a base
// included, is Lua's own tonumber (upvalue 1), called in this frame so that its errors name
// the function as the script called it.
int fast_tonumber(lua_State* L) {
  if (lua_gettop(L) == 1 && lua_type(L, 1) == LUA_TSTRING) {
    std::size_t size = 0;
    const char* text = lua_tolstring(L, 1, &size);
    if (const auto v = small_decimal(std::string_view(text, size))) {
      lua_pushnumber(L, static_cast<lua_Number>(*v));
      return 1;
    }
  }
  return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

// Pushes an empty table that reads through to the table at the absolute index `real` (or
// through `index`) and refuses writes (`newindex`); it is remembered for reset_sandbox().
void push_proxy(lua_State* L, int real, lua_CFunction index, lua_CFunction newindex) {
  lua_newtable(L);           // the proxy
  lua_createtable(L, 0, 3);  // its metatable
  if (index != nullptr) {
    lua_pushcfunction(L, index);
  } else {
    lua_pushvalue(L, real);
  }
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);  // getmetatable() answers false; setmetatable() is refused
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxies);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, static_cast<int>(lua_objlen(L, -2)) + 1);
  lua_pop(L, 1);
}

}  // namespace

Sandbox install_sandbox(lua_State* L) {
  open_library(L, luaopen_base, "");
  open_library(L, luaopen_table, LUA_TABLIBNAME);
  open_library(L, luaopen_string, LUA_STRLIBNAME);
  open_library(L, luaopen_math, LUA_MATHLIBNAME);
  install_redis_lib(L);

  for (const char* name : {"dofile", "loadfile", "load", "getfenv", "setfenv"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_pushcfunction(L, do_nothing);
  lua_setglobal(L, "print");
  lua_pushcfunction(L, safe_loadstring);
  lua_setglobal(L, "loadstring");
  lua_getglobal(L, "collectgarbage");
  lua_pushcclosure(L, noting_collectgarbage, 1);
  lua_setglobal(L, "collectgarbage");
  lua_getglobal(L, "tonumber");
  lua_pushcclosure(L, fast_tonumber, 1);
  lua_setglobal(L, "tonumber");
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);

  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxies);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, LUA_REGISTRYINDEX, kRealGlobals);

  // The libraries behind read-only proxies.
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int globals = lua_gettop(L);
  for (const char* name :
       {LUA_STRLIBNAME, LUA_TABLIBNAME, LUA_MATHLIBNAME, LUA_COLIBNAME, "redis"}) {
    lua_getfield(L, globals, name);
    push_proxy(L, lua_gettop(L), nullptr, readonly_table);
    lua_setfield(L, globals, name);
    lua_pop(L, 1);
  }
  // String methods ("x"):rep(2) read through the string proxy; the metatable of strings is
  // hidden, so its __index cannot be changed.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_getfield(L, globals, LUA_STRLIBNAME);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 2);

  // The globals themselves: the state's globals become the proxy, _G included.
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, missing_global);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, globals);
  push_proxy(L, globals, nullptr, global_newindex);
  lua_pushvalue(L, -1);
  lua_setfield(L, globals, "_G");
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_settop(L, 0);

  Sandbox refs;
  lua_getfield(L, LUA_REGISTRYINDEX, kRealGlobals);
  refs.globals = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxies);
  refs.proxies = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_rawgeti(L, LUA_REGISTRYINDEX, refs.globals);
  for (Sandbox::Array* a : {&refs.keys, &refs.args}) {
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, a->name);
    a->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_pop(L, 1);
  return refs;
}

namespace {

// Sets t[1..n] to `values` in the table at the top of the stack.
void fill(lua_State* L, std::span<const std::string_view> values) {
  int i = 0;
  for (std::string_view v : values) {
    lua_pushlstring(L, v.data(), v.size());
    lua_rawseti(L, -2, ++i);
  }
}

// Whether the table at the top of the stack holds exactly t[1..n]: no metatable, no field, no
// element past n (lua_next from n finds nothing; t[n] is there, as next() needs).
bool only_elements(lua_State* L, int n) {
  if (lua_getmetatable(L, -1) != 0) {
    lua_pop(L, 1);
    return false;
  }
  if (n == 0) {
    lua_pushnil(L);
  } else {
    lua_pushinteger(L, n);
  }
  if (lua_next(L, -2) == 0) return true;
  lua_pop(L, 2);
  return false;
}

// Refills the array `a` with `values`; a table the last script changed otherwise is replaced
// by a new one, in the registry and in the globals at stack index `globals`.
void refill(lua_State* L, int globals, Sandbox::Array& a,
            std::span<const std::string_view> values) {
  const int n = static_cast<int>(values.size());
  lua_rawgeti(L, LUA_REGISTRYINDEX, a.ref);
  fill(L, values);
  for (int i = n + 1; i <= a.size; ++i) {
    lua_pushnil(L);
    lua_rawseti(L, -2, i);
  }
  a.size = n;
  if (!only_elements(L, n)) {
    lua_pop(L, 1);
    lua_createtable(L, n, 0);
    fill(L, values);
    lua_pushvalue(L, -1);
    lua_rawseti(L, LUA_REGISTRYINDEX, a.ref);
    lua_pushstring(L, a.name);
    lua_pushvalue(L, -2);
    lua_rawset(L, globals);
  }
  lua_pop(L, 1);
}

}  // namespace

void set_keys_and_args(lua_State* L, Sandbox& sandbox, std::span<const std::string_view> keys,
                       std::span<const std::string_view> args) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, sandbox.globals);
  const int globals = lua_gettop(L);
  refill(L, globals, sandbox.keys, keys);
  refill(L, globals, sandbox.args, args);
  lua_pop(L, 1);
}

void reset_sandbox(lua_State* L, const Sandbox& sandbox, std::size_t collect_above) {
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, sandbox.proxies);
  const int proxies = static_cast<int>(lua_objlen(L, -1));
  for (int i = 1; i <= proxies; ++i) {
    lua_rawgeti(L, 1, i);
    // Clearing fields while traversing is allowed: only assigning new ones is not.
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, 2);
    }
    lua_pop(L, 1);
  }
  lua_settop(L, 0);
  LuaRuntime& runtime = LuaRuntime::of(L);
  if (runtime.collector_changed) {
    runtime.collector_changed = false;
    lua_gc(L, LUA_GCRESTART, 0);
    lua_gc(L, LUA_GCSETPAUSE, 200);  // Lua 5.1's defaults
    lua_gc(L, LUA_GCSETSTEPMUL, 200);
  }
  if (runtime.used_bytes() > collect_above) lua_gc(L, LUA_GCCOLLECT, 0);
}

}  // namespace holdfast::script
