// Building value requests in tests the way the front end does, from a command's words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/values/value_ops.h"

namespace holdfast::testing {

// A request whose views point into this object.
struct Request {
  explicit Request(ValueOp op, std::string key = "k", std::vector<std::string> items = {})
      : key(std::move(key)), items(std::move(items)) {
    r.op = op;
    refresh();
  }
  Request& with_scores(std::vector<double> s) {
    scores = std::move(s);
    refresh();
    return *this;
  }
  Request& flag(std::uint32_t f) {
    r.flags |= f;
    return *this;
  }
  Request& integers(std::int64_t a, std::int64_t b = 0) {
    r.integer = a;
    r.integer2 = b;
    return *this;
  }
  Request& range(double min, double max, bool min_ex = false, bool max_ex = false) {
    r.range = ScoreRange{{min, min_ex}, {max, max_ex}};
    return *this;
  }
  void refresh() {
    views.assign(items.begin(), items.end());
    r.key = key;
    r.items = views;
    r.scores = scores;
  }
  operator const ValueRequest&() const { return r; }  // NOLINT: a test shorthand

  std::string key;
  std::vector<std::string> items;
  std::vector<std::string_view> views;
  std::vector<double> scores;
  ValueRequest r;
};

// The bulk strings of an array reply (doubles printed as Redis prints them).
inline std::vector<std::string> texts(const ValueReply& reply) {
  std::vector<std::string> out;
  for (const ValueReply& item : reply.items) {
    out.push_back(item.kind == ValueReply::Kind::kDouble ? format_redis_double(item.number)
                                                         : item.text);
  }
  return out;
}

}  // namespace holdfast::testing
