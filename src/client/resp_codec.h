// The client side of RESP: encoding commands and parsing replies of either protocol version.
//
// Commands go out as arrays of bulk strings (never inline), so any byte is safe in a key,
// owner or token. Replies are parsed into a small tree. A ReplyFramer first finds where a reply
// ends, resuming its scan as more bytes arrive, and parse_reply() then builds the tree once: a
// page of 10 000 holds (2.5 MB) that arrives in 16 KiB pieces is not parsed 150 times over.
// Malformed input throws ProtocolError; the connection is then unusable.
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

// Where the first reply in a growing buffer ends, found without building it. Each call resumes
// where the last one stopped, so the buffer must keep what the last call saw and only grow.
class ReplyFramer {
 public:
  // The length of the first complete reply in `buffer`, or 0 while it is incomplete. Throws
  // ProtocolError on framing that no reply has (an unknown type byte, a bad length, nesting
  // deeper than parse_reply() accepts).
  std::size_t complete_length(std::string_view buffer);
  // Starts over, for a buffer whose first reply has been taken out.
  void reset();

 private:
  // Counts one finished value; true when it finished the reply.
  bool finish_value();

  struct Open {
    std::int64_t remaining;  // values still expected in this aggregate
    bool attribute;          // an attribute map: the value it annotates follows it
  };
  std::size_t pos_ = 0;
  std::vector<Open> open_;
};

// One complete reply from the front of `buffer`, or nullopt when more bytes are needed.
// Throws ProtocolError on malformed input.
std::optional<ParseOutcome> parse_reply(std::string_view buffer);

}  // namespace holdfast::inline v0::client_internal
