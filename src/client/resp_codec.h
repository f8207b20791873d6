// The client side of RESP: encoding commands and parsing replies of either protocol version.
//
// Commands go out as arrays of bulk strings (never inline), so any byte is safe in a key,
// owner or token. Replies are parsed into a small tree. The parser is incremental in the
// simplest way: parse_reply() is given everything received so far and either returns one
// complete reply with the bytes it used, or says "need more" (replies are small, so parsing
// again from the start when more bytes arrive costs little). Malformed input throws
// ProtocolError; the connection is then unusable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::inline v0::client_internal {

struct Reply {
  enum class Type { kSimple, kError, kInteger, kBulk, kNull, kArray, kMap, kBool, kDouble };
  Type type = Type::kNull;
  std::string str;           // simple, error, bulk, double (its text), big number (as bulk)
  std::int64_t integer = 0;  // integer, bool (0/1)
  std::vector<Reply> items;  // array; a map as key, value, key, value...

  bool is_null() const { return type == Type::kNull; }
  bool is_error() const { return type == Type::kError; }
  // Field lookup in a RESP3 map or a RESP2 flat key/value array; nullptr when absent.
  const Reply* field(std::string_view name) const;
  // A short rendering for error messages.
  std::string debug() const;
};

// *N\r\n$len\r\narg\r\n...
std::string encode_command(const std::vector<std::string>& args);

struct ParseOutcome {
  Reply reply;
  std::size_t consumed = 0;
};

// One complete reply from the front of `buffer`, or nullopt when more bytes are needed.
// Throws ProtocolError on malformed input.
std::optional<ParseOutcome> parse_reply(std::string_view buffer);

}  // namespace holdfast::inline v0::client_internal
