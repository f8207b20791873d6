// Connection-level commands: HELLO and AUTH (protocol version and identity).
#include <string>

#include "auth/authenticator.h"
#include "core/validation.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

// Authenticates the connection; writes the error and returns false on failure.
bool authenticate(LocalContext& ctx, std::optional<std::string_view> user, std::string_view token) {
  if (!ctx.info.auth_mode || ctx.auth == nullptr) return true;  // open mode: AUTH answers OK
  auto principal = ctx.auth->authenticate(user, token);
  if (!principal) {
    write_error(ctx.out, Error(ErrorCode::kUnauthenticated, "unknown credentials"));
    return false;
  }
  ctx.conn.principal = std::move(*principal);
  ctx.conn.authenticated = true;
  return true;
}

}  // namespace

Flow cmd_auth(LocalContext& ctx, std::span<const std::string_view> args) {
  std::optional<std::string_view> user;
  if (args.size() == 2) user = args[0];
  if (authenticate(ctx, user, args.back())) ctx.out.simple("OK");
  return Flow::kContinue;
}

Flow cmd_hello(LocalContext& ctx, std::span<const std::string_view> args) {
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
  while (i < args.size()) {
    std::string word(args[i]);
    for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (word == "AUTH" && i + 2 < args.size()) {
      auth.emplace(args[i + 1], args[i + 2]);
      i += 3;
    } else if (word == "SETNAME" && i + 1 < args.size()) {
      i += 2;  // accepted for client-library compatibility; names are not used
    } else {
      write_error(ctx.out, invalid_argument("syntax error in HELLO (usage: HELLO [2|3] [AUTH <user> <token>] [SETNAME <name>])"));
      return Flow::kContinue;
    }
  }
  if (auth && !authenticate(ctx, auth->first, auth->second)) return Flow::kContinue;
  if (!ctx.conn.authenticated) {
    write_error(ctx.out, Error(ErrorCode::kUnauthenticated, "HELLO needs AUTH <user> <token> on this server"));
    return Flow::kContinue;
  }
  ctx.conn.proto = proto;
  ctx.out.set_proto(proto);  // the reply to HELLO 3 is already RESP3
  ctx.out.map(5);
  ctx.out.field("server", "holdfast");
  ctx.out.field("version", ctx.info.version);
  ctx.out.field("proto", proto);
  ctx.out.field("id", static_cast<std::int64_t>(ctx.conn.id));
  ctx.out.field("mode", ctx.info.auth_mode ? "auth" : "open");
  return Flow::kContinue;
}

}  // namespace holdfast::resp
