// RESP codec: the request parser (RESP2 multibulk and inline commands, as clients send them)
// and the reply writer (RESP2 or RESP3, chosen per connection by HELLO).
//
// The parser is zero-copy: a parsed command's arguments are views into the caller's buffer,
// valid until the caller moves or overwrites those bytes. It keeps no state between calls;
// an incomplete frame is parsed again from its start when more bytes arrive (only headers
// are scanned; bulk payloads are skipped by length, so a re-parse costs O(arguments)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::resp {

struct ParserLimits {
  std::size_t max_frame_bytes = 1 << 20;  // one command, all of it (a rule set fits)
  std::size_t max_args = 1024;
  std::size_t max_inline_bytes = 64 * 1024;
};

enum class ParseStatus { kComplete, kIncomplete, kError };

class RequestParser {
 public:
  explicit RequestParser(ParserLimits limits = {}) : limits_(limits) {}

  // Parses one command at the front of `data`. kComplete: args() holds it and *consumed
  // says how many bytes it took (an empty inline line is consumed with no args). kIncomplete:
  // nothing consumed; call again with more bytes. kError: error() says why; the stream cannot
  // be resynchronised and the connection must close.
  ParseStatus parse(std::string_view data, std::size_t* consumed);

  const std::vector<std::string_view>& args() const { return args_; }
  const std::string& error() const { return error_; }

 private:
  ParseStatus fail(std::string message);
  ParseStatus parse_inline(std::string_view data, std::size_t* consumed);

  ParserLimits limits_;
  std::vector<std::string_view> args_;
  std::string error_;
};

// Appends replies to a string, in the connection's protocol version (2 or 3).
class ReplyWriter {
 public:
  ReplyWriter(std::string& out, int proto) : out_(out), proto_(proto) {}

  int proto() const { return proto_; }
  void set_proto(int proto) { proto_ = proto; }
  void simple(std::string_view s);         // +OK
  void error_line(std::string_view line);  // -CODE message...  (no CR/LF inside)
  void integer(std::int64_t v);            // :42
  void bulk(std::string_view s);           // $3\r\nabc
  void null();                             // RESP3 _  | RESP2 $-1
  void null_array();                       // RESP3 _  | RESP2 *-1
  // A double as Redis 7.0 prints it ("%.17g", inf, -inf): RESP3 ,1.5 | RESP2 a bulk string.
  void double_value(double v);
  void array(std::size_t n);    // *n
  void map(std::size_t pairs);  // RESP3 %n | RESP2 *2n
  void set(std::size_t n);      // RESP3 ~n | RESP2 *n
  void push(std::size_t n);     // RESP3 >n | RESP2 *n (pub/sub, lock events)
  // Text meant for people (INFO, CLIENT LIST): RESP3 =len\r\ntxt:... | RESP2 a bulk string.
  void verbatim(std::string_view text);
  // Shorthands for map entries. An entry whose text is short (most are: names, handles, keys)
  // is assembled on the stack and appended once: a hold's map has a dozen of them.
  void field(std::string_view name, std::string_view value);
  void field(std::string_view name, std::int64_t value);
  void null_field(std::string_view name);

 private:
  // What a short element may hold in the stack buffer of one append.
  static constexpr std::size_t kShort = 256;
  void header(char type, std::int64_t n);
  std::string& out_;
  int proto_;
};

}  // namespace holdfast::resp
