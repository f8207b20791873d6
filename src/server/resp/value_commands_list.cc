// The list commands' arguments, read as Redis 7.0's t_list.c reads them.
#include "server/resp/value_command_support.h"

namespace holdfast::resp {

using value_cmd::not_an_integer;
using value_cmd::request;

namespace {

Issued push(LockService& s, const Caller& c, const CallArgs& a, Completion& d, bool right) {
  ValueRequest r = request(ValueOp::kPush, a);
  if (right) r.flags |= kRight;
  return s.value(c, r, d);
}

Issued pop(LockService& s, const Caller& c, const CallArgs& a, Completion& d, bool right) {
  ValueRequest r = request(ValueOp::kPop, a);
  r.items = {};
  if (right) r.flags |= kRight;
  if (a.positional.size() == 2) {
    // Redis words a count that is not a number as it words a negative one.
    const auto count = parse_redis_integer(a.positional[1]);
    if (!count || *count < 0)
      return value_cmd::refuse(d, "value is out of range, must be positive");
    r.flags |= kCount;
    r.integer = *count;
  }
  return s.value(c, r, d);
}

// start and stop (LRANGE), or one index (LINDEX) or a count (LREM) into `r`.
bool read_integer(std::string_view text, std::int64_t& out) {
  const auto n = parse_redis_integer(text);
  if (!n) return false;
  out = *n;
  return true;
}

}  // namespace

Issued call_lpush(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return push(s, c, a, d, /*right=*/false);
}

Issued call_rpush(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return push(s, c, a, d, /*right=*/true);
}

Issued call_lpop(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return pop(s, c, a, d, /*right=*/false);
}

Issued call_rpop(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return pop(s, c, a, d, /*right=*/true);
}

Issued call_lrange(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  ValueRequest r = request(ValueOp::kLRange, a);
  r.items = {};
  if (!read_integer(a.positional[1], r.integer) || !read_integer(a.positional[2], r.integer2))
    return not_an_integer(d);
  return s.value(c, r, d);
}

Issued call_lrem(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  ValueRequest r = request(ValueOp::kLRem, a);
  if (!read_integer(a.positional[1], r.integer)) return not_an_integer(d);
  r.items = a.positional.subspan(2);
  return s.value(c, r, d);
}

Issued call_lindex(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  ValueRequest r = request(ValueOp::kLIndex, a);
  r.items = {};
  if (!read_integer(a.positional[1], r.integer)) return not_an_integer(d);
  return s.value(c, r, d);
}

}  // namespace holdfast::resp
