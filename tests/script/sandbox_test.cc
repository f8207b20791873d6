// Attempts to get out of the sandbox, each refused with a clear error, and the engine still
// running scripts afterwards: no os, io, file loading or bytecode; no globals; a runaway loop
// stopped by the time limit (even when it catches the error); unbounded allocation stopped by
// the memory cap; nothing one script changes reaches the next.
#include <gtest/gtest.h>

#include "script/engine.h"
#include "script_host.h"

namespace holdfast::script {
namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// The engine answers scripts normally after whatever came before.
void still_serves(Engine& engine) {
  ScriptHost host;
  ScriptReply r = eval(engine, "return redis.call('ping')", host);
  EXPECT_EQ(r.kind, ScriptReply::Kind::kStatus) << r.text;
  EXPECT_EQ(r.text, "OK");
}

class Sandbox : public ::testing::Test {
 protected:
  ScriptReply run(std::string_view body) { return eval(engine, body, host); }
  ScriptHost host;
  Engine engine;
};

TEST_F(Sandbox, NoOsNoIoNoFileLoading) {
  for (const char* body : {"os.execute('touch /tmp/holdfast-pwned')", "io.open('/etc/passwd')",
                           "dofile('/etc/passwd')", "loadfile('/etc/passwd')", "require('os')",
                           "debug.getregistry()", "package.loadlib('x', 'y')"}) {
    ScriptReply r = run(body);
    ASSERT_TRUE(r.is_error()) << body;
    EXPECT_NE(r.text.find("Script attempted to access nonexistent global variable"),
              std::string::npos)
        << body << ": " << r.text;
  }
  still_serves(engine);
}

TEST_F(Sandbox, BytecodeIsRefusedByLoadstringAndByEval) {
  ScriptReply r = run(R"(
    local f, err = loadstring("\27Lua\81\0\1\4\4\4\8\0")
    if f then return "loaded" end
    return err)");
  EXPECT_EQ(r.text, "loadstring: binary chunks are not accepted");
  r = run("return string.dump(function() end)");
  EXPECT_TRUE(r.is_error()) << r.text;  // string.dump is gone: no bytecode to start from
  r = run(std::string("\x1bLua\x51", 5));
  EXPECT_EQ(r.text, "ERR Error compiling script (new function): binary chunks are not accepted");
  r = run("return loadstring('return 6 * 7')()");  // source text still loads
  EXPECT_EQ(r.integer, 42);
  still_serves(engine);
}

TEST_F(Sandbox, ScriptsCannotCreateOrChangeGlobals) {
  ScriptReply r = run("x = 1");
  EXPECT_NE(r.text.find("Script attempted to create global variable 'x'"), std::string::npos)
      << r.text;
  r = run("function helper() end");
  EXPECT_NE(r.text.find("Script attempted to create global variable 'helper'"), std::string::npos)
      << r.text;
  for (const char* body : {"redis = nil", "tostring = nil", "redis.call = function() end",
                           "string.rep = nil", "_G.type = nil"}) {
    r = run(body);
    EXPECT_NE(r.text.find("Attempt to modify a readonly table"), std::string::npos)
        << body << ": " << r.text;
  }
  r = run("return getmetatable(_G)");
  EXPECT_EQ(r.kind, ScriptReply::Kind::kNil);
  r = run("setmetatable(_G, nil)");
  EXPECT_TRUE(r.is_error());
  r = run("return getfenv");
  EXPECT_TRUE(r.is_error());
  still_serves(engine);
}

TEST_F(Sandbox, WhatAScriptSlipsIntoTheReadOnlyTablesDoesNotReachTheNextScript) {
  ScriptReply r = run(R"(
    rawset(_G, "smuggled", 1)
    rawset(redis, "call", function() return "fake" end)
    table.insert(string, "x")
    return smuggled)");
  EXPECT_EQ(r.integer, 1);  // inside its own run, rawset works, as in Redis 6
  r = run("return rawget(_G, 'smuggled')");
  EXPECT_EQ(r.kind, ScriptReply::Kind::kNil);
  r = run("return string[1]");
  EXPECT_EQ(r.kind, ScriptReply::Kind::kNil);
  still_serves(engine);  // redis.call is the real one again
}

TEST_F(Sandbox, PrintDoesNothing) { EXPECT_EQ(run("print('hello'); return 1").integer, 1); }

TEST(SandboxLimits, ARunawayLoopIsStoppedAtTheTimeLimit) {
  TickingClock clock;
  Engine engine(Limits{50, kDefaultMemoryBytes}, [&clock] { return clock(); });
  ScriptHost host;
  ScriptReply r = eval(engine, "while true do end", host);
  EXPECT_EQ(r.text, "ERR script stopped: ran longer than 50 ms");
  still_serves(engine);
}

TEST(SandboxLimits, CatchingTheStopWithPcallDoesNotKeepTheScriptRunning) {
  TickingClock clock;
  Engine engine(Limits{50, kDefaultMemoryBytes}, [&clock] { return clock(); });
  ScriptHost host;
  ScriptReply r = eval(engine, R"(
    while true do
      pcall(function() while true do end end)
    end)",
                       host);
  EXPECT_EQ(r.text, "ERR script stopped: ran longer than 50 ms");
  r = eval(engine, R"(
    local co = coroutine.create(function() while true do end end)
    while true do coroutine.resume(co) end)",
           host);
  EXPECT_EQ(r.text, "ERR script stopped: ran longer than 50 ms");
  still_serves(engine);
}

TEST(SandboxLimits, UnboundedAllocationIsStoppedAtTheMemoryCap) {
  Engine engine(Limits{kDefaultTimeLimitMs, 8 << 20});
  ScriptHost host;
  ScriptReply r = eval(engine, R"(
    local t = {}
    local i = 0
    while true do
      i = i + 1
      t[i] = string.rep("x", 1024) .. i
    end)",
                       host);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.text, "ERR script stopped: out of memory (the scripts' limit is 8388608 bytes)");
  r = eval(engine, "return string.rep('x', 100 * 1024 * 1024)", host);
  EXPECT_TRUE(starts_with(r.text, "ERR script stopped: out of memory")) << r.text;
  // Caught inside the script, the refusal is an ordinary error the script may act on.
  r = eval(engine, "local ok, err = pcall(string.rep, 'x', 100 * 1024 * 1024); return err", host);
  EXPECT_EQ(r.text, "not enough memory");
  EXPECT_LT(engine.memory_bytes(), std::size_t{8} << 20);
  still_serves(engine);
}

TEST(SandboxLimits, AScriptThatStopsTheCollectorDoesNotStopItForTheNext) {
  Engine engine(Limits{kDefaultTimeLimitMs, 8 << 20});
  ScriptHost host;
  for (const char* settings : {"collectgarbage('stop')", "collectgarbage('setpause', 100000)",
                               "collectgarbage('setstepmul', 1)"}) {
    ScriptReply r = eval(engine, std::string(settings) + "; return 1", host);
    ASSERT_EQ(r.integer, 1) << r.text;
    // 32 MiB of garbage, 16 KiB at a time, under a cap of 8 MiB: the collector must run.
    r = eval(engine, R"(
      for i = 1, 2048 do local s = string.rep("y", 16 * 1024) .. i end
      return collectgarbage('count') < 8 * 1024)",
             host);
    EXPECT_EQ(r.kind, ScriptReply::Kind::kInteger) << settings << ": " << r.text;
    EXPECT_EQ(r.integer, 1) << settings;
  }
  still_serves(engine);
}

TEST(SandboxLimits, DeepRecursionIsAnErrorNotACrash) {
  Engine engine;
  ScriptHost host;
  ScriptReply r = eval(engine, "local function f(n) return f(n + 1) + 1 end return f(1)", host);
  ASSERT_TRUE(r.is_error());
  EXPECT_NE(r.text.find("stack overflow"), std::string::npos) << r.text;
  r = eval(engine, "local t = {} t[1] = t return t", host);
  EXPECT_EQ(r.text, "ERR reached lua stack limit");
  still_serves(engine);
}

}  // namespace
}  // namespace holdfast::script
