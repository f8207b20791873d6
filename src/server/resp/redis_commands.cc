// The Redis lock idiom over the lock keyspace (docs/redis-locks.md): SET, GET, DEL, UNLINK,
// EXISTS, PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT, PTTL, TTL, PERSIST, with Redis's syntax and
// reply shapes. Each builds a service call and writes its answer, as the LOCK.* commands do;
// the keyspace commands among them act on typed values too (value_commands.h).
// SET and the EXPIRE family read their own options, in Redis 7's grammar and with its error
// texts (their rows declare every argument positional), so that a client's bad input gets the
// answer Redis would give; tests/blackbox/redis_differential_test.cc holds them to that.
#include <limits>
#include <string>

#include "core/clock.h"
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

Issued invalid_expire_time(Completion& done, std::string_view command) {
  return refuse(done, "invalid expire time in '" + ascii_lower(command) + "' command");
}

// A relative expiry is added to the clock (Redis: mstime()); one that would overflow is refused
// as Redis refuses it. Below half the range no clock can make it overflow, so the common case
// reads none.
bool overflows_from_now(std::int64_t ms) {
  if (ms <= std::numeric_limits<Millis>::max() / 2) return false;
  return ms > std::numeric_limits<Millis>::max() - SystemClock().now_ms();
}

enum class Expiry { kNone, kEx, kPx, kExat, kPxat };

}  // namespace

Issued call_set(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  const auto& words = a.positional;
  SetArgs args;
  args.key = words[0];
  args.value = words[1];
  // As Redis 7 reads them (t_string.c, parseExtendedStringArgumentsOrReply): a word may come
  // again (the later expiry value wins), NX and XX exclude each other, KEEPTTL and an expiry
  // do, and so do two kinds of expiry; anything else is a syntax error.
  bool nx = false, xx = false, get = false, keep_ttl = false;
  Expiry expiry = Expiry::kNone;
  std::string_view amount;
  for (std::size_t i = 2; i < words.size(); ++i) {
    const std::string_view w = words[i];
    const bool has_next = i + 1 < words.size();
    const Expiry kind = ascii_iequals(w, "EX")     ? Expiry::kEx
                        : ascii_iequals(w, "PX")   ? Expiry::kPx
                        : ascii_iequals(w, "EXAT") ? Expiry::kExat
                        : ascii_iequals(w, "PXAT") ? Expiry::kPxat
                                                   : Expiry::kNone;
    if (ascii_iequals(w, "NX") && !xx) {
      nx = true;
    } else if (ascii_iequals(w, "XX") && !nx) {
      xx = true;
    } else if (ascii_iequals(w, "GET")) {
      get = true;
    } else if (ascii_iequals(w, "KEEPTTL") && expiry == Expiry::kNone) {
      keep_ttl = true;
    } else if (kind != Expiry::kNone && !keep_ttl && (expiry == Expiry::kNone || expiry == kind) &&
               has_next) {
      expiry = kind;
      amount = words[++i];
    } else {
      return refuse(done, "syntax error");
    }
  }
  if (nx) args.condition = SetCondition::kIfAbsent;
  if (xx) args.condition = SetCondition::kIfPresent;
  if (expiry != Expiry::kNone) {
    // getExpireMillisecondsOrReply: an integer, above 0, in range once in milliseconds and,
    // for EX and PX, once added to the clock.
    const auto n = parse_redis_integer(amount);
    if (!n) return not_an_integer(done);
    const bool seconds = expiry == Expiry::kEx || expiry == Expiry::kExat;
    const bool relative = expiry == Expiry::kEx || expiry == Expiry::kPx;
    if (*n <= 0 || (seconds && *n > std::numeric_limits<Millis>::max() / 1000))
      return invalid_expire_time(done, "set");
    const Millis ms = seconds ? *n * 1000 : *n;
    if (relative && overflows_from_now(ms)) return invalid_expire_time(done, "set");
    if (relative) {
      args.ttl_ms = ms;
    } else {
      args.expires_at = ms;
    }
  }
  args.keep_ttl = keep_ttl;
  args.get = get;
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

// PEXPIRE and its kin, as Redis 7 reads them (expire.c, expireGenericCommand): the options
// first (NX, XX, GT, LT, each as often as given; NX with any other, or GT with LT, refused),
// then the amount, in range once in milliseconds and once added to `now` for a relative one.
Issued expire_call(LockService& service, const Caller& caller, const CallArgs& a, Completion& done,
                   std::string_view command, std::int64_t unit, bool absolute) {
  const auto& words = a.positional;
  bool nx = false, xx = false, gt = false, lt = false;
  for (std::size_t i = 2; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (ascii_iequals(w, "NX")) {
      nx = true;
    } else if (ascii_iequals(w, "XX")) {
      xx = true;
    } else if (ascii_iequals(w, "GT")) {
      gt = true;
    } else if (ascii_iequals(w, "LT")) {
      lt = true;
    } else {
      return refuse(done, "Unsupported option " + std::string(w));
    }
  }
  if (nx && (xx || gt || lt))
    return refuse(done, "NX and XX, GT or LT options at the same time are not compatible");
  if (gt && lt) return refuse(done, "GT and LT options at the same time are not compatible");
  ExpireArgs args;
  args.key = words[0];
  const auto n = parse_redis_integer(words[1]);
  if (!n) return not_an_integer(done);
  if (*n > std::numeric_limits<Millis>::max() / unit ||
      *n < std::numeric_limits<Millis>::min() / unit)
    return invalid_expire_time(done, command);
  args.amount = *n * unit;
  if (!absolute && overflows_from_now(args.amount)) return invalid_expire_time(done, command);
  args.absolute = absolute;
  // GT alone already needs a lease end (Redis counts a key without one as later than any), so
  // XX GT is GT; XX LT is not LT, which also moves a key without one.
  if (nx) args.condition = ExpireCondition::kIfNone;
  if (xx) args.condition = ExpireCondition::kIfSome;
  if (gt) args.condition = ExpireCondition::kIfLater;
  if (lt) args.condition = xx ? ExpireCondition::kIfSomeEarlier : ExpireCondition::kIfEarlier;
  return service.expire(caller, args, done);
}

}  // namespace

Issued call_pexpire(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, "PEXPIRE", 1, false);
}
Issued call_expire(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, "EXPIRE", 1000, false);
}
Issued call_pexpireat(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, "PEXPIREAT", 1, true);
}
Issued call_expireat(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, "EXPIREAT", 1000, true);
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
