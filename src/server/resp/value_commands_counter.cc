// INCR, INCRBY, DECR, DECRBY on counters; SETNX and GETSET, Redis's older spellings of SET NX
// and SET ... GET (locks); GETDEL and TYPE, which answer for any key.
#include <limits>

#include "server/resp/value_command_support.h"

namespace holdfast::resp {

using value_cmd::not_an_integer;
using value_cmd::request;

namespace {

Issued add(LockService& s, const Caller& c, const CallArgs& a, Completion& d, std::int64_t by) {
  ValueRequest r = request(ValueOp::kIncrBy, a);
  r.items = {};
  r.integer = by;
  return s.value(c, r, d);
}

}  // namespace

Issued call_incr(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return add(s, c, a, d, 1);
}

Issued call_decr(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return add(s, c, a, d, -1);
}

Issued call_incrby(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  const auto by = parse_redis_integer(a.positional[1]);
  if (!by) return not_an_integer(d);
  return add(s, c, a, d, *by);
}

Issued call_decrby(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  const auto by = parse_redis_integer(a.positional[1]);
  if (!by) return not_an_integer(d);
  // Its negation does not exist: Redis 7.0 answers this before looking at the key.
  if (*by == std::numeric_limits<std::int64_t>::min())
    return value_cmd::refuse(d, "decrement would overflow");
  return add(s, c, a, d, -*by);
}

Issued call_setnx(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  SetArgs args;
  args.key = a.positional[0];
  args.value = a.positional[1];
  args.condition = SetCondition::kIfAbsent;
  return s.set_value(c, args, d);
}

void write_setnx(ReplyWriter& out, Answer& answer) {
  out.integer(std::get<SetOutcome>(answer).set ? 1 : 0);
}

Issued call_getset(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  SetArgs args;
  args.key = a.positional[0];
  args.value = a.positional[1];
  args.get = true;
  return s.set_value(c, args, d);
}

}  // namespace holdfast::resp
