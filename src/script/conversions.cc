#include "script/conversions.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

extern "C" {
#include <lua.h>
}

#include "client/resp_codec.h"
#include "holdfast/errors.h"

namespace holdfast::script {
namespace {

using client_internal::Reply;

void push_table_field(lua_State* L, const char* field, const std::string& text) {
  lua_createtable(L, 0, 1);
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, field);
}

void push_reply(lua_State* L, const Reply& r) {
  lua_checkstack(L, 4);
  switch (r.type) {
    case Reply::Type::kSimple:
      push_table_field(L, "ok", r.str);
      return;
    case Reply::Type::kError:
      push_table_field(L, "err", r.str);
      return;
    case Reply::Type::kInteger:
      lua_pushnumber(L, static_cast<lua_Number>(r.integer));
      return;
    case Reply::Type::kBool:
      lua_pushboolean(L, r.integer != 0);
      return;
    case Reply::Type::kBulk:
    case Reply::Type::kDouble:
      lua_pushlstring(L, r.str.data(), r.str.size());
      return;
    case Reply::Type::kNull:
      lua_pushboolean(L, 0);
      return;
    case Reply::Type::kArray:
    case Reply::Type::kMap: {  // a map as its flat key, value... array, as RESP2 sends it
      lua_createtable(L, static_cast<int>(r.items.size()), 0);
      int i = 0;
      for (const Reply& item : r.items) {
        push_reply(L, item);
        lua_rawseti(L, -2, ++i);
      }
      return;
    }
  }
  lua_pushboolean(L, 0);
}

// Lua numbers are doubles; Redis casts them, which is undefined past the range of int64.
std::int64_t to_integer(lua_Number n) {
  if (std::isnan(n)) return 0;
  if (n >= 9223372036854775807.0) return std::numeric_limits<std::int64_t>::max();
  if (n <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(n);
}

struct Converter {
  lua_State* L;
  std::size_t budget;
  bool too_big = false;
  bool too_deep = false;

  // The string field `name` of the table at `index`, if it is a string.
  std::optional<std::string_view> string_field(int index, const char* name) {
    lua_pushstring(L, name);
    lua_rawget(L, index);
    std::optional<std::string_view> out;
    if (lua_type(L, -1) == LUA_TSTRING) {
      std::size_t n = 0;
      const char* s = lua_tolstring(L, -1, &n);
      out = std::string_view(s, n);  // the table keeps the string alive
    }
    lua_pop(L, 1);
    return out;
  }

  bool spend(std::size_t bytes) {
    if (bytes > budget) {
      too_big = true;
      return false;
    }
    budget -= bytes;
    return true;
  }

  ScriptReply convert(int index, int depth) {
    if (!spend(sizeof(ScriptReply))) return {};
    switch (lua_type(L, index)) {
      case LUA_TSTRING: {
        std::size_t n = 0;
        const char* s = lua_tolstring(L, index, &n);
        if (!spend(n)) return {};
        return ScriptReply::bulk(std::string(s, n));
      }
      case LUA_TNUMBER:
        return ScriptReply::number(to_integer(lua_tonumber(L, index)));
      case LUA_TBOOLEAN:
        return lua_toboolean(L, index) ? ScriptReply::number(1) : ScriptReply::nil();
      case LUA_TTABLE:
        break;
      default:
        return ScriptReply::nil();
    }
    if (depth >= kMaxReplyDepth || !lua_checkstack(L, 3)) {
      too_deep = true;
      return {};
    }
    if (auto err = string_field(index, "err")) {
      if (!spend(err->size())) return {};
      return ScriptReply::error(std::string(*err));
    }
    if (auto ok = string_field(index, "ok")) {
      if (!spend(ok->size())) return {};
      return ScriptReply::status(std::string(*ok));
    }
    ScriptReply array;
    array.kind = ScriptReply::Kind::kArray;
    for (int i = 1;; ++i) {
      lua_rawgeti(L, index, i);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        break;
      }
      array.items.push_back(convert(lua_gettop(L), depth + 1));
      lua_pop(L, 1);
      if (too_big || too_deep) return {};
    }
    return array;
  }
};

// The replies most commands give (an integer, a bulk string or nil, a status or an error) read
// in place, with no parse into a Reply; false, with nothing pushed, for anything else (an
// array, a malformed reply), which push_resp() hands to the full parser.
bool push_single(lua_State* L, std::string_view resp) {
  if (resp.size() < 3 || !resp.ends_with("\r\n")) return false;
  const std::size_t eol = resp.find("\r\n");
  const std::string_view line = resp.substr(1, eol - 1);
  const bool one_line = eol + 2 == resp.size();
  switch (resp[0]) {
    case ':': {
      std::int64_t n = 0;
      const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), n);
      if (!one_line || ec != std::errc() || end != line.data() + line.size() || line.empty())
        return false;
      lua_pushnumber(L, static_cast<lua_Number>(n));
      return true;
    }
    case '$': {
      if (line == "-1") {
        if (!one_line) return false;
        lua_pushboolean(L, 0);
        return true;
      }
      std::size_t n = 0;
      const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), n);
      if (ec != std::errc() || end != line.data() + line.size() || line.empty()) return false;
      if (resp.size() - (eol + 2) != n + 2) return false;
      lua_pushlstring(L, resp.data() + eol + 2, n);
      return true;
    }
    case '+':
    case '-':
      if (!one_line || line.find('\n') != std::string_view::npos ||
          line.find('\r') != std::string_view::npos)
        return false;
      lua_checkstack(L, 2);
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, line.data(), line.size());
      lua_setfield(L, -2, resp[0] == '+' ? "ok" : "err");
      return true;
    default:
      return false;
  }
}

}  // namespace

bool push_resp(lua_State* L, std::string_view resp) {
  if (push_single(L, resp)) return true;
  std::optional<client_internal::ParseOutcome> parsed;
  try {
    parsed = client_internal::parse_reply(resp);
  } catch (const ProtocolError&) {
    return false;
  }
  if (!parsed || parsed->consumed != resp.size()) return false;
  push_reply(L, parsed->reply);
  return true;
}

ScriptReply to_script_reply(lua_State* L, int index, std::size_t max_bytes) {
  if (index < 0) index = lua_gettop(L) + index + 1;
  Converter c{L, max_bytes};
  ScriptReply reply = c.convert(index, 0);
  if (c.too_deep) return ScriptReply::error("ERR reached lua stack limit");
  if (c.too_big) return ScriptReply::error("ERR the script's reply is too large");
  return reply;
}

}  // namespace holdfast::script
