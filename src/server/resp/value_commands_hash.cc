// The hash commands' arguments, read as Redis 7.0's t_hash.c reads them.
#include "server/resp/value_command_support.h"

namespace holdfast::resp {

using value_cmd::request;

Issued call_hset(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  // Fields come in pairs with their values; Redis words a missing value as an arity error.
  if (a.positional.size() % 2 == 0)
    return value_cmd::refuse(d, "wrong number of arguments for 'hset' command");
  return s.value(c, request(ValueOp::kHSet, a), d);
}

Issued call_hincrby(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  const auto by = parse_redis_integer(a.positional[2]);
  if (!by) return value_cmd::not_an_integer(d);
  ValueRequest r = request(ValueOp::kHIncrBy, a);
  r.items = a.positional.subspan(1, 1);
  r.integer = *by;
  return s.value(c, r, d);
}

}  // namespace holdfast::resp
