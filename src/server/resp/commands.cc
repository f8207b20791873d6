#include "server/resp/commands.h"

#include <array>
#include <chrono>
#include <cctype>
#include <string>
#include <unordered_map>

#include "server/metrics.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

constexpr CommandSpec kCommands[] = {
    {"PING", 0, 1, kNoAuth, cmd_ping, "PING [message]", "Answers PONG (or the message)."},
    {"HELLO", 0, 6, kNoAuth, cmd_hello, "HELLO [2|3] [AUTH <user> <token>] [SETNAME <name>]",
     "Chooses the protocol version and optionally authenticates."},
    {"AUTH", 1, 2, kNoAuth, cmd_auth, "AUTH <token> | AUTH <user> <token>",
     "Authenticates the connection with a bearer token."},
    {"QUIT", 0, 0, kNoAuth, cmd_quit, "QUIT", "Closes the connection after the reply."},
    {"COMMAND", 0, -1, kNoAuth, cmd_command, "COMMAND [DOCS|COUNT]",
     "Lists the commands (for client libraries)."},
    {"LOCK.ACQUIRE", 5, 8, 0, cmd_acquire,
     "LOCK.ACQUIRE <key> TTL <ms> TIMEOUT <ms> [OWNER <owner>] [SESSION]",
     "Waits up to TIMEOUT in the key's FIFO queue; answers a hold or LOCK_TIMEOUT."},
    {"LOCK.TRY", 3, 6, 0, cmd_try, "LOCK.TRY <key> TTL <ms> [OWNER <owner>] [SESSION]",
     "One attempt; answers a hold or nil."},
    {"LOCK.RENEW", 4, 4, 0, cmd_renew, "LOCK.RENEW <key> <handle> TTL <ms>",
     "Extends the lease of the current handle."},
    {"LOCK.RELEASE", 2, 2, 0, cmd_release, "LOCK.RELEASE <key> <handle>",
     "Frees the key if the handle is its current one."},
    {"LOCK.STATUS", 1, 1, 0, cmd_status, "LOCK.STATUS <key>", "Who holds the key, without its handle."},
    {"LOCK.LIST", 0, 6, 0, cmd_list, "LOCK.LIST [MATCH <glob>] [CURSOR <c>] [COUNT <n>]",
     "Every hold, paged (admin)."},
    {"LOCK.ASSIGN", 2, 6, 0, cmd_assign, "LOCK.ASSIGN <key> <holderId> [TTL <ms>] [TIMEOUT <ms>]",
     "Assigns the key to a holder id."},
    {"LOCK.TRANSFER", 4, 4, 0, cmd_transfer, "LOCK.TRANSFER <key> <toId> FROM <fromId>",
     "Moves an assigned hold to another holder id."},
    {"LOCK.UNASSIGN", 1, 2, 0, cmd_unassign, "LOCK.UNASSIGN <key> [<holderId>]",
     "Frees an assigned hold."},
    {"LOCK.HOLDER", 1, 1, 0, cmd_holder, "LOCK.HOLDER <key>", "The holder id of an assigned key."},
    {"RULES.SET", 1, 1, 0, cmd_rules_set, "RULES.SET <toml>", "Installs or replaces the lock rule set (admin)."},
    {"RULES.GET", 0, 0, 0, cmd_rules_get, "RULES.GET", "The installed rule set as {name, toml}, or nil (admin)."},
    {"RULES.DELETE", 1, 1, 0, cmd_rules_delete, "RULES.DELETE <name>", "Removes the rule set: open access again (admin)."},
};

// Command names are matched case-insensitively through an upper-cased copy on the stack.
std::string_view upper(std::string_view name, std::array<char, 32>& buf) {
  if (name.size() > buf.size()) return {};
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];  // ASCII only: command names are, and the locale must not matter
    buf[i] = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
  }
  return {buf.data(), name.size()};
}

const std::unordered_map<std::string_view, const CommandSpec*>& index() {
  static const auto* map = [] {
    auto* m = new std::unordered_map<std::string_view, const CommandSpec*>();
    for (const auto& c : kCommands) m->emplace(c.name, &c);
    return m;
  }();
  return *map;
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
  return out;
}

}  // namespace

std::span<const CommandSpec> command_table() { return kCommands; }

const CommandSpec* find_command(std::string_view name) {
  std::array<char, 32> buf;
  std::string_view key = upper(name, buf);
  if (key.empty()) return nullptr;
  auto it = index().find(key);
  return it == index().end() ? nullptr : it->second;
}

Flow execute(CommandContext& ctx, std::span<const std::string_view> args) {
  const CommandSpec* spec = find_command(args[0]);
  if (spec == nullptr) {
    ctx.out.error_line("ERR unknown command '" + printable(args[0]) + "'");
    return Flow::kContinue;
  }
  const int n = static_cast<int>(args.size()) - 1;
  if (n < spec->min_args || (spec->max_args >= 0 && n > spec->max_args)) {
    write_error(ctx.out, invalid_argument("wrong number of arguments for '" + std::string(spec->name) +
                                          "' (usage: " + std::string(spec->usage) + ")"));
    return Flow::kContinue;
  }
  if (!ctx.conn.authenticated && (spec->flags & kNoAuth) == 0) {
    write_error(ctx.out, Error(ErrorCode::kUnauthenticated, "authenticate first with AUTH <token>"));
    return Flow::kContinue;
  }
  if (ctx.metrics == nullptr) return spec->handler(ctx, args.subspan(1));
  auto start = std::chrono::steady_clock::now();
  Flow flow = spec->handler(ctx, args.subspan(1));
  ctx.metrics->observe(static_cast<std::size_t>(spec - command_table().data()), std::chrono::steady_clock::now() - start);
  return flow;
}

Flow cmd_ping(CommandContext& ctx, std::span<const std::string_view> args) {
  if (args.empty()) {
    ctx.out.simple("PONG");
  } else {
    ctx.out.bulk(args[0]);
  }
  return Flow::kContinue;
}

Flow cmd_quit(CommandContext& ctx, std::span<const std::string_view>) {
  ctx.out.simple("OK");
  return Flow::kClose;
}

Flow cmd_command(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!args.empty() && find_command("COMMAND") != nullptr) {
    std::array<char, 32> buf;
    if (upper(args[0], buf) == "COUNT") {
      ctx.out.integer(static_cast<std::int64_t>(command_table().size()));
      return Flow::kContinue;
    }
    if (upper(args[0], buf) == "DOCS") {  // redis-cli asks for docs to show hints; we have none
      ctx.out.map(0);
      return Flow::kContinue;
    }
  }
  ctx.out.array(command_table().size());
  for (const auto& c : command_table()) {
    ctx.out.array(2);
    ctx.out.bulk(c.name);
    ctx.out.bulk(c.usage);
  }
  return Flow::kContinue;
}

void write_waiter_outcome(ReplyWriter& w, const WaiterOutcome& o) {
  if (!o.granted) {
    write_lock_timeout(w, o.key, o.timeout_ms);
  } else if (o.assign) {
    write_assignment(w, o.hold);
  } else {
    write_hold(w, o.hold);
  }
}

}  // namespace holdfast::resp
