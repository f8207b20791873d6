// Pub/sub as Redis 7 answers it (SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH,
// PUBSUB), and LOCK.WATCH / LOCK.UNWATCH, which listen to lock events through the same
// subscription of the connection (subscriptions.h; docs/resp.md, docs/events.md).
//
// Each (un)subscription is confirmed by a push frame of its own: [kind, name, count], where
// count is the connection's channels, patterns and watch together. UNSUBSCRIBE and
// PUNSUBSCRIBE without names end every channel (pattern), one frame each, or answer one frame
// with a nil name when there is none.
#include <string>

#include "server/pubsub/registry.h"
#include "server/resp/ascii.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"
#include "server/resp/subscriptions.h"

namespace holdfast::resp {
namespace {

constexpr const char* kNoPubSub = "ERR pub/sub is not available on this connection";

void confirm(ReplyWriter& out, std::string_view kind, const std::string* name, std::size_t count) {
  out.push(3);
  out.bulk(kind);
  if (name != nullptr) {
    out.bulk(*name);
  } else {
    out.null();
  }
  out.integer(static_cast<std::int64_t>(count));
}

bool usable(CommandContext& ctx) {
  if (ctx.subscriptions != nullptr && ctx.subscriptions->has_pubsub()) return true;
  ctx.out.error_line(kNoPubSub);
  return false;
}

// UNSUBSCRIBE and PUNSUBSCRIBE: the named ones, or every one held (a copy: the list changes).
template <typename Remove>
void remove_all(CommandContext& ctx, std::string_view kind, std::span<const std::string_view> args,
                const std::vector<std::string>& held, Remove remove) {
  Subscriptions& subs = *ctx.subscriptions;
  if (args.empty()) {
    if (held.empty()) {
      confirm(ctx.out, kind, nullptr, subs.count());
      return;
    }
    const std::vector<std::string> all = held;
    for (const std::string& name : all) {
      remove(name);
      confirm(ctx.out, kind, &name, subs.count());
    }
    return;
  }
  for (std::string_view a : args) {
    const std::string name(a);
    remove(name);
    confirm(ctx.out, kind, &name, subs.count());
  }
}

}  // namespace

Flow cmd_subscribe(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!usable(ctx)) return Flow::kContinue;
  for (std::string_view a : args) {
    const std::string name(a);
    ctx.subscriptions->subscribe(name);
    confirm(ctx.out, "subscribe", &name, ctx.subscriptions->count());
  }
  return Flow::kContinue;
}

Flow cmd_psubscribe(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!usable(ctx)) return Flow::kContinue;
  for (std::string_view a : args) {
    const std::string name(a);
    ctx.subscriptions->psubscribe(name);
    confirm(ctx.out, "psubscribe", &name, ctx.subscriptions->count());
  }
  return Flow::kContinue;
}

Flow cmd_unsubscribe(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!usable(ctx)) return Flow::kContinue;
  Subscriptions& subs = *ctx.subscriptions;
  remove_all(ctx, "unsubscribe", args, subs.channels(),
             [&subs](const std::string& c) { subs.unsubscribe(c); });
  return Flow::kContinue;
}

Flow cmd_punsubscribe(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!usable(ctx)) return Flow::kContinue;
  Subscriptions& subs = *ctx.subscriptions;
  remove_all(ctx, "punsubscribe", args, subs.patterns(),
             [&subs](const std::string& p) { subs.punsubscribe(p); });
  return Flow::kContinue;
}

Flow cmd_publish(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!usable(ctx)) return Flow::kContinue;
  pubsub::Registry& registry = *ctx.subscriptions->registry();
  if (auto refused = registry.refusal(args[0], args[1])) {
    ctx.out.error_line(*refused);
    return Flow::kContinue;
  }
  ctx.out.integer(registry.publish(args[0], args[1]));
  return Flow::kContinue;
}

Flow cmd_pubsub_channels(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!usable(ctx)) return Flow::kContinue;
  if (args.size() > 1) {
    // Redis takes any number of arguments here and refuses more than one itself.
    ctx.out.error_line(
        "ERR unknown subcommand or wrong number of arguments for 'channels'. Try PUBSUB HELP.");
    return Flow::kContinue;
  }
  const auto names = ctx.subscriptions->registry()->channels(args.empty() ? "" : args[0]);
  ctx.out.array(names.size());
  for (const std::string& n : names) ctx.out.bulk(n);
  return Flow::kContinue;
}

Flow cmd_pubsub_numsub(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!usable(ctx)) return Flow::kContinue;
  ctx.out.array(args.size() * 2);  // flat, in RESP3 too, as Redis 7.0 answers it
  for (std::string_view c : args) {
    ctx.out.bulk(c);
    ctx.out.integer(static_cast<std::int64_t>(ctx.subscriptions->registry()->numsub(c)));
  }
  return Flow::kContinue;
}

Flow cmd_pubsub_numpat(CommandContext& ctx, std::span<const std::string_view>) {
  if (!usable(ctx)) return Flow::kContinue;
  ctx.out.integer(static_cast<std::int64_t>(ctx.subscriptions->registry()->numpat()));
  return Flow::kContinue;
}

Flow cmd_pubsub_help(CommandContext& ctx, std::span<const std::string_view>) {
  // Redis's own lines, less the sharded channels Holdfast does not have.
  constexpr std::string_view kLines[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.array(std::size(kLines));
  for (std::string_view line : kLines) ctx.out.simple(line);
  return Flow::kContinue;
}

// LOCK.WATCH [PREFIX <prefix>]: [lock.watch, prefix, count]; a second one replaces the prefix.
Flow cmd_lock_watch(CommandContext& ctx, std::span<const std::string_view> args) {
  if (ctx.subscriptions == nullptr || !ctx.subscriptions->has_events()) {
    ctx.out.error_line("ERR lock events are not available on this connection");
    return Flow::kContinue;
  }
  std::string prefix;
  if (args.size() == 2 && ascii_iequals(args[0], "PREFIX")) {
    prefix = std::string(args[1]);
  } else if (!args.empty()) {
    write_error(ctx.out, invalid_argument("syntax error (usage: LOCK.WATCH [PREFIX <prefix>])"));
    return Flow::kContinue;
  }
  if (auto err = events::check_prefix(prefix)) {
    write_error(ctx.out, *err);
    return Flow::kContinue;
  }
  // Events may not flow yet (a node over PostgreSQL turns the cluster's triggers on first):
  // the confirmation then comes when they do, so that a change after it is told.
  if (ctx.subscriptions->watch(prefix))
    Subscriptions::write_confirmation(ctx.out, "lock.watch", &prefix, ctx.subscriptions->count());
  return Flow::kContinue;
}

Flow cmd_lock_unwatch(CommandContext& ctx, std::span<const std::string_view>) {
  if (ctx.subscriptions == nullptr || !ctx.subscriptions->has_events()) {
    ctx.out.error_line("ERR lock events are not available on this connection");
    return Flow::kContinue;
  }
  const bool was = ctx.subscriptions->watching();
  const std::string prefix = ctx.subscriptions->prefix();
  ctx.subscriptions->unwatch();
  Subscriptions::write_confirmation(ctx.out, "lock.unwatch", was ? &prefix : nullptr,
                                    ctx.subscriptions->count());
  return Flow::kContinue;
}

}  // namespace holdfast::resp
