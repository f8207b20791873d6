// Redis's conversion rules, both ways: a command's RESP2 reply as redis.call returns it to
// Lua, and the script's Lua value as EVAL answers it.
#include "script/conversions.h"

#include <gtest/gtest.h>

#include "script_host.h"

namespace holdfast::script {
namespace {

using Kind = ScriptReply::Kind;

class Conversions : public ::testing::Test {
 protected:
  // What the script answers after its one command answered `reply`.
  ScriptReply through(std::string reply, std::string_view body) {
    host.replies = {std::move(reply)};
    return eval(engine, body, host);
  }
  ScriptHost host;
  Engine engine;
};

TEST_F(Conversions, IntegerReplyIsALuaNumber) {
  EXPECT_EQ(through(":41\r\n", "return type(redis.call('x'))").text, "number");
  EXPECT_EQ(through(":41\r\n", "return redis.call('x') + 1").integer, 42);
}

TEST_F(Conversions, BulkIsAStringAndNilIsFalse) {
  EXPECT_EQ(through("$3\r\nabc\r\n", "return redis.call('x')").text, "abc");
  EXPECT_EQ(through("$-1\r\n", "return redis.call('x') == false").integer, 1);
  EXPECT_EQ(through("*-1\r\n", "return redis.call('x') == false").integer, 1);
}

TEST_F(Conversions, StatusAndErrorAreTablesWithOkAndErr) {
  EXPECT_EQ(through("+OK\r\n", "return redis.call('x').ok").text, "OK");
  EXPECT_EQ(through("-ERR no\r\n", "return redis.pcall('x').err").text, "ERR no");
  // Passed through, they answer as themselves.
  ScriptReply r = through("+QUEUED\r\n", "return redis.call('x')");
  EXPECT_EQ(r.kind, Kind::kStatus);
  EXPECT_EQ(r.text, "QUEUED");
}

TEST_F(Conversions, ArraysNestAsTables) {
  ScriptReply r = through("*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n$1\r\nz\r\n",
                          "local t = redis.call('x') return {t[1], t[2][1], t[2][2], t[3], #t}");
  ASSERT_EQ(r.kind, Kind::kArray);
  ASSERT_EQ(r.items.size(), 5u);
  EXPECT_EQ(r.items[0].integer, 1);
  EXPECT_EQ(r.items[1].text, "a");
  EXPECT_EQ(r.items[2].kind, Kind::kNil);  // false answers nil
  EXPECT_EQ(r.items[3].text, "z");
  EXPECT_EQ(r.items[4].integer, 3);
}

TEST_F(Conversions, LuaValuesAnswerAsRedisAnswersThem) {
  EXPECT_EQ(eval(engine, "return 3.99", host).integer, 3);  // truncated
  EXPECT_EQ(eval(engine, "return -3.99", host).integer, -3);
  EXPECT_EQ(eval(engine, "return 1e300", host).integer, INT64_MAX);
  EXPECT_EQ(eval(engine, "return true", host).integer, 1);
  EXPECT_EQ(eval(engine, "return false", host).kind, Kind::kNil);
  EXPECT_EQ(eval(engine, "return nil", host).kind, Kind::kNil);
  EXPECT_EQ(eval(engine, "return", host).kind, Kind::kNil);
  EXPECT_EQ(eval(engine, "return function() end", host).kind, Kind::kNil);
  ScriptReply r = eval(engine, "return {1, 'two', nil, 4}", host);  // up to the first nil
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[1].text, "two");
  r = eval(engine, "return {ok = 'fine', err = 'wins'}", host);  // err first, as in Redis
  EXPECT_EQ(r.kind, Kind::kError);
  r = eval(engine, "return {name = 'no array part'}", host);
  EXPECT_EQ(r.kind, Kind::kArray);
  EXPECT_TRUE(r.items.empty());
}

TEST_F(Conversions, ReplyIsReadRawSoNoMetamethodOfTheScriptRuns) {
  ScriptReply r =
      eval(engine, "return setmetatable({}, {__index = function() while true do end end})", host);
  EXPECT_EQ(r.kind, Kind::kArray);
  EXPECT_TRUE(r.items.empty());
}

TEST_F(Conversions, ATooLargeReplyIsAnError) {
  Engine small(Limits{kDefaultTimeLimitMs, 4 << 20});
  ScriptReply r = eval(small, R"(
    local t = {}
    local s = string.rep('y', 1024 * 1024)
    for i = 1, 16 do t[i] = s end
    return t)",
                       host);
  EXPECT_EQ(r.text, "ERR the script's reply is too large");
}

}  // namespace
}  // namespace holdfast::script
