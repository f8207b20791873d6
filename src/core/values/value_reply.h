// ValueReply: a typed-value command's answer in Redis's reply shapes, before it is written in
// the connection's protocol (server/resp/value_reply_writer.cc): RESP2 writes a double as a
// bulk string and a map or a list of pairs flat, RESP3 as doubles, maps and pairs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace holdfast {

struct ValueReply {
  enum class Kind : std::uint8_t {
    kNull,       // nil (RESP2 $-1)
    kNullArray,  // a nil array (RESP2 *-1): LPOP with a count on a missing key
    kInteger,
    kBulk,
    kStatus,  // TYPE
    kDouble,
    kArray,  // items
    kMap,    // items: key, value, key, value...
    kPairs,  // items: member, score, ...: RESP3 an array of [member, score] pairs, RESP2 flat
  };

  Kind kind = Kind::kNull;
  std::int64_t integer = 0;
  double number = 0;
  std::string text;
  std::vector<ValueReply> items;

  static ValueReply null() { return {}; }
  static ValueReply null_array() { return of(Kind::kNullArray); }
  static ValueReply of_integer(std::int64_t v) {
    ValueReply r = of(Kind::kInteger);
    r.integer = v;
    return r;
  }
  static ValueReply bulk(std::string_view s) {
    ValueReply r = of(Kind::kBulk);
    r.text = s;
    return r;
  }
  static ValueReply status(std::string_view s) {
    ValueReply r = of(Kind::kStatus);
    r.text = s;
    return r;
  }
  static ValueReply of_double(double v) {
    ValueReply r = of(Kind::kDouble);
    r.number = v;
    return r;
  }
  static ValueReply of(Kind k) {
    ValueReply r;
    r.kind = k;
    return r;
  }

  bool operator==(const ValueReply&) const = default;
};

}  // namespace holdfast
