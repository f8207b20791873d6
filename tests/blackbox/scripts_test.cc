// EVAL, EVALSHA and SCRIPT against the real server: the compare-and-delete release the Redis
// lock libraries send, EVALSHA after SCRIPT LOAD and the NOSCRIPT fallback, a script's change
// surviving kill -9 once answered, and escapes from the sandbox refused while the server keeps
// serving. The suite runs on a node over PostgreSQL too, where a script is one database
// transaction.
#include <gtest/gtest.h>

#include <string>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

// redis-py's Lock release script (compare-and-delete).
const std::string kRelease = R"(
local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then
    return 0
end
redis.call('del', KEYS[1])
return 1
)";

class Scripts : public ::testing::Test {
 protected:
  // The server still answers, and still takes and frees keys.
  void still_serves() {
    auto c = server.client();
    EXPECT_EQ(c.call({"PING"}).str, "PONG");
    EXPECT_EQ(c.call({"SET", "scripts:alive", "x", "NX", "PX", "60000"}).str, "OK");
    EXPECT_EQ(c.call({"DEL", "scripts:alive"}).integer, 1);
  }
  ServerProcess server{{"--script-time-limit-ms", "200"}};
};

TEST_F(Scripts, CompareAndDeleteFreesTheKeyOnlyForTheTokenThatTookIt) {
  auto c = server.client();
  ASSERT_EQ(c.call({"SET", "scripts:cad", "token-1", "NX", "PX", "60000"}).str, "OK");
  auto wrong = c.call({"EVAL", kRelease, "1", "scripts:cad", "token-2"});
  EXPECT_EQ(wrong.integer, 0) << wrong.debug();
  EXPECT_EQ(c.call({"LOCK.STATUS", "scripts:cad"}).number("held"), 1);
  EXPECT_EQ(c.call({"EVAL", kRelease, "1", "scripts:cad", "token-1"}).integer, 1);
  EXPECT_EQ(c.call({"LOCK.STATUS", "scripts:cad"}).number("held"), 0);
  EXPECT_EQ(c.call({"EVAL", kRelease, "1", "scripts:cad", "token-1"}).integer, 0);
}

TEST_F(Scripts, EvalShaRunsALoadedScriptAndAnUnknownShaAnswersNoscript) {
  auto c = server.client();
  auto sha = c.call({"SCRIPT", "LOAD", kRelease});
  auto unknown = c.call({"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"});
  ASSERT_EQ(sha.type, RespValue::Type::kBulk) << sha.debug();
  EXPECT_EQ(sha.str.size(), 40u);
  EXPECT_EQ(unknown.str, "NOSCRIPT No matching script. Please use EVAL.");
  ASSERT_EQ(c.call({"SET", "scripts:sha", "t", "NX", "PX", "60000"}).str, "OK");
  EXPECT_EQ(c.call({"EVALSHA", sha.str, "1", "scripts:sha", "t"}).integer, 1);
  auto exists = c.call({"SCRIPT", "EXISTS", sha.str, "0000000000000000000000000000000000000000"});
  ASSERT_EQ(exists.items.size(), 2u);
  EXPECT_EQ(exists.items[0].integer, 1);
  EXPECT_EQ(exists.items[1].integer, 0);
  EXPECT_EQ(c.call({"SCRIPT", "FLUSH"}).str, "OK");
  EXPECT_EQ(c.call({"EVALSHA", sha.str, "1", "scripts:sha", "t"}).error_code(), "NOSCRIPT");
  EXPECT_EQ(c.call({"SCRIPT", "KILL"}).str, "NOTBUSY No scripts in execution right now.");
}

TEST_F(Scripts, AScriptTakesKeysAsHoldsWithTokensAndTheReplyFollowsTheLog) {
  auto c = server.client();
  // node redlock's acquire script: every key, or none.
  const std::string acquire = R"(
    for i, key in ipairs(KEYS) do
      if redis.call("exists", key) == 1 then return 0 end
    end
    for i, key in ipairs(KEYS) do
      redis.call("set", key, ARGV[1], "PX", ARGV[2])
    end
    return #KEYS)";
  EXPECT_EQ(c.call({"EVAL", acquire, "2", "scripts:a", "scripts:b", "v1", "60000"}).integer, 2);
  auto status = c.call({"LOCK.STATUS", "scripts:a"});
  EXPECT_EQ(status.number("held"), 1);
  EXPECT_EQ(status.text("owner"), "v1");
  EXPECT_GT(status.number("token"), 0);
  EXPECT_EQ(c.call({"EVAL", acquire, "2", "scripts:b", "scripts:c", "v2", "60000"}).integer, 0);
  EXPECT_EQ(c.call({"EXISTS", "scripts:c"}).integer, 0);
  // Answered with --fsync always, the script's grants are on disk.
  server.kill9();
  server.start();
  auto after = server.client();
  EXPECT_EQ(after.call({"GET", "scripts:a"}).str, "v1");
  EXPECT_EQ(after.call({"GET", "scripts:b"}).str, "v1");
}

TEST_F(Scripts, CommandsAScriptMayNotRunAreRefusedByName) {
  auto c = server.client();
  EXPECT_EQ(c.call({"EVAL", "return redis.call('MULTI')", "0"}).str,
            "ERR This Redis command is not allowed from script");
  EXPECT_EQ(c.call({"EVAL", "return redis.call('EVAL', 'return 1', 0)", "0"}).str,
            "ERR This Redis command is not allowed from script");
  EXPECT_EQ(c.call({"EVAL", "return redis.call('FLUSHALL')", "0"}).str,
            "ERR Unknown Redis command called from script");
  EXPECT_EQ(c.call({"EVAL", "return redis.call('GET')", "0"}).str,
            "ERR Wrong number of args calling Redis command from script");
  EXPECT_EQ(c.call({"EVAL", "return 1", "-1"}).str, "ERR Number of keys can't be negative");
  // A blocking acquire inside a script makes one attempt.
  ASSERT_EQ(c.call({"SET", "scripts:busy", "x", "NX", "PX", "60000"}).str, "OK");
  auto other = server.client();
  EXPECT_EQ(other
                .call({"EVAL",
                       "return redis.call('LOCK.ACQUIRE', KEYS[1], 'TTL', 1000, 'TIMEOUT', 60000)",
                       "1", "scripts:busy"})
                .str,
            "LOCK_TIMEOUT no grant within the timeout key=scripts:busy timeoutMs=0");
}

TEST_F(Scripts, SandboxEscapesAreRefusedAndTheServerKeepsServing) {
  auto c = server.client();
  struct Attempt {
    std::string body;
    std::string error_has;
  };
  const Attempt attempts[] = {
      {"return os.execute('touch /tmp/holdfast-script-escape')",
       "Script attempted to access nonexistent global variable 'os'"},
      {"return io.open('/etc/passwd'):read('*a')",
       "Script attempted to access nonexistent global variable 'io'"},
      {"local f, err = loadstring('\\27Lua\\81\\0') if f then return f() end return "
       "redis.error_reply('ERR ' .. err)",
       "loadstring: binary chunks are not accepted"},
      {"while true do end", "ERR script stopped: ran longer than 200 ms"},
      {"local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 1048576) .. i end",
       "ERR script stopped: out of memory"},
      {"leaked = true", "Script attempted to create global variable 'leaked'"},
  };
  for (const Attempt& a : attempts) {
    auto r = c.call({"EVAL", a.body, "0"}, 30000);
    ASSERT_TRUE(r.is_error()) << a.body << ": " << r.debug();
    EXPECT_NE(r.str.find(a.error_has), std::string::npos) << a.body << ": " << r.str;
    still_serves();
  }
}

}  // namespace
}  // namespace holdfast::testing
