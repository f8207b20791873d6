#include "script/engine.h"

#include <algorithm>
#include <chrono>
#include <optional>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include "script/conversions.h"
#include "script/lua_runtime.h"
#include "script/sandbox.h"
#include "script/sha1.h"

namespace holdfast::script {
namespace {

// The registry table of compiled scripts, by SHA-1.
constexpr const char* kScripts = "holdfast.scripts";
// How Lua names the script in its messages: "user_script:3: ...", as in Redis.
constexpr const char* kChunkName = "@user_script";

Millis steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A SHA-1 in lower case: `s` itself when it is already (clients send them so), else `buffer`.
std::string_view lower(std::string_view s, std::string& buffer) {
  if (std::none_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'F'; })) return s;
  buffer.assign(s);
  for (char& c : buffer)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  return buffer;
}

void new_script_table(lua_State* L) {
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kScripts);
}

}  // namespace

Engine::Engine(Limits limits, std::function<Millis()> now)
    : runtime_(std::make_unique<LuaRuntime>(limits, now ? std::move(now) : steady_ms)) {
  lua_State* L = runtime_->state();
  install_sandbox(L);
  new_script_table(L);
}

Engine::~Engine() = default;

const Limits& Engine::limits() const { return runtime_->limits(); }
std::size_t Engine::memory_bytes() const { return runtime_->used_bytes(); }

std::optional<ScriptReply> Engine::compile(std::string_view body, const std::string& sha) {
  if (shas_.count(sha) != 0) return std::nullopt;
  const std::string prefix = "ERR Error compiling script (new function): ";
  if (!body.empty() && body[0] == LUA_SIGNATURE[0])
    return ScriptReply::error(prefix + "binary chunks are not accepted");
  lua_State* L = runtime_->state();
  int status = 0;
  {
    LuaRuntime::Capped capped(*runtime_);
    status = luaL_loadbuffer(L, body.data(), body.size(), kChunkName);
  }
  if (status != 0) {
    std::string message = lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error";
    lua_settop(L, 0);
    if (status == LUA_ERRMEM) message = "out of memory";
    return ScriptReply::error(prefix + message);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kScripts);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, sha.c_str());
  lua_settop(L, 0);
  shas_.insert(sha);
  return std::nullopt;
}

ScriptReply Engine::load(std::string_view body) {
  std::string sha = sha1_hex(body);
  if (auto err = compile(body, sha)) return std::move(*err);
  return ScriptReply::bulk(std::move(sha));
}

bool Engine::exists(std::string_view sha) const {
  std::string buffer;
  return shas_.count(lower(sha, buffer)) != 0;
}

void Engine::flush() {
  lua_State* L = runtime_->state();
  new_script_table(L);
  shas_.clear();
  lua_gc(L, LUA_GCCOLLECT, 0);
}

ScriptReply Engine::eval(std::string_view body, std::span<const std::string_view> keys,
                         std::span<const std::string_view> args, CommandHost& host) {
  const std::string sha = sha1_hex(body);
  if (auto err = compile(body, sha)) return std::move(*err);
  return run(sha, keys, args, host);
}

ScriptReply Engine::eval_sha(std::string_view sha, std::span<const std::string_view> keys,
                             std::span<const std::string_view> args, CommandHost& host) {
  std::string buffer;
  const std::string_view name = lower(sha, buffer);
  if (shas_.count(name) == 0)
    return ScriptReply::error("NOSCRIPT No matching script. Please use EVAL.");
  return run(name, keys, args, host);
}

ScriptReply Engine::run(std::string_view sha, std::span<const std::string_view> keys,
                        std::span<const std::string_view> args, CommandHost& host) {
  lua_State* L = runtime_->state();
  LuaRuntime& runtime = *runtime_;
  set_keys_and_args(L, keys, args);
  lua_getfield(L, LUA_REGISTRYINDEX, kScripts);
  lua_pushlstring(L, sha.data(), sha.size());
  lua_rawget(L, -2);
  lua_remove(L, -2);
  runtime.host = &host;
  runtime.begin_run();
  const int status = lua_pcall(L, 0, 1, 0);
  runtime.end_run();
  runtime.host = nullptr;

  ScriptReply reply;
  const Limits& limits = runtime.limits();
  if (status == 0) {
    reply = to_script_reply(L, -1, limits.memory_bytes);
  } else if (runtime.stopped()) {
    reply = ScriptReply::error("ERR script stopped: ran longer than " +
                               std::to_string(limits.time_ms) + " ms");
  } else if (status == LUA_ERRMEM) {
    reply = ScriptReply::error("ERR script stopped: out of memory (the scripts' limit is " +
                               std::to_string(limits.memory_bytes) + " bytes)");
  } else if (lua_istable(L, -1)) {
    // An error table: a failed redis.call, or error(redis.error_reply(...)).
    lua_getfield(L, -1, "err");
    if (lua_type(L, -1) == LUA_TSTRING) {
      reply = ScriptReply::error(lua_tostring(L, -1));
    } else {
      reply = ScriptReply::error("ERR Error running script (call to f_" + std::string(sha) +
                                 "): the error is a table without err");
    }
  } else {
    const char* message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "unknown error";
    reply = ScriptReply::error("ERR Error running script (call to f_" + std::string(sha) +
                               "): " + message);
  }
  reset_sandbox(L, runtime.used_bytes(), limits.memory_bytes / 2);
  return reply;
}

}  // namespace holdfast::script
