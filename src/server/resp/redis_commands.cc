// The Redis lock idiom over the lock keyspace (docs/redis-locks.md): SET, GET, DEL, UNLINK,
// EXISTS, PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT, PTTL, TTL, PERSIST, with Redis's syntax and
// reply shapes. Each builds a service call and writes its answer, as the LOCK.* commands do;
// the keyspace commands among them act on typed values too (value_commands.h).
#include <chrono>
#include <limits>
#include <string>

#include "core/validation.h"
#include "core/values/redis_numbers.h"
#include "server/resp/ascii.h"
#include "server/resp/commands.h"

namespace holdfast::resp {
namespace {

// Redis's words for a number argument that is not one.
Issued not_an_integer(Completion& done) {
  done.finish(Error(ErrorCode::kInvalidArgument, "value is not an integer or out of range"));
  return Issued::kApplied;
}

Issued refuse(Completion& done, std::string message) {
  done.finish(invalid_argument(std::move(message)));
  return Issued::kApplied;
}

// Milliseconds from a count of `unit` ms, refusing what would overflow.
std::optional<Millis> times(std::int64_t n, std::int64_t unit) {
  if (n > std::numeric_limits<Millis>::max() / unit ||
      n < std::numeric_limits<Millis>::min() / unit)
    return std::nullopt;
  return n * unit;
}

}  // namespace

Issued call_set(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  const auto& o = a.options;
  SetArgs args;
  args.key = a.positional[0];
  args.value = a.positional[1];
  if (o[opt::kNx].present && o[opt::kXx].present)
    return refuse(done, "syntax error: NX and XX exclude each other");
  if (o[opt::kNx].present) args.condition = SetCondition::kIfAbsent;
  if (o[opt::kXx].present) args.condition = SetCondition::kIfPresent;
  int expiries = 0;
  for (int i : {opt::kEx, opt::kPx, opt::kExat, opt::kPxat, opt::kKeepTtl})
    expiries += o[static_cast<std::size_t>(i)].present ? 1 : 0;
  if (expiries > 1) return refuse(done, "syntax error: one of EX, PX, EXAT, PXAT or KEEPTTL");
  if (o[opt::kEx].present || o[opt::kExat].present) {
    const auto& v = o[o[opt::kEx].present ? opt::kEx : opt::kExat];
    const auto ms = times(v.number, 1000);
    if (!ms) return not_an_integer(done);
    if (o[opt::kEx].present) {
      args.ttl_ms = *ms;
    } else {
      args.expires_at = *ms;
    }
  }
  if (o[opt::kPx].present) args.ttl_ms = o[opt::kPx].number;
  if (o[opt::kPxat].present) args.expires_at = o[opt::kPxat].number;
  if ((args.ttl_ms && *args.ttl_ms <= 0) || (args.expires_at && *args.expires_at <= 0))
    return refuse(done, "invalid expire time in 'set' command");
  args.keep_ttl = o[opt::kKeepTtl].present;
  args.get = o[opt::kGet].present;
  return service.set_value(caller, args, done);
}

void write_set(ReplyWriter& out, Answer& answer) {
  const auto& set = std::get<SetOutcome>(answer);
  if (set.get) {
    if (set.previous) {
      out.bulk(*set.previous);
    } else {
      out.null();
    }
  } else if (set.set) {
    out.simple("OK");
  } else {
    out.null();
  }
}

Issued call_get(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  return service.get_value(caller, a.positional[0], done);
}

void write_get(ReplyWriter& out, Answer& answer) {
  const auto& stored = std::get<StoredValue>(answer);
  if (stored.value) {
    out.bulk(*stored.value);  // the value SET stored; "" for a hold taken without one
  } else {
    out.null();
  }
}

Issued call_del(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  return service.delete_keys(caller, a.positional, done);
}

Issued call_exists(LockService& service, const Caller& caller, const CallArgs& a,
                   Completion& done) {
  return service.count_held(caller, a.positional, done);
}

void write_count(ReplyWriter& out, Answer& answer) {
  out.integer(std::get<KeyCount>(answer).count);
}

namespace {

// PEXPIRE and its kin, read as Redis 7.0 reads them: key, amount, then any of NX XX GT LT
// (checked first), then the amount, then whether the instant fits in 64 bits.
Issued expire_call(LockService& service, const Caller& caller, const CallArgs& a, Completion& done,
                   std::int64_t unit, bool absolute, std::string_view command) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (std::string_view word : a.positional.subspan(2)) {
    if (ascii_iequals(word, "NX")) {
      nx = true;
    } else if (ascii_iequals(word, "XX")) {
      xx = true;
    } else if (ascii_iequals(word, "GT")) {
      gt = true;
    } else if (ascii_iequals(word, "LT")) {
      lt = true;
    } else {
      return refuse(done, "Unsupported option " + std::string(word));
    }
  }
  if (nx && (xx || gt || lt))
    return refuse(done, "NX and XX, GT or LT options at the same time are not compatible");
  if (gt && lt) return refuse(done, "GT and LT options at the same time are not compatible");
  ExpireArgs args;
  args.key = a.positional[0];
  const auto n = parse_redis_integer(a.positional[1]);
  if (!n) return not_an_integer(done);
  const auto ms = times(*n, unit);
  // A relative amount is added to the time now: Redis refuses what would overflow then. (Only
  // this bound of 64 bits reads the wall clock here.)
  const Millis base = absolute ? 0
                               : std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
  if (!ms || *ms > std::numeric_limits<Millis>::max() - base)
    return refuse(done, "invalid expire time in '" + std::string(command) + "' command");
  args.amount = *ms;
  args.absolute = absolute;
  if (nx) args.condition = ExpireCondition::kIfNone;
  if (xx) args.condition = ExpireCondition::kIfSome;
  if (gt) args.condition = ExpireCondition::kIfLater;  // GT needs an expiry already: XX too
  if (lt) {
    args.condition = ExpireCondition::kIfEarlier;
    args.and_if_some = xx;
  }
  return service.expire(caller, args, done);
}

}  // namespace

Issued call_pexpire(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, 1, false, "pexpire");
}
Issued call_expire(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, 1000, false, "expire");
}
Issued call_pexpireat(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, 1, true, "pexpireat");
}
Issued call_expireat(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, 1000, true, "expireat");
}

Issued call_persist(LockService& service, const Caller& caller, const CallArgs& a,
                    Completion& done) {
  ExpireArgs args;
  args.key = a.positional[0];
  args.persist = true;
  return service.expire(caller, args, done);
}

Issued call_pttl(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  // A lock's lease or a typed value's expiry: the backend knows which the key holds.
  ValueRequest r;
  r.op = ValueOp::kPTtl;
  r.key = a.positional[0];
  return service.value(caller, r, done);
}

void write_pttl(ReplyWriter& out, Answer& answer) {
  out.integer(std::get<ValueReply>(answer).integer);
}

void write_ttl(ReplyWriter& out, Answer& answer) {
  // -2 (no key) and -1 (no end) as they are; else seconds, rounded as Redis rounds TTL.
  const std::int64_t ms = std::get<ValueReply>(answer).integer;
  out.integer(ms < 0 ? ms : (ms + 500) / 1000);
}

}  // namespace holdfast::resp
