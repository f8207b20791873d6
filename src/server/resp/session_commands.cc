// Connection-level commands: the protocol version, identity and the small Redis commands every
// client library sends while connecting (HELLO, AUTH, SELECT, PING, ECHO, RESET, QUIT).
#include <string>

#include "auth/authenticator.h"
#include "core/validation.h"
#include "server/resp/ascii.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"
#include "server/resp/subscriptions.h"

namespace holdfast::resp {
namespace {

// Redis's user "default" is the one a password-only AUTH logs in as: here it means "no user
// name", so `AUTH default <token>` (what clients send for a password without a user) is
// `AUTH <token>`.
std::optional<std::string_view> user_name(std::string_view user) {
  if (ascii_iequals(user, "default")) return std::nullopt;
  return user;
}

// Authenticates the connection; writes the error and returns false on failure.
bool authenticate(CommandContext& ctx, std::optional<std::string_view> user,
                  std::string_view token) {
  if (!ctx.info.auth_mode || ctx.auth == nullptr) return true;  // open mode: AUTH answers OK
  auto principal = ctx.auth->authenticate(user, token);
  if (!principal) {
    // Redis's code for bad credentials, so client libraries raise their authentication error.
    ctx.out.error_line("WRONGPASS unknown credentials: no member or function has this token" +
                       std::string(user ? " and user name" : ""));
    return false;
  }
  ctx.conn.principal = std::move(*principal);
  ctx.conn.authenticated = true;
  return true;
}

}  // namespace

Flow cmd_ping(CommandContext& ctx, std::span<const std::string_view> args) {
  if (ctx.conn.proto == 2 && ctx.subscriptions != nullptr && ctx.subscriptions->count() > 0) {
    // Redis's answer on a RESP2 connection that subscribed: ["pong", message or ""].
    ctx.out.array(2);
    ctx.out.bulk("pong");
    ctx.out.bulk(args.empty() ? std::string_view() : args[0]);
    return Flow::kContinue;
  }
  if (args.empty()) {
    ctx.out.simple("PONG");
  } else {
    ctx.out.bulk(args[0]);
  }
  return Flow::kContinue;
}

Flow cmd_echo(CommandContext& ctx, std::span<const std::string_view> args) {
  ctx.out.bulk(args[0]);
  return Flow::kContinue;
}

Flow cmd_quit(CommandContext& ctx, std::span<const std::string_view>) {
  ctx.out.simple("OK");
  return Flow::kClose;
}

Flow cmd_auth(CommandContext& ctx, std::span<const std::string_view> args) {
  std::optional<std::string_view> user;
  if (args.size() == 2) user = user_name(args[0]);
  if (authenticate(ctx, user, args.back())) ctx.out.simple("OK");
  return Flow::kContinue;
}

Flow cmd_hello(CommandContext& ctx, std::span<const std::string_view> args) {
  int proto = ctx.conn.proto;
  std::size_t i = 0;
  if (!args.empty()) {
    auto v = parse_int64(args[0]);
    if (!v || (*v != 2 && *v != 3)) {
      ctx.out.error_line("NOPROTO unsupported protocol version; this server speaks 2 and 3");
      return Flow::kContinue;
    }
    proto = static_cast<int>(*v);
    i = 1;
  }
  std::optional<std::pair<std::string_view, std::string_view>> auth;
  std::optional<std::string_view> name;
  while (i < args.size()) {
    if (ascii_iequals(args[i], "AUTH") && i + 2 < args.size()) {
      auth.emplace(args[i + 1], args[i + 2]);
      i += 3;
    } else if (ascii_iequals(args[i], "SETNAME") && i + 1 < args.size()) {
      name = args[i + 1];
      i += 2;
    } else {
      write_error(
          ctx.out,
          invalid_argument(
              "syntax error in HELLO (usage: HELLO [2|3] [AUTH <user> <token>] [SETNAME <name>])"));
      return Flow::kContinue;
    }
  }
  if (name) {
    if (auto error = client_name_error(*name)) {
      ctx.out.error_line(*error);
      return Flow::kContinue;
    }
  }
  if (auth && !authenticate(ctx, user_name(auth->first), auth->second)) return Flow::kContinue;
  if (!ctx.conn.authenticated) {
    ctx.out.error_line(
        "NOAUTH HELLO needs authentication on this server: HELLO <proto> AUTH <user> <token>");
    return Flow::kContinue;
  }
  if (name) ctx.conn.name = std::string(*name);
  ctx.conn.proto = proto;
  ctx.out.set_proto(proto);  // the reply to HELLO 3 is already RESP3
  // After an unclean stop in the horizon mode: until when nothing new is granted.
  const Millis recovering_until = ctx.service.stats().recovering_until;
  ctx.out.map(recovering_until > 0 ? 8 : 7);
  ctx.out.field("server", "holdfast");
  ctx.out.field("version", ctx.info.version);
  ctx.out.field("proto", proto);
  ctx.out.field("id", static_cast<std::int64_t>(ctx.conn.id));
  ctx.out.field("mode", ctx.info.auth_mode ? "auth" : "open");
  ctx.out.field("role", "master");  // Redis's field: every node accepts every command
  ctx.out.bulk("modules");
  ctx.out.array(0);
  if (recovering_until > 0) ctx.out.field("recoveringUntil", recovering_until);
  return Flow::kContinue;
}

Flow cmd_reset(CommandContext& ctx, std::span<const std::string_view>) {
  // Holds (also SESSION holds) belong to the connection, not to its settings: they stay.
  ctx.conn.proto = 2;
  ctx.out.set_proto(2);
  ctx.conn.name.clear();
  ctx.conn.no_evict = false;
  ctx.conn.no_touch = false;
  ctx.conn.transaction = Transaction{};
  if (ctx.subscriptions != nullptr) ctx.subscriptions->end();
  if (ctx.info.auth_mode) {
    // Back to who the connection was when it opened: its certificate's caller, or nobody.
    ctx.conn.authenticated = ctx.conn.certificate_principal.has_value();
    ctx.conn.principal = ctx.conn.certificate_principal.value_or(Principal{});
  }
  ctx.out.simple("RESET");
  return Flow::kContinue;
}

void write_select(ReplyWriter& out, std::string_view index) {
  const auto n = parse_int64(index);
  if (!n) {
    out.error_line("ERR value is not an integer or out of range");
  } else if (*n != 0) {
    // Redis's words for an index past its databases: Holdfast has one keyspace, so two
    // applications that chose databases 0 and 1 never share a lock without knowing it.
    out.error_line("ERR DB index is out of range");
  } else {
    out.simple("OK");
  }
}

Flow cmd_select(CommandContext& ctx, std::span<const std::string_view> args) {
  write_select(ctx.out, args[0]);
  return Flow::kContinue;
}

}  // namespace holdfast::resp
