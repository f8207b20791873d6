// The Redis lock idiom over the lock keyspace (docs/redis-locks.md): SET, GET, DEL, UNLINK,
// EXISTS, PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT, PTTL, TTL, PERSIST, with Redis's syntax and
// reply shapes. Each builds a service call and writes its answer, as the LOCK.* commands do.
#include <limits>
#include <string>

#include "core/validation.h"
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

// PEXPIRE and its kin: key, amount, then at most one of NX XX GT LT.
Issued expire_call(LockService& service, const Caller& caller, const CallArgs& a, Completion& done,
                   std::int64_t unit, bool absolute) {
  ExpireArgs args;
  args.key = a.positional[0];
  const auto n = parse_int64(a.positional[1]);
  if (!n) return not_an_integer(done);
  const auto ms = times(*n, unit);
  if (!ms) return not_an_integer(done);
  args.amount = *ms;
  args.absolute = absolute;
  const auto& o = a.options;
  int conditions = 0;
  for (int i : {opt::kIfNone, opt::kIfSome, opt::kIfLater, opt::kIfEarlier})
    conditions += o[static_cast<std::size_t>(i)].present ? 1 : 0;
  if (conditions > 1)
    return refuse(done, "NX and XX, GT or LT options at the same time are not compatible");
  if (o[opt::kIfNone].present) args.condition = ExpireCondition::kIfNone;
  if (o[opt::kIfSome].present) args.condition = ExpireCondition::kIfSome;
  if (o[opt::kIfLater].present) args.condition = ExpireCondition::kIfLater;
  if (o[opt::kIfEarlier].present) args.condition = ExpireCondition::kIfEarlier;
  return service.expire(caller, args, done);
}

}  // namespace

Issued call_pexpire(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, 1, false);
}
Issued call_expire(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, 1000, false);
}
Issued call_pexpireat(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, 1, true);
}
Issued call_expireat(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return expire_call(s, c, a, d, 1000, true);
}

Issued call_persist(LockService& service, const Caller& caller, const CallArgs& a,
                    Completion& done) {
  ExpireArgs args;
  args.key = a.positional[0];
  args.persist = true;
  return service.expire(caller, args, done);
}

Issued call_pttl(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  return service.status(caller, a.positional[0], done);
}

namespace {

// -2: not held; -1: a hold without a lease end; else what is left, in `unit` ms (rounded as
// Redis rounds TTL: to the nearest second).
std::int64_t time_left(const StatusView& st, std::int64_t unit) {
  if (!st.held) return -2;
  if (st.hold.lease_expires_at == kNever) return -1;
  const Millis left = std::max<Millis>(st.hold.lease_expires_at - st.as_of, 0);
  return unit == 1 ? left : (left + unit / 2) / unit;
}

}  // namespace

void write_pttl(ReplyWriter& out, Answer& answer) {
  out.integer(time_left(std::get<StatusView>(answer), 1));
}

void write_ttl(ReplyWriter& out, Answer& answer) {
  out.integer(time_left(std::get<StatusView>(answer), 1000));
}

}  // namespace holdfast::resp
