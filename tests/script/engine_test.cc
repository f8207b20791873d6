// The engine: the script cache (SCRIPT LOAD, EXISTS, FLUSH, EVALSHA and NOSCRIPT), KEYS and
// ARGV, redis.call and redis.pcall, error replies, and the scripts the Redis lock libraries send.
#include "script/engine.h"

#include <gtest/gtest.h>

#include "script/sha1.h"
#include "script_host.h"

namespace holdfast::script {
namespace {

using Kind = ScriptReply::Kind;

// redis-py's Lock release script (compare-and-delete).
constexpr std::string_view kRelease = R"(
local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then
    return 0
end
redis.call('del', KEYS[1])
return 1
)";

TEST(Engine, Sha1IsRedisScriptName) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}

TEST(Engine, LoadKeepsTheScriptUnderItsShaAndEvalShaRunsIt) {
  Engine engine;
  ScriptHost host;
  ScriptReply sha = engine.load("return 1");
  ASSERT_EQ(sha.kind, Kind::kBulk);
  EXPECT_EQ(sha.text, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  EXPECT_TRUE(engine.exists(sha.text));
  EXPECT_TRUE(engine.exists("E0E1F9FABFC9D4800C877A703B823AC0578FF8DB"));
  EXPECT_FALSE(engine.exists("0000000000000000000000000000000000000000"));
  ScriptReply r = engine.eval_sha(sha.text, {}, {}, host);
  EXPECT_EQ(r.kind, Kind::kInteger);
  EXPECT_EQ(r.integer, 1);
}

TEST(Engine, UnknownShaAnswersNoscriptAsRedisDoes) {
  Engine engine;
  ScriptHost host;
  ScriptReply r = engine.eval_sha("ffffffffffffffffffffffffffffffffffffffff", {}, {}, host);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.text, "NOSCRIPT No matching script. Please use EVAL.");
}

TEST(Engine, EvalKeepsTheScriptAndFlushForgetsEveryScript) {
  Engine engine;
  ScriptHost host;
  EXPECT_EQ(eval(engine, "return 'x'", host).text, "x");
  const std::string sha = sha1_hex("return 'x'");
  EXPECT_TRUE(engine.exists(sha));
  EXPECT_EQ(engine.scripts(), 1u);
  engine.flush();
  EXPECT_FALSE(engine.exists(sha));
  EXPECT_EQ(engine.eval_sha(sha, {}, {}, host).text.substr(0, 8), "NOSCRIPT");
}

TEST(Engine, ASyntaxErrorIsACompileErrorAndNothingIsKept) {
  Engine engine;
  ScriptHost host;
  ScriptReply r = engine.load("return +");
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.text.rfind("ERR Error compiling script (new function): user_script:1:", 0), 0u)
      << r.text;
  EXPECT_EQ(engine.scripts(), 0u);
}

TEST(Engine, KeysAndArgvAreTheArgumentsOfThisRun) {
  Engine engine;
  ScriptHost host;
  ScriptReply r =
      eval(engine, "return {KEYS[1], KEYS[2], ARGV[1], #KEYS, #ARGV}", host, {"a", "b"}, {"x"});
  ASSERT_EQ(r.kind, Kind::kArray);
  ASSERT_EQ(r.items.size(), 5u);
  EXPECT_EQ(r.items[0].text, "a");
  EXPECT_EQ(r.items[1].text, "b");
  EXPECT_EQ(r.items[2].text, "x");
  EXPECT_EQ(r.items[3].integer, 2);
  EXPECT_EQ(r.items[4].integer, 1);
  r = eval(engine, "return {#KEYS, #ARGV}", host);
  EXPECT_EQ(r.items[0].integer, 0);
  EXPECT_EQ(r.items[1].integer, 0);
}

// KEYS and ARGV are refilled between scripts: whatever one script did to them, the next finds
// its own arguments and nothing else.
TEST(Engine, WhatAScriptDidToKeysAndArgvIsGoneInTheNext) {
  Engine engine;
  ScriptHost host;
  const std::string_view changes[] = {
      "KEYS.extra = 'left'; return 1",                 // a field
      "KEYS[5] = 'left'; ARGV[3] = 'left'; return 1",  // elements past the end
      "setmetatable(KEYS, {__index = function() return 'left' end}); return 1",
      "table.insert(ARGV, 'left'); return 1",   // an element at the end
      "KEYS[1] = nil; ARGV[1] = 42; return 1",  // elements changed in place
  };
  const std::string_view look =
      "return {#KEYS, #ARGV, tostring(KEYS[1]), tostring(KEYS[2]), tostring(KEYS[5]), "
      "tostring(KEYS.extra), tostring(ARGV[1]), tostring(ARGV[2]), tostring(ARGV[3]), "
      "tostring(getmetatable(KEYS))}";
  for (std::string_view change : changes) {
    SCOPED_TRACE(change);
    ASSERT_EQ(eval(engine, change, host, {"a", "b"}, {"x", "y"}).integer, 1);
    ScriptReply r = eval(engine, look, host, {"k"}, {"v"});
    ASSERT_EQ(r.kind, Kind::kArray);
    std::vector<std::string> seen;
    for (const ScriptReply& item : r.items)
      seen.push_back(item.kind == Kind::kInteger ? std::to_string(item.integer) : item.text);
    EXPECT_EQ(seen, (std::vector<std::string>{"1", "1", "k", "nil", "nil", "nil", "v", "nil", "nil",
                                              "nil"}));
  }
}

TEST(Engine, CompareAndDeleteReleasesOnlyWithTheRightToken) {
  Engine engine;
  ScriptHost host;
  host.replies = {"$5\r\nmine!\r\n"};
  EXPECT_EQ(eval(engine, kRelease, host, {"lock:1"}, {"theirs"}).integer, 0);
  ASSERT_EQ(host.calls.size(), 1u);
  EXPECT_EQ(host.calls[0], (std::vector<std::string>{"get", "lock:1"}));
  host.calls.clear();
  host.replies = {"$5\r\nmine!\r\n", ":1\r\n"};
  EXPECT_EQ(eval(engine, kRelease, host, {"lock:1"}, {"mine!"}).integer, 1);
  ASSERT_EQ(host.calls.size(), 2u);
  EXPECT_EQ(host.calls[1], (std::vector<std::string>{"del", "lock:1"}));
  host.calls.clear();
  host.replies = {"$-1\r\n"};  // a free key: GET answers nil, which the script sees as false
  EXPECT_EQ(eval(engine, kRelease, host, {"lock:1"}, {"mine!"}).integer, 0);
}

TEST(Engine, RedlockStyleLoopsSetEachKeyWithNumbersAsIntegers) {
  Engine engine;
  ScriptHost host;
  host.replies = {"+OK\r\n", "$-1\r\n"};
  ScriptReply r = eval(engine, R"(
    for i, key in ipairs(KEYS) do
      if not redis.call("set", key, ARGV[1], "NX", "PX", tonumber(ARGV[2])) then
        return 0
      end
    end
    return #KEYS)",
                       host, {"a", "b"}, {"v", "30000"});
  EXPECT_EQ(r.integer, 0);
  ASSERT_EQ(host.calls.size(), 2u);
  EXPECT_EQ(host.calls[0], (std::vector<std::string>{"set", "a", "v", "NX", "PX", "30000"}));
}

TEST(Engine, ACommandErrorEndsTheScriptWithThatErrorUnlessPcallCatchesIt) {
  Engine engine;
  ScriptHost host;
  host.replies = {"-ERR Unknown Redis command called from script\r\n"};
  ScriptReply r = eval(engine, "redis.call('nope'); return 1", host);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.text, "ERR Unknown Redis command called from script");
  host.replies = {"-LOCK_HELD the key is held key=k\r\n"};
  r = eval(engine, "local e = redis.pcall('LOCK.ASSIGN', 'k', 'x'); return e.err", host);
  EXPECT_EQ(r.kind, Kind::kBulk);
  EXPECT_EQ(r.text, "LOCK_HELD the key is held key=k");
}

TEST(Engine, CallArgumentsMustBeStringsOrNumbers) {
  Engine engine;
  ScriptHost host;
  ScriptReply r = eval(engine, "return redis.call('get', {})", host);
  EXPECT_EQ(r.text, "ERR Lua redis lib command arguments must be strings or integers");
  r = eval(engine, "return redis.call()", host);
  EXPECT_EQ(r.text, "ERR Please specify at least one argument for this redis lib call");
  EXPECT_TRUE(host.calls.empty());
  r = eval(engine, "return redis.call('x', 1.5, 7)", host);
  ASSERT_EQ(host.calls.size(), 1u);
  EXPECT_EQ(host.calls[0], (std::vector<std::string>{"x", "1.5", "7"}));
}

TEST(Engine, ReplyHelpersAndSha1hex) {
  Engine engine;
  ScriptHost host;
  ScriptReply r = eval(engine, "return redis.error_reply('MY_CODE went wrong')", host);
  EXPECT_TRUE(r.is_error());
  EXPECT_EQ(r.text, "MY_CODE went wrong");
  r = eval(engine, "return redis.error_reply('-ERR dashed')", host);
  EXPECT_EQ(r.text, "ERR dashed");
  r = eval(engine, "return redis.status_reply('FINE')", host);
  EXPECT_EQ(r.kind, Kind::kStatus);
  EXPECT_EQ(r.text, "FINE");
  r = eval(engine, "return redis.sha1hex('')", host);
  EXPECT_EQ(r.text, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  r = eval(engine, "error(redis.error_reply('OOPS raised'))", host);
  EXPECT_EQ(r.text, "OOPS raised");
  r = eval(engine, "redis.log(redis.LOG_WARNING, 'hello', 1); return redis.replicate_commands()",
           host);
  EXPECT_EQ(r.integer, 1);
}

TEST(Engine, ALuaErrorNamesTheScriptAndTheLine) {
  Engine engine;
  ScriptHost host;
  ScriptReply r = eval(engine, "local x = nil\nreturn x.field", host);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.text.rfind("ERR Error running script (call to f_" +
                             sha1_hex("local x = nil\nreturn x.field") + "): user_script:2:",
                         0),
            0u)
      << r.text;
}

}  // namespace
}  // namespace holdfast::script
