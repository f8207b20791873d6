#include "server/resp/commands.h"

#include <array>
#include <cctype>
#include <chrono>
#include <string>
#include <unordered_map>

#include "server/metrics.h"
#include "server/resp/ascii.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

// Usage lines follow a small grammar that COMMAND DOCS turns into Redis argument
// descriptions (resp/usage_grammar.h): <name> an argument, WORD a literal, [..] optional,
// a|b one of, <name>... repeated.

constexpr CommandSpec kClientSubcommands[] = {
    {"ID", 0, 0, kLocal, cmd_client_id, "CLIENT ID",
     "The connection's id (the session id of its SESSION holds).", "connection"},
    {"GETNAME", 0, 0, kLocal, cmd_client_getname, "CLIENT GETNAME",
     "The connection's name, or nil.", "connection"},
    {"SETNAME", 1, 1, kLocal, cmd_client_setname, "CLIENT SETNAME <name>",
     "Names the connection in CLIENT LIST and the server's log lines (empty: no name).",
     "connection"},
    {"SETINFO", 2, 2, kLocal, cmd_client_setinfo, "CLIENT SETINFO LIB-NAME|LIB-VER <value>",
     "Records the client library's name or version, shown by CLIENT LIST.", "connection"},
    {"INFO", 0, 0, kLocal, cmd_client_info, "CLIENT INFO",
     "This connection, as a CLIENT LIST line.", "connection"},
    {"LIST", 0, -1, kLocal, cmd_client_list, "CLIENT LIST [TYPE <type>] [ID <id>...]",
     "One line per open RESP connection: id, addresses, name, age, idle time, last command, user.",
     "connection"},
    {"KILL", 1, -1, kLocal | kAdmin, cmd_client_kill,
     "CLIENT KILL [<addr>] [ID <id>] [ADDR <addr>] [LADDR <laddr>] [USER <user>] [TYPE <type>] "
     "[SKIPME YES|NO] "
     "[MAXAGE <seconds>]",
     "Closes connections (admin); their waiters leave and their SESSION holds are released.",
     "connection"},
    {"NO-EVICT", 1, 1, kLocal, cmd_client_no_evict, "CLIENT NO-EVICT ON|OFF",
     "Accepted and shown as a flag: Holdfast never evicts connections.", "connection"},
    {"NO-TOUCH", 1, 1, kLocal, cmd_client_no_touch, "CLIENT NO-TOUCH ON|OFF",
     "Accepted and shown as a flag: Holdfast keeps no access times.", "connection"},
    {"HELP", 0, 0, kLocal, cmd_client_help, "CLIENT HELP", "The CLIENT subcommands.", "connection"},
};

constexpr CommandSpec kConfigSubcommands[] = {
    {"GET", 1, -1, kLocal, cmd_config_get, "CONFIG GET <parameter>...",
     "Read-only settings as Redis names them (save, appendonly, appendfsync, databases, dir, port, "
     "...).",
     "server"},
    {"SET", 2, -1, kLocal | kAdmin, cmd_config_set, "CONFIG SET <parameter> <value>",
     "Refused: settings come from holdfast.toml and flags.", "server"},
};

constexpr CommandSpec kCommandSubcommands[] = {
    {"COUNT", 0, 0, kLocal, cmd_command_count, "COMMAND COUNT", "How many commands there are.",
     "server"},
    {"INFO", 0, -1, kLocal, cmd_command_info, "COMMAND INFO [<command>...]",
     "Each command's name, arity, flags, key positions and subcommands (all when none named).",
     "server"},
    {"DOCS", 0, -1, kLocal, cmd_command_docs, "COMMAND DOCS [<command>...]",
     "Each command's summary, group and arguments (all when none named).", "server"},
    {"LIST", 0, 3, kLocal, cmd_command_list,
     "COMMAND LIST [FILTERBY PATTERN|ACLCAT|MODULE <value>]", "The command names.", "server"},
    {"HELP", 0, 0, kLocal, cmd_command_help, "COMMAND HELP", "The COMMAND subcommands.", "server"},
};

constexpr CommandSpec kCommands[] = {
    {"PING", 0, 1, kNoAuth | kLocal, cmd_ping, "PING [<message>]", "Answers PONG (or the message).",
     "connection"},
    {"HELLO", 0, 6, kNoAuth | kLocal, cmd_hello,
     "HELLO [2|3] [AUTH <user> <token>] [SETNAME <name>]",
     "Chooses the protocol version and optionally authenticates and names the connection.",
     "connection"},
    {"AUTH", 1, 2, kNoAuth | kLocal, cmd_auth, "AUTH [<user>] <token>",
     "Authenticates the connection with a bearer token; user \"default\" means no user name.",
     "connection"},
    {"QUIT", 0, 0, kNoAuth | kLocal, cmd_quit, "QUIT", "Closes the connection after the reply.",
     "connection"},
    {"RESET", 0, 0, kNoAuth | kLocal, cmd_reset, "RESET",
     "Back to a fresh connection: RESP2, no name, unauthenticated in auth mode; holds stay.",
     "connection"},
    {"SELECT", 1, 1, kLocal, cmd_select, "SELECT <index>",
     "Database 0 is the only one: OK for 0, an error otherwise.", "connection"},
    {"ECHO", 1, 1, kLocal, cmd_echo, "ECHO <message>", "Answers the message.", "connection"},
    {"CLIENT", 1, -1, kLocal, nullptr, "CLIENT <subcommand> [<arg>...]",
     "Connection introspection and naming.", "connection", kClientSubcommands},
    {"INFO", 0, -1, kLocal, cmd_info, "INFO [<section>...]",
     "Server, clients, memory, persistence, stats, keyspace and holdfast sections, as Redis's "
     "INFO.",
     "server"},
    {"DBSIZE", 0, 0, kLocal | kReadOnly, cmd_dbsize, "DBSIZE", "How many keys are held.", "server"},
    {"TIME", 0, 0, kLocal, cmd_time, "TIME", "The server's clock: [unix seconds, microseconds].",
     "server"},
    {"CONFIG", 1, -1, kLocal, nullptr, "CONFIG <subcommand> [<arg>...]",
     "Read-only view of the settings.", "server", kConfigSubcommands},
    {"COMMAND", 0, -1, kLocal, cmd_command, "COMMAND [<subcommand> [<arg>...]]",
     "Describes the commands as Redis 7 does (for client libraries and redis-cli hints).", "server",
     kCommandSubcommands},
    {"LOCK.ACQUIRE", 5, 8, kWrite | kBlocking | kKeyed, cmd_acquire,
     "LOCK.ACQUIRE <key> TTL <ms> TIMEOUT <ms> [OWNER <owner>] [SESSION]",
     "Waits up to TIMEOUT in the key's FIFO queue; answers a hold or LOCK_TIMEOUT.", "lock"},
    {"LOCK.TRY", 3, 6, kWrite | kKeyed, cmd_try,
     "LOCK.TRY <key> TTL <ms> [OWNER <owner>] [SESSION]", "One attempt; answers a hold or nil.",
     "lock"},
    {"LOCK.RENEW", 4, 4, kWrite | kKeyed, cmd_renew, "LOCK.RENEW <key> <handle> TTL <ms>",
     "Extends the lease of the current handle.", "lock"},
    {"LOCK.RELEASE", 2, 2, kWrite | kKeyed, cmd_release, "LOCK.RELEASE <key> <handle>",
     "Frees the key if the handle is its current one.", "lock"},
    {"LOCK.STATUS", 1, 1, kReadOnly | kKeyed, cmd_status, "LOCK.STATUS <key>",
     "Who holds the key, without its handle.", "lock"},
    {"LOCK.LIST", 0, 6, kReadOnly | kAdmin, cmd_list,
     "LOCK.LIST [MATCH <glob>] [CURSOR <c>] [COUNT <n>]", "Every hold, paged (admin).", "lock"},
    {"LOCK.ASSIGN", 2, 6, kWrite | kBlocking | kKeyed, cmd_assign,
     "LOCK.ASSIGN <key> <holderId> [TTL <ms>] [TIMEOUT <ms>]", "Assigns the key to a holder id.",
     "lock"},
    {"LOCK.TRANSFER", 4, 4, kWrite | kKeyed, cmd_transfer,
     "LOCK.TRANSFER <key> <toId> FROM <fromId>", "Moves an assigned hold to another holder id.",
     "lock"},
    {"LOCK.UNASSIGN", 1, 2, kWrite | kKeyed, cmd_unassign, "LOCK.UNASSIGN <key> [<holderId>]",
     "Frees an assigned hold.", "lock"},
    {"LOCK.HOLDER", 1, 1, kReadOnly | kKeyed, cmd_holder, "LOCK.HOLDER <key>",
     "The holder id of an assigned key.", "lock"},
    {"RULES.SET", 1, 1, kWrite | kAdmin, cmd_rules_set, "RULES.SET <toml>",
     "Installs or replaces the lock rule set (admin).", "rules"},
    {"RULES.GET", 0, 0, kReadOnly | kAdmin, cmd_rules_get, "RULES.GET",
     "The installed rule set as {name, toml}, or nil (admin).", "rules"},
    {"RULES.DELETE", 1, 1, kWrite | kAdmin, cmd_rules_delete, "RULES.DELETE <name>",
     "Removes the rule set: open access again (admin).", "rules"},
};

// Command names are matched case-insensitively through an upper-cased copy on the stack.
std::string_view upper(std::string_view name, std::array<char, 32>& buf) {
  if (name.size() > buf.size()) return {};
  for (std::size_t i = 0; i < name.size(); ++i) buf[i] = ascii_upper(name[i]);
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
  for (char c : s.substr(0, 64))
    out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
  return out;
}

// Arity check for `spec` given `n` arguments after its name (`display`: "CLIENT SETNAME" for a
// subcommand); writes the error.
bool arity_ok(CommandContext& ctx, const CommandSpec& spec, std::string_view display, int n) {
  if (n >= spec.min_args && (spec.max_args < 0 || n <= spec.max_args)) return true;
  write_error(ctx.out, invalid_argument("wrong number of arguments for '" + std::string(display) +
                                        "' (usage: " + std::string(spec.usage) + ")"));
  return false;
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

const CommandSpec* find_subcommand(const CommandSpec& container, std::string_view word) {
  std::array<char, 32> buf;
  std::string_view key = upper(word, buf);
  if (key.empty()) return nullptr;
  for (const auto& sub : container.subcommands)
    if (sub.name == key) return &sub;
  return nullptr;
}

Flow execute(CommandContext& ctx, const CommandSpec* spec, std::span<const std::string_view> args) {
  if (spec == nullptr) {
    ctx.out.error_line("ERR unknown command '" + printable(args[0]) + "'");
    return Flow::kContinue;
  }
  if (!arity_ok(ctx, *spec, spec->name, static_cast<int>(args.size()) - 1)) return Flow::kContinue;
  if (!ctx.conn.authenticated && (spec->flags & kNoAuth) == 0) {
    // Redis's code, so client libraries raise their authentication error.
    ctx.out.error_line(
        "NOAUTH Authentication required: send AUTH <token> (or AUTH <user> <token>) first");
    return Flow::kContinue;
  }
  const CommandSpec* run = spec;
  std::span<const std::string_view> rest = args.subspan(1);
  if (!spec->subcommands.empty() && (spec->handler == nullptr || !rest.empty())) {
    run = find_subcommand(*spec, rest[0]);
    if (run == nullptr) {
      ctx.out.error_line("ERR unknown subcommand '" + printable(rest[0]) + "'. Try " +
                         std::string(spec->name) + " HELP.");
      return Flow::kContinue;
    }
    rest = rest.subspan(1);
    if (!arity_ok(ctx, *run, std::string(spec->name) + " " + std::string(run->name),
                  static_cast<int>(rest.size())))
      return Flow::kContinue;
  }
  if (ctx.metrics == nullptr) return run->handler(ctx, rest);
  auto start = std::chrono::steady_clock::now();
  Flow flow = run->handler(ctx, rest);
  ctx.metrics->observe(static_cast<std::size_t>(spec - command_table().data()),
                       std::chrono::steady_clock::now() - start);
  return flow;
}

void write_subcommand_help(ReplyWriter& w, const CommandSpec& container) {
  w.array(container.subcommands.size() * 2);
  for (const auto& sub : container.subcommands) {
    w.simple(sub.usage.substr(container.name.size() + 1));
    w.simple("    " + std::string(sub.summary));
  }
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
