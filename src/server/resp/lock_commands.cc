// LOCK.* commands: build the service call from the parsed arguments, and write its answer.
#include <string>

#include "server/lock_mode_args.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

std::optional<std::string_view> text_of(const OptionValue& v) {
  if (!v.present) return std::nullopt;
  return v.text;
}

std::optional<Millis> millis_of(const OptionValue& v) {
  if (!v.present) return std::nullopt;
  return v.number;
}

Issued refuse(Completion& done, Error error) {
  done.finish(std::move(error));
  return Issued::kApplied;
}

// MODE, PERMITS and TAKE (docs/lock-kinds.md) into `args`.
std::optional<Error> read_mode(const OptionValue& mode, const OptionValue& permits,
                               const OptionValue& take, AcquireArgs& args) {
  auto number = [](const OptionValue& v) {
    return v.present ? std::optional<std::int64_t>(v.number) : std::nullopt;
  };
  return read_lock_mode(text_of(mode), number(permits), number(take), kRespSpelling, args);
}

}  // namespace

Issued call_acquire(LockService& service, const Caller& caller, const CallArgs& a,
                    Completion& done) {
  AcquireArgs args;
  args.key = a.positional[0];
  args.ttl_ms = a.options[opt::kTtl].number;
  // Inside a transaction a blocking command makes one attempt, as in Redis.
  args.timeout_ms = a.in_transaction ? 0 : a.options[opt::kTimeout].number;
  args.owner = text_of(a.options[opt::kOwner]);
  args.session_scoped = a.options[opt::kSession].present;
  args.lock_delay_ms = millis_of(a.options[opt::kLockDelay]);
  if (auto err =
          read_mode(a.options[opt::kMode], a.options[opt::kPermits], a.options[opt::kTake], args))
    return refuse(done, std::move(*err));
  return service.acquire(caller, args, done);
}

Issued call_try(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  AcquireArgs args;
  args.key = a.positional[0];
  args.ttl_ms = a.options[opt::kTryTtl].number;
  args.owner = text_of(a.options[opt::kTryOwner]);
  args.session_scoped = a.options[opt::kTrySession].present;
  args.lock_delay_ms = millis_of(a.options[opt::kTryLockDelay]);
  if (auto err = read_mode(a.options[opt::kTryMode], a.options[opt::kTryPermits],
                           a.options[opt::kTryTake], args))
    return refuse(done, std::move(*err));
  return service.try_acquire(caller, args, done);
}

Issued call_renew(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  return service.renew(caller, RenewArgs{a.positional[0], a.positional[1], a.options[0].number},
                       done);
}

Issued call_release(LockService& service, const Caller& caller, const CallArgs& a,
                    Completion& done) {
  return service.release(caller, ReleaseArgs{a.positional[0], a.positional[1]}, done);
}

Issued call_status(LockService& service, const Caller& caller, const CallArgs& a,
                   Completion& done) {
  return service.status(caller, a.positional[0], done);
}

Issued call_list(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  ListArgs args;
  if (a.options[opt::kMatch].present) args.match = a.options[opt::kMatch].text;
  if (a.options[opt::kCursor].present) args.cursor = a.options[opt::kCursor].text;
  if (a.options[opt::kCount].present)
    args.count = static_cast<std::size_t>(a.options[opt::kCount].number);
  return service.list(caller, args, done);
}

Issued call_assign(LockService& service, const Caller& caller, const CallArgs& a,
                   Completion& done) {
  AssignArgs args;
  args.key = a.positional[0];
  if (a.positional.size() > 1) args.holder_id = a.positional[1];
  if (a.options[opt::kAssignTtl].present) args.ttl_ms = a.options[opt::kAssignTtl].number;
  if (a.options[opt::kAssignTimeout].present)
    args.timeout_ms = a.in_transaction ? 0 : a.options[opt::kAssignTimeout].number;
  args.lock_delay_ms = millis_of(a.options[opt::kAssignLockDelay]);
  return service.assign(caller, args, done);
}

Issued call_transfer(LockService& service, const Caller& caller, const CallArgs& a,
                     Completion& done) {
  return service.transfer(
      caller, TransferArgs{a.positional[0], a.positional[1], text_of(a.options[opt::kFrom])}, done);
}

Issued call_unassign(LockService& service, const Caller& caller, const CallArgs& a,
                     Completion& done) {
  UnassignArgs args;
  args.key = a.positional[0];
  if (a.positional.size() > 1) args.holder_id = a.positional[1];
  return service.unassign(caller, args, done);
}

Issued call_holder(LockService& service, const Caller& caller, const CallArgs& a,
                   Completion& done) {
  return service.holder(caller, a.positional[0], done);
}

Issued call_check(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  CheckArgs args;
  args.key = a.positional[0];
  if (a.positional.size() > 1) args.holder_id = a.positional[1];
  return service.check(caller, args, done);
}

void write_grant(ReplyWriter& out, Answer& answer) {
  if (const auto* hold = std::get_if<HoldState>(&answer)) {
    write_hold(out, kGrantFields, *hold);
  } else {
    out.null();  // a try that met another holder
  }
}

void write_renewal(ReplyWriter& out, Answer& answer) {
  const auto& r = std::get<RenewOutcome>(answer);
  out.map(2);
  if (r.renewed) {
    out.field("renewed", 1);
    out.field("leaseExpiresAt", r.lease_expires_at);
  } else {
    out.field("renewed", 0);
    out.field("reason", "lease_lost");
  }
}

void write_release(ReplyWriter& out, Answer& answer) {
  if (std::get<ReleaseOutcome>(answer).released) {
    out.map(1);
    out.field("released", 1);
  } else {
    out.map(2);
    out.field("released", 0);
    out.field("reason", "not_holder");
  }
}

void write_status_answer(ReplyWriter& out, Answer& answer) {
  write_status(out, std::get<StatusView>(answer));
}

void write_list(ReplyWriter& out, Answer& answer) {
  const auto& page = std::get<ListPage>(answer);
  out.array(2);
  out.bulk(page.next_cursor);
  out.array(page.holds.size());
  for (const auto& h : page.holds) write_hold(out, kPublicFields, h);
}

void write_assignment(ReplyWriter& out, Answer& answer) {
  write_hold(out, kAssignmentFields, std::get<HoldState>(answer));
}

void write_transfer(ReplyWriter& out, Answer& answer) {
  const auto& h = std::get<HoldState>(answer);
  out.map(2);
  out.field("holder", h.holder_id);
  out.field("token", static_cast<std::int64_t>(h.token));
}

void write_unassign(ReplyWriter& out, Answer& answer) {
  out.map(1);
  out.field("released", std::get<ReleaseOutcome>(answer).released ? 1 : 0);
}

void write_holder_answer(ReplyWriter& out, Answer& answer) {
  write_holder(out, std::get<HolderView>(answer));
}

void write_ok(ReplyWriter& out, Answer&) { out.simple("OK"); }

}  // namespace holdfast::resp
