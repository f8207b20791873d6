// The client side of RESP (REdis Serialization Protocol, versions 2 and 3): an encoder that
// appends commands to an output buffer, and an incremental parser that reads one reply at a
// time from an input buffer into a flat list of tokens.
//
// The parser never copies: tokens point into the input buffer, which stays valid until the
// caller consumes the reply's bytes. Aggregates (arrays, maps, sets, pushes) are laid out in
// pre-order: the aggregate token carries its element count and its elements follow it, so a
// reply tree costs one vector that the connection reuses, not a node per element.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::bench::resp {

// Appends `*N\r\n$len\r\narg\r\n...` for the given arguments to anything with
// append(std::string_view): a std::string or a connection's ByteBuffer.
template <typename Out>
void append_command(Out& out, std::initializer_list<std::string_view> args) {
  char head[32];
  head[0] = '*';
  auto end = std::to_chars(head + 1, head + sizeof head - 2, args.size()).ptr;
  *end++ = '\r';
  *end++ = '\n';
  out.append(std::string_view(head, static_cast<std::size_t>(end - head)));
  for (std::string_view a : args) {
    head[0] = '$';
    end = std::to_chars(head + 1, head + sizeof head - 2, a.size()).ptr;
    *end++ = '\r';
    *end++ = '\n';
    out.append(std::string_view(head, static_cast<std::size_t>(end - head)));
    out.append(a);
    out.append(std::string_view("\r\n", 2));
  }
}

enum class Type : std::uint8_t {
  kSimpleString,  // +
  kError,         // -  and !  (blob error)
  kInteger,       // :
  kBulk,          // $  and =  (verbatim; text keeps its "txt:" prefix)
  kNull,          // _  and the RESP2 nulls $-1 / *-1
  kDouble,        // ,  (text)
  kBoolean,       // #  (integer 0/1)
  kBigNumber,     // (  (text)
  kArray,         // *  and ~ (set) and > (push); integer = element count
  kMap,           // %  and | (attribute); integer = number of key/value pairs
};

struct Token {
  Type type;
  std::int64_t integer = 0;  // value of kInteger/kBoolean, element or pair count of aggregates
  std::string_view text;     // payload of strings, errors, doubles, big numbers
};

enum class ParseStatus : std::uint8_t { kComplete, kIncomplete, kMalformed };

struct ParseResult {
  ParseStatus status;
  std::size_t consumed = 0;  // bytes of the reply when kComplete
};

// Parses the first complete reply of `in`. On kComplete the reply's tokens are appended to
// `tokens` (cleared first) and `consumed` tells how many bytes it took. A RESP3 attribute
// before a reply is parsed and dropped, as clients are told to.
ParseResult parse_reply(std::string_view in, std::vector<Token>& tokens);

// Index just past the subtree that starts at tokens[i].
std::size_t skip(const std::vector<Token>& tokens, std::size_t i);

// For a reply that is a map, or a RESP2 flat array of key/value pairs: the value token of the
// field named `name`, if present.
std::optional<Token> field(const std::vector<Token>& tokens, std::string_view name);

// True when the token is a "yes": integer 1, boolean true, or the strings "1"/"true"/"OK".
bool truthy(const Token& t);

}  // namespace holdfast::bench::resp
