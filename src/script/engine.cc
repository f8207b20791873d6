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

}  // namespace

Engine::Engine(Limits limits, std::function<Millis()> now)
    : runtime_(std::make_unique<LuaRuntime>(limits, now ? std::move(now) : steady_ms)) {
  sandbox_ = install_sandbox(runtime_->state());
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
  shas_.emplace(sha, luaL_ref(L, LUA_REGISTRYINDEX));
  lua_settop(L, 0);
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
  for (const auto& [sha, ref] : shas_) luaL_unref(L, LUA_REGISTRYINDEX, ref);
  shas_.clear();
  lua_gc(L, LUA_GCCOLLECT, 0);
}

ScriptReply Engine::eval(std::string_view body, std::span<const std::string_view> keys,
                         std::span<const std::string_view> args, CommandHost& host) {
  const std::string sha = sha1_hex(body);
  if (auto err = compile(body, sha)) return std::move(*err);
  return run(*shas_.find(sha), keys, args, host);
}

ScriptReply Engine::eval_sha(std::string_view sha, std::span<const std::string_view> keys,
                             std::span<const std::string_view> args, CommandHost& host) {
  std::string buffer;
  const auto found = shas_.find(lower(sha, buffer));
  if (found == shas_.end())
    return ScriptReply::error("NOSCRIPT No matching script. Please use EVAL.");
  return run(*found, keys, args, host);
}

ScriptReply Engine::run(const Scripts::value_type& script, std::span<const std::string_view> keys,
                        std::span<const std::string_view> args, CommandHost& host) {
  const std::string& sha = script.first;
  lua_State* L = runtime_->state();
  LuaRuntime& runtime = *runtime_;
  set_keys_and_args(L, sandbox_, keys, args);
  lua_rawgeti(L, LUA_REGISTRYINDEX, script.second);
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
      reply = ScriptReply::error("ERR Error running script (call to f_" + sha +
                                 "): the error is a table without err");
    }
  } else {
    const char* message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "unknown error";
    reply = ScriptReply::error("ERR Error running script (call to f_" + sha + "): " + message);
  }
  reset_sandbox(L, sandbox_, limits.memory_bytes / 2);
  return reply;
}

}  // namespace holdfast::script
