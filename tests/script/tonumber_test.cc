// The sandbox's tonumber (a fast path for plain decimal strings) answers exactly what Lua
// 5.1's own tonumber answers: each input is read by a script in the engine and by the same
// script in a bare Lua state with the original library, and the two answers are compared as
// text ("%.17g", the sign of a zero through 1/v, nil, or the error message).
#include <gtest/gtest.h>

#include <string>
#include <vector>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include "script/engine.h"
#include "script_host.h"

namespace holdfast::script {
namespace {

// Describes tonumber(...) of ARGV: "nil", "<%.17g>/<1/v>", or "error: <message>".
constexpr const char* kDescribe = R"(
  local ok, v = pcall(tonumber, unpack(ARGV))
  if not ok then
    local message = string.gsub(v, '^.*: bad', 'bad')
    return 'error: ' .. message
  end
  if v == nil then return 'nil' end
  return string.format('%.17g', v) .. '/' .. tostring(1 / v))";

// The same script in a bare Lua 5.1 state: the original tonumber.
std::string original(const std::vector<std::string_view>& args) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  lua_createtable(L, static_cast<int>(args.size()), 0);
  int i = 0;
  for (std::string_view a : args) {
    lua_pushlstring(L, a.data(), a.size());
    lua_rawseti(L, -2, ++i);
  }
  lua_setglobal(L, "ARGV");
  std::string out;
  if (luaL_loadstring(L, kDescribe) != 0 || lua_pcall(L, 0, 1, 0) != 0) {
    out = std::string("lua failed: ") + lua_tostring(L, -1);
  } else {
    std::size_t n = 0;
    const char* s = lua_tolstring(L, -1, &n);
    out.assign(s, n);
  }
  lua_close(L);
  return out;
}

std::string sandboxed(Engine& engine, const std::vector<std::string_view>& args) {
  ScriptHost host;
  const ScriptReply r = eval(engine, kDescribe, host, {}, args);
  return r.is_error() ? "script failed: " + r.text : r.text;
}

TEST(SandboxTonumber, AnswersAsLuasOwnForEveryKindOfInput) {
  Engine engine;
  const std::vector<std::string> inputs = {"0",
                                           "-0",
                                           "7",
                                           "-7",
                                           "12",
                                           "007",
                                           "-007",
                                           "1700000000000",
                                           "-1700000000000",
                                           "999999999999999",
                                           "-999999999999999",
                                           "1000000000000000",
                                           "9007199254740993",
                                           "123456789012345678901234567890",
                                           "0x10",
                                           "0X1f",
                                           "-0x10",
                                           " 12",
                                           "12 ",
                                           " 12 ",
                                           "\t5\n",
                                           "+5",
                                           "+0",
                                           "-",
                                           "+",
                                           "",
                                           " ",
                                           "1e3",
                                           "1E3",
                                           "-1e-3",
                                           "1.5",
                                           ".5",
                                           "5.",
                                           "-.5",
                                           "1e999",
                                           "-1e999",
                                           "nan",
                                           "NaN",
                                           "-nan",
                                           "inf",
                                           "-inf",
                                           "infinity",
                                           "1,5",
                                           "12abc",
                                           "abc",
                                           "--1",
                                           "1-",
                                           "0000000000000001",
                                           std::string("12\0"
                                                       "34",
                                                       5),
                                           std::string("\0", 1),
                                           "٣"};
  for (const std::string& input : inputs) {
    const std::vector<std::string_view> args = {input};
    EXPECT_EQ(sandboxed(engine, args), original(args)) << "tonumber('" << input << "')";
  }
}

TEST(SandboxTonumber, FastPathGivesExactNumbersAndSignedZero) {
  Engine engine;
  EXPECT_EQ(sandboxed(engine, {"1700000000123"}).rfind("1700000000123/", 0), 0u);
  EXPECT_EQ(sandboxed(engine, {"-42"}).rfind("-42/", 0), 0u);
  EXPECT_EQ(sandboxed(engine, {"-0"}), "-0/-inf");
  EXPECT_EQ(sandboxed(engine, {"0"}), "0/inf");
}

TEST(SandboxTonumber, BasesAndMissingArgumentsAreLuasOwn) {
  Engine engine;
  for (const std::vector<std::string_view>& args : std::vector<std::vector<std::string_view>>{
           {}, {"ff", "16"}, {"12", "10"}, {"12", "8"}, {"z", "36"}, {"12", "99"}, {"12", "x"}}) {
    EXPECT_EQ(sandboxed(engine, args), original(args)) << args.size();
  }
  ScriptHost host;
  const ScriptReply r = eval(engine, "return tonumber()", host);
  ASSERT_TRUE(r.is_error());
  EXPECT_NE(r.text.find("bad argument #1 to 'tonumber' (value expected)"), std::string::npos)
      << r.text;
}

TEST(SandboxTonumber, NumbersAndOtherTypesAreLuasOwn) {
  Engine engine;
  ScriptHost host;
  EXPECT_EQ(eval(engine, "return tonumber(42)", host).integer, 42);
  EXPECT_EQ(eval(engine, "if tonumber({}) == nil and tonumber(true) == nil then return 1 end", host)
                .integer,
            1);
}

}  // namespace
}  // namespace holdfast::script
