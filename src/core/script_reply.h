// ScriptReply: what a Lua script answers (EVAL, EVALSHA), as data. The script engine
// (script/) makes it from the script's return value by Redis's conversion rules; the RESP
// front end writes it in the connection's protocol. A value of the service layer's answers
// (service/lock_service.h), so a script's reply travels like any other answer: in order, and
// only once what the script changed is durable.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace holdfast {

struct ScriptReply {
  enum class Kind : std::uint8_t { kNil, kInteger, kBulk, kStatus, kError, kArray };
  Kind kind = Kind::kNil;
  std::int64_t integer = 0;        // kInteger
  std::string text;                // kBulk; kStatus and kError: the line (no '+' or '-')
  std::vector<ScriptReply> items;  // kArray

  static ScriptReply nil() { return {}; }
  static ScriptReply number(std::int64_t n) { return {Kind::kInteger, n, {}, {}}; }
  static ScriptReply bulk(std::string s) { return {Kind::kBulk, 0, std::move(s), {}}; }
  static ScriptReply status(std::string s) { return {Kind::kStatus, 0, std::move(s), {}}; }
  // `line` is a Redis error line: its code, a space, the message ("NOSCRIPT No matching ...").
  static ScriptReply error(std::string line) { return {Kind::kError, 0, std::move(line), {}}; }
  bool is_error() const { return kind == Kind::kError; }
};

}  // namespace holdfast
