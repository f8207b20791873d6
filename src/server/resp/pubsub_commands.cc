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

namespace {

// The bodies of PUBLISH and PUBSUB's queries, which need only the registry: the connection's
// commands below and scripts (script_pubsub) share them.
void publish(pubsub::Registry& registry, ReplyWriter& out, std::string_view channel,
             std::string_view message) {
  if (auto refused = registry.refusal(channel, message)) {
    out.error_line(*refused);
    return;
  }
  out.integer(registry.publish(channel, message));
}

// `word`: CHANNELS as the caller wrote it, which Redis's error repeats.
void channels(pubsub::Registry& registry, ReplyWriter& out, std::string_view word,
              std::span<const std::string_view> args) {
  if (args.size() > 1) {
    // Redis takes any number of arguments here and refuses more than one itself.
    out.error_line("ERR unknown subcommand or wrong number of arguments for '" + std::string(word) +
                   "'. Try PUBSUB HELP.");
    return;
  }
  const auto names = registry.channels(args.empty() ? "" : args[0]);
  out.array(names.size());
  for (const std::string& n : names) out.bulk(n);
}

void numsub(pubsub::Registry& registry, ReplyWriter& out, std::span<const std::string_view> args) {
  out.array(args.size() * 2);  // flat, in RESP3 too, as Redis 7.0 answers it
  for (std::string_view c : args) {
    out.bulk(c);
    out.integer(static_cast<std::int64_t>(registry.numsub(c)));
  }
}

void numpat(pubsub::Registry& registry, ReplyWriter& out) {
  out.integer(static_cast<std::int64_t>(registry.numpat()));
}

void help(ReplyWriter& out) {
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
  out.array(std::size(kLines));
  for (std::string_view line : kLines) out.simple(line);
}

}  // namespace

Flow cmd_publish(CommandContext& ctx, std::span<const std::string_view> args) {
  if (usable(ctx)) publish(*ctx.subscriptions->registry(), ctx.out, args[0], args[1]);
  return Flow::kContinue;
}

Flow cmd_pubsub_channels(CommandContext& ctx, std::span<const std::string_view> args) {
  // `args` follow the subcommand's word in the command (Pipeline::resolve takes a subspan).
  if (usable(ctx)) channels(*ctx.subscriptions->registry(), ctx.out, *(args.data() - 1), args);
  return Flow::kContinue;
}

Flow cmd_pubsub_numsub(CommandContext& ctx, std::span<const std::string_view> args) {
  if (usable(ctx)) numsub(*ctx.subscriptions->registry(), ctx.out, args);
  return Flow::kContinue;
}

Flow cmd_pubsub_numpat(CommandContext& ctx, std::span<const std::string_view>) {
  if (usable(ctx)) numpat(*ctx.subscriptions->registry(), ctx.out);
  return Flow::kContinue;
}

Flow cmd_pubsub_help(CommandContext& ctx, std::span<const std::string_view>) {
  help(ctx.out);
  return Flow::kContinue;
}

bool script_pubsub(pubsub::Registry& registry, ReplyWriter& out, const CommandSpec& spec,
                   std::span<const std::string_view> args) {
  if (spec.local != cmd_publish && spec.name != "PUBSUB") return false;
  const CommandSpec* row = &spec;
  std::string_view word = args[0];
  auto rest = args.subspan(1);
  if (spec.local != cmd_publish) {
    row = rest.empty() ? nullptr : find_subcommand(spec, rest[0]);
    if (row == nullptr) {
      // Redis's words for a subcommand it does not know, or none, from a script.
      out.error_line(rest.empty() ? "ERR Wrong number of args calling Redis command from script"
                                  : "ERR Unknown Redis command called from script");
      return true;
    }
    word = rest[0];
    rest = rest.subspan(1);
  }
  if (!accepts_arity(*row, rest.size())) {
    out.error_line("ERR Wrong number of args calling Redis command from script");
    return true;
  }
  if (row->local == cmd_publish) {
    publish(registry, out, rest[0], rest[1]);
  } else if (row->local == cmd_pubsub_channels) {
    channels(registry, out, word, rest);
  } else if (row->local == cmd_pubsub_numsub) {
    numsub(registry, out, rest);
  } else if (row->local == cmd_pubsub_numpat) {
    numpat(registry, out);
  } else {
    help(out);
  }
  return true;
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
