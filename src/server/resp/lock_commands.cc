// LOCK.* command handlers: parse arguments, call the LockService, render the result.
#include <string>

#include "server/resp/commands.h"
#include "server/resp/options.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

Caller caller_of(CommandContext& ctx) { return Caller{&ctx.conn.principal, ctx.conn.id}; }

// Writes an error and continues; the common tail of every handler's failure path.
Flow fail(CommandContext& ctx, const Error& error) {
  write_error(ctx.out, error);
  return Flow::kContinue;
}

struct AcquireOptions {
  std::optional<std::int64_t> ttl, timeout;
  std::optional<std::string_view> owner;
  bool session = false;
};

// Parses TTL / TIMEOUT / OWNER / SESSION; TIMEOUT only when `with_timeout`.
std::optional<Error> read_acquire_options(std::span<const std::string_view> args,
                                          std::string_view command, bool with_timeout,
                                          AcquireOptions* o) {
  OptionReader r(args, command);
  bool seen_ttl = false, seen_timeout = false, seen_owner = false, seen_session = false;
  while (r.next()) {
    if (r.is("TTL")) {
      o->ttl = r.millis(&seen_ttl);
    } else if (with_timeout && r.is("TIMEOUT")) {
      o->timeout = r.millis(&seen_timeout);
    } else if (r.is("OWNER")) {
      o->owner = r.text(&seen_owner);
    } else if (r.is("SESSION")) {
      o->session = r.flag(&seen_session);
    } else {
      r.unknown();
    }
  }
  if (r.error()) return r.error();
  if (!o->ttl) return invalid_argument("TTL is required (milliseconds)");
  if (with_timeout && !o->timeout) return invalid_argument("TIMEOUT is required (milliseconds; 0 for one attempt)");
  return std::nullopt;
}

Flow acquire_common(CommandContext& ctx, std::span<const std::string_view> args, bool blocking) {
  AcquireOptions o;
  if (auto err = read_acquire_options(args.subspan(1), blocking ? "LOCK.ACQUIRE" : "LOCK.TRY",
                                      blocking, &o))
    return fail(ctx, *err);
  AcquireArgs a;
  a.key = args[0];
  a.ttl_ms = *o.ttl;
  a.timeout_ms = blocking ? *o.timeout : 0;
  a.owner = o.owner;
  a.session_scoped = o.session;
  auto out = ctx.service.acquire(caller_of(ctx), a, ctx.client);
  if (!out.ok()) return fail(ctx, out.error());
  switch (out->kind) {
    case AcquireOutcome::Kind::kGranted:
      write_hold(ctx.out, out->hold);
      return Flow::kContinue;
    case AcquireOutcome::Kind::kContended:
      if (blocking) {
        write_lock_timeout(ctx.out, a.key, a.timeout_ms);
      } else {
        ctx.out.null();
      }
      return Flow::kContinue;
    case AcquireOutcome::Kind::kQueued:
      ctx.blocked_on = out->waiter;
      return Flow::kBlock;
  }
  return Flow::kContinue;
}

}  // namespace

Flow cmd_acquire(CommandContext& ctx, std::span<const std::string_view> args) {
  return acquire_common(ctx, args, /*blocking=*/true);
}

Flow cmd_try(CommandContext& ctx, std::span<const std::string_view> args) {
  return acquire_common(ctx, args, /*blocking=*/false);
}

Flow cmd_renew(CommandContext& ctx, std::span<const std::string_view> args) {
  OptionReader r(args.subspan(2), "LOCK.RENEW");
  bool seen_ttl = false;
  std::optional<std::int64_t> ttl;
  while (r.next()) {
    if (r.is("TTL")) {
      ttl = r.millis(&seen_ttl);
    } else {
      r.unknown();
    }
  }
  if (r.error()) return fail(ctx, *r.error());
  if (!ttl) return fail(ctx, invalid_argument("TTL is required (milliseconds)"));
  auto out = ctx.service.renew(caller_of(ctx), args[0], args[1], *ttl);
  if (!out.ok()) return fail(ctx, out.error());
  ctx.out.map(2);
  if (out->renewed) {
    ctx.out.field("renewed", 1);
    ctx.out.field("leaseExpiresAt", out->lease_expires_at);
  } else {
    ctx.out.field("renewed", 0);
    ctx.out.field("reason", "lease_lost");
  }
  return Flow::kContinue;
}

Flow cmd_release(CommandContext& ctx, std::span<const std::string_view> args) {
  auto out = ctx.service.release(caller_of(ctx), args[0], args[1]);
  if (!out.ok()) return fail(ctx, out.error());
  if (out->released) {
    ctx.out.map(1);
    ctx.out.field("released", 1);
  } else {
    ctx.out.map(2);
    ctx.out.field("released", 0);
    ctx.out.field("reason", "not_holder");
  }
  return Flow::kContinue;
}

Flow cmd_status(CommandContext& ctx, std::span<const std::string_view> args) {
  auto out = ctx.service.status(caller_of(ctx), args[0]);
  if (!out.ok()) return fail(ctx, out.error());
  write_status(ctx.out, *out);
  return Flow::kContinue;
}

Flow cmd_list(CommandContext& ctx, std::span<const std::string_view> args) {
  OptionReader r(args, "LOCK.LIST");
  bool seen_match = false, seen_cursor = false, seen_count = false;
  std::string_view match, cursor = "0";
  std::int64_t count = 100;
  while (r.next()) {
    if (r.is("MATCH")) {
      if (auto v = r.text(&seen_match)) match = *v;
    } else if (r.is("CURSOR")) {
      if (auto v = r.text(&seen_cursor)) cursor = *v;
    } else if (r.is("COUNT")) {
      auto v = r.text(&seen_count);
      if (v) {
        auto n = parse_int64(*v);
        if (!n || *n < 1) {
          r.fail("COUNT must be a positive integer");
        } else {
          count = std::min<std::int64_t>(*n, LockTable::kMaxListPage);
        }
      }
    } else {
      r.unknown();
    }
  }
  if (r.error()) return fail(ctx, *r.error());
  auto page = ctx.service.list(caller_of(ctx), match, cursor, static_cast<std::size_t>(count));
  if (!page.ok()) return fail(ctx, page.error());
  ctx.out.array(2);
  ctx.out.bulk(page->next_cursor);
  ctx.out.array(page->holds.size());
  for (const auto& h : page->holds) write_public_hold(ctx.out, h);
  return Flow::kContinue;
}

Flow cmd_assign(CommandContext& ctx, std::span<const std::string_view> args) {
  OptionReader r(args.subspan(2), "LOCK.ASSIGN");
  bool seen_ttl = false, seen_timeout = false;
  AssignArgs a;
  a.key = args[0];
  a.holder_id = args[1];
  while (r.next()) {
    if (r.is("TTL")) {
      a.ttl_ms = r.millis(&seen_ttl);
    } else if (r.is("TIMEOUT")) {
      a.timeout_ms = r.millis(&seen_timeout);
    } else {
      r.unknown();
    }
  }
  if (r.error()) return fail(ctx, *r.error());
  auto out = ctx.service.assign(caller_of(ctx), a, ctx.client);
  if (!out.ok()) return fail(ctx, out.error());
  switch (out->kind) {
    case AcquireOutcome::Kind::kGranted:
      write_assignment(ctx.out, out->hold);
      return Flow::kContinue;
    case AcquireOutcome::Kind::kContended:
      write_lock_timeout(ctx.out, a.key, a.timeout_ms.value_or(0));
      return Flow::kContinue;
    case AcquireOutcome::Kind::kQueued:
      ctx.blocked_on = out->waiter;
      return Flow::kBlock;
  }
  return Flow::kContinue;
}

Flow cmd_transfer(CommandContext& ctx, std::span<const std::string_view> args) {
  OptionReader r(args.subspan(2), "LOCK.TRANSFER");
  bool seen_from = false;
  std::optional<std::string_view> from;
  while (r.next()) {
    if (r.is("FROM")) {
      from = r.text(&seen_from);
    } else {
      r.unknown();
    }
  }
  if (r.error()) return fail(ctx, *r.error());
  if (!from) return fail(ctx, invalid_argument("FROM <fromId> is required"));
  auto out = ctx.service.transfer(caller_of(ctx), args[0], args[1], *from);
  if (!out.ok()) return fail(ctx, out.error());
  ctx.out.map(2);
  ctx.out.field("holder", out->holder_id);
  ctx.out.field("token", static_cast<std::int64_t>(out->token));
  return Flow::kContinue;
}

Flow cmd_unassign(CommandContext& ctx, std::span<const std::string_view> args) {
  std::optional<std::string_view> holder;
  if (args.size() > 1) holder = args[1];
  auto out = ctx.service.unassign(caller_of(ctx), args[0], holder);
  if (!out.ok()) return fail(ctx, out.error());
  ctx.out.map(1);
  ctx.out.field("released", out->released ? 1 : 0);
  return Flow::kContinue;
}

Flow cmd_holder(CommandContext& ctx, std::span<const std::string_view> args) {
  auto out = ctx.service.holder(caller_of(ctx), args[0]);
  if (!out.ok()) return fail(ctx, out.error());
  write_holder(ctx.out, *out);
  return Flow::kContinue;
}

}  // namespace holdfast::resp
