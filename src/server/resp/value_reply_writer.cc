// A typed-value command's answer in the connection's protocol, as Redis 7.0 writes each shape:
// RESP2 has no double, map or pair: a score is a bulk string, HGETALL a flat array, ZRANGE
// WITHSCORES member, score, member, score...; RESP3 has all three (ZRANGE WITHSCORES is an
// array of [member, score] pairs).
#include "server/resp/value_commands.h"

namespace holdfast::resp {

void write_value(ReplyWriter& w, const ValueReply& r) {
  switch (r.kind) {
    case ValueReply::Kind::kNull:
      w.null();
      return;
    case ValueReply::Kind::kNullArray:
      w.null_array();
      return;
    case ValueReply::Kind::kInteger:
      w.integer(r.integer);
      return;
    case ValueReply::Kind::kBulk:
      w.bulk(r.text);
      return;
    case ValueReply::Kind::kStatus:
      w.simple(r.text);
      return;
    case ValueReply::Kind::kDouble:
      w.double_value(r.number);
      return;
    case ValueReply::Kind::kArray:
      w.array(r.items.size());
      break;
    case ValueReply::Kind::kMap:
      w.map(r.items.size() / 2);
      break;
    case ValueReply::Kind::kPairs:
      if (w.proto() >= 3) {
        w.array(r.items.size() / 2);
        for (std::size_t i = 0; i + 1 < r.items.size(); i += 2) {
          w.array(2);
          write_value(w, r.items[i]);
          write_value(w, r.items[i + 1]);
        }
        return;
      }
      w.array(r.items.size());
      break;
  }
  for (const ValueReply& item : r.items) write_value(w, item);
}

void write_value_answer(ReplyWriter& w, Answer& answer) {
  write_value(w, std::get<ValueReply>(answer));
}

}  // namespace holdfast::resp
