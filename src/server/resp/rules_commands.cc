// RULES.* command handlers: the lock rule set over RESP.
#include "server/resp/commands.h"
#include "server/resp/render.h"

namespace holdfast::resp {

Flow cmd_rules_set(CommandContext& ctx, std::span<const std::string_view> args) {
  auto replaced = ctx.service.set_rule_set(Caller{&ctx.conn.principal, ctx.conn.id}, args[0]);
  if (!replaced.ok()) {
    write_error(ctx.out, replaced.error());
    return Flow::kContinue;
  }
  auto current = ctx.service.get_rule_set(Caller{&ctx.conn.principal, ctx.conn.id});
  ctx.out.map(2);
  ctx.out.field("name", (*current)->name);
  ctx.out.field("replaced", *replaced ? 1 : 0);
  return Flow::kContinue;
}

Flow cmd_rules_get(CommandContext& ctx, std::span<const std::string_view>) {
  auto current = ctx.service.get_rule_set(Caller{&ctx.conn.principal, ctx.conn.id});
  if (!current.ok()) {
    write_error(ctx.out, current.error());
  } else if (*current == nullptr) {
    ctx.out.null();
  } else {
    ctx.out.map(2);
    ctx.out.field("name", (*current)->name);
    ctx.out.field("toml", (*current)->toml);
  }
  return Flow::kContinue;
}

Flow cmd_rules_delete(CommandContext& ctx, std::span<const std::string_view> args) {
  auto st = ctx.service.delete_rule_set(Caller{&ctx.conn.principal, ctx.conn.id}, args[0]);
  if (!st.ok()) {
    write_error(ctx.out, st.error());
  } else {
    ctx.out.simple("OK");
  }
  return Flow::kContinue;
}

}  // namespace holdfast::resp
