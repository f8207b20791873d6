#include "script/redis_lib.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include "core/values/redis_numbers.h"
#include "script/command_host.h"
#include "script/conversions.h"
#include "script/lua_runtime.h"
#include "script/sha1.h"

namespace holdfast::script {
namespace {

// A reply buffer that grew past this (a long LOCK.LIST) is given back after the call.
constexpr std::size_t kKeptReplyBytes = 64 * 1024;

// Pushes {err = line}.
void push_error_table(lua_State* L, const char* line) {
  lua_createtable(L, 0, 1);
  lua_pushstring(L, line);
  lua_setfield(L, -2, "err");
}

// The body of redis.call and redis.pcall. Leaves one value on the stack: the command's reply
// as Lua, or an error table; answers whether that table is an error to raise. No Lua error
// is raised in here (the caller raises it, once the C++ objects here are gone), and the
// memory cap is lifted: a longjmp must not cross this frame.
bool run_command(lua_State* L) {
  LuaRuntime& runtime = LuaRuntime::of(L);
  LuaRuntime::Unlimited unlimited(runtime);
  const int argc = lua_gettop(L);
  if (argc == 0) {
    push_error_table(L, "ERR Please specify at least one argument for this redis lib call");
    return true;
  }
  // The arguments as views: a string into Lua's own (the stack keeps it alive for the
  // call), a number into `numbers`, sized first so that no view moves.
  int number_count = 0;
  for (int i = 1; i <= argc; ++i) {
    const int type = lua_type(L, i);
    if (type == LUA_TNUMBER) {
      ++number_count;
    } else if (type != LUA_TSTRING) {
      push_error_table(L, "ERR Lua redis lib command arguments must be strings or integers");
      return true;
    }
  }
  if (runtime.host == nullptr) {
    push_error_table(L, "ERR redis.call is only available while a script runs");
    return true;
  }
  // Each number's text, at its argument's place; short ones live in the strings themselves.
  const auto count = static_cast<std::size_t>(argc);
  std::string inline_numbers[8];
  std::vector<std::string> more_numbers(count > 8 && number_count > 0 ? count : 0);
  const std::span<std::string> numbers =
      more_numbers.empty() ? std::span<std::string>(inline_numbers) : std::span(more_numbers);
  std::string_view inline_views[8];
  std::vector<std::string_view> more_views(count > 8 ? count : 0);
  const std::span<std::string_view> views =
      count > 8 ? std::span<std::string_view>(more_views) : std::span(inline_views, count);
  for (int i = 1; i <= argc; ++i) {
    if (lua_type(L, i) == LUA_TNUMBER) {
      std::string& text = numbers[static_cast<std::size_t>(i - 1)];
      text = format_redis_double(static_cast<double>(lua_tonumber(L, i)));
      views[static_cast<std::size_t>(i - 1)] = text;
    } else {
      std::size_t n = 0;
      const char* s = lua_tolstring(L, i, &n);
      views[static_cast<std::size_t>(i - 1)] = std::string_view(s, n);
    }
  }
  std::string& reply = runtime.reply_buffer;
  reply.clear();
  try {
    runtime.host->call(views, reply);
  } catch (const std::exception&) {
    push_error_table(L, "ERR the command failed inside the server");
    return true;
  }
  const bool read = push_resp(L, reply);
  if (reply.capacity() > kKeptReplyBytes) std::string().swap(reply);
  if (!read) {
    push_error_table(L, "ERR the command's reply could not be read");
    return true;
  }
  if (!lua_istable(L, -1)) return false;
  lua_getfield(L, -1, "err");
  const bool is_error = lua_isstring(L, -1);
  lua_pop(L, 1);
  return is_error;
}

int redis_call(lua_State* L) {
  if (run_command(L)) return lua_error(L);
  return 1;
}

int redis_pcall(lua_State* L) {
  (void)run_command(L);
  return 1;
}

int error_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "wrong number or type of arguments");
  const char* line = lua_tostring(L, 1);
  push_error_table(L, line[0] == '-' ? line + 1 : line);
  return 1;
}

int status_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "wrong number or type of arguments");
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

int sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) return luaL_error(L, "wrong number of arguments");
  std::size_t n = 0;
  const char* s = luaL_checklstring(L, 1, &n);
  char hex[41];
  {
    const std::string digest = sha1_hex(std::string_view(s, n));
    digest.copy(hex, 40);
  }
  hex[40] = '\0';
  lua_pushlstring(L, hex, 40);
  return 1;
}

enum LogLevel { kLogDebug = 0, kLogVerbose = 1, kLogNotice = 2, kLogWarning = 3 };

int redis_log(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) return luaL_error(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return luaL_error(L, "First argument must be a number (log level).");
  const int level = static_cast<int>(lua_tointeger(L, 1));
  if (level < kLogDebug || level > kLogWarning) return luaL_error(L, "Invalid debug level.");
  {
    LuaRuntime::Unlimited unlimited(LuaRuntime::of(L));
    std::string message;
    for (int i = 2; i <= argc; ++i) {
      std::size_t n = 0;
      const char* s = lua_tolstring(L, i, &n);  // numbers become strings; others are skipped
      if (s == nullptr) continue;
      if (!message.empty()) message.push_back(' ');
      message.append(s, n);
    }
    const auto spd = level == kLogWarning  ? spdlog::level::warn
                     : level == kLogNotice ? spdlog::level::info
                                           : spdlog::level::debug;
    spdlog::log(spd, "script: {}", message);
  }
  return 0;
}

int setresp(lua_State* L) {
  if (lua_gettop(L) != 1 || !lua_isnumber(L, 1))
    return luaL_error(L, "redis.setresp() requires one argument.");
  const lua_Integer v = lua_tointeger(L, 1);
  if (v == 3)
    return luaL_error(L, "RESP3 is not available to scripts here: commands answer in RESP2");
  if (v != 2) return luaL_error(L, "RESP version must be 2 or 3.");
  return 0;
}

int replicate_commands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int set_repl(lua_State*) { return 0; }

}  // namespace

void install_redis_lib(lua_State* L) {
  static const luaL_Reg functions[] = {
      {"call", redis_call},         {"pcall", redis_pcall},
      {"error_reply", error_reply}, {"status_reply", status_reply},
      {"sha1hex", sha1hex},         {"log", redis_log},
      {"setresp", setresp},         {"replicate_commands", replicate_commands},
      {"set_repl", set_repl},       {nullptr, nullptr},
  };
  lua_newtable(L);
  for (const luaL_Reg* f = functions; f->name != nullptr; ++f) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  for (auto [name, value] : {std::pair<const char*, int>{"LOG_DEBUG", kLogDebug},
                             {"LOG_VERBOSE", kLogVerbose},
                             {"LOG_NOTICE", kLogNotice},
                             {"LOG_WARNING", kLogWarning},
                             {"REPL_NONE", 0},
                             {"REPL_AOF", 1},
                             {"REPL_SLAVE", 2},
                             {"REPL_REPLICA", 2},
                             {"REPL_ALL", 3}}) {
    lua_pushinteger(L, value);
    lua_setfield(L, -2, name);
  }
  lua_setglobal(L, "redis");
}

}  // namespace holdfast::script
