#include "server/resp/commands.h"

#include <array>
#include <string>
#include <unordered_map>

namespace holdfast::resp {
namespace {

constexpr int kLocal = 0;  // connection commands take no options: `positional` is unused

constexpr CommandSpec kCommands[] = {
    {"PING", 0, 1, kNoAuth, kLocal, {}, cmd_ping, nullptr, nullptr, "PING [message]",
     "Answers PONG (or the message)."},
    {"HELLO", 0, 6, kNoAuth, kLocal, {}, cmd_hello, nullptr, nullptr,
     "HELLO [2|3] [AUTH <user> <token>] [SETNAME <name>]",
     "Chooses the protocol version and optionally authenticates."},
    {"AUTH", 1, 2, kNoAuth, kLocal, {}, cmd_auth, nullptr, nullptr,
     "AUTH <token> | AUTH <user> <token>", "Authenticates the connection with a bearer token."},
    {"QUIT", 0, 0, kNoAuth, kLocal, {}, cmd_quit, nullptr, nullptr, "QUIT",
     "Closes the connection after the reply."},
    {"COMMAND", 0, -1, kNoAuth, kLocal, {}, cmd_command, nullptr, nullptr, "COMMAND [DOCS|COUNT]",
     "Lists the commands (for client libraries)."},
    {"LOCK.ACQUIRE", 5, 8, 0, 1, kAcquireOptions, nullptr, call_acquire, write_grant,
     "LOCK.ACQUIRE <key> TTL <ms> TIMEOUT <ms> [OWNER <owner>] [SESSION]",
     "Waits up to TIMEOUT in the key's FIFO queue; answers a hold or LOCK_TIMEOUT."},
    {"LOCK.TRY", 3, 6, 0, 1, kTryOptions, nullptr, call_try, write_grant,
     "LOCK.TRY <key> TTL <ms> [OWNER <owner>] [SESSION]", "One attempt; answers a hold or nil."},
    {"LOCK.RENEW", 4, 4, 0, 2, kRenewOptions, nullptr, call_renew, write_renewal,
     "LOCK.RENEW <key> <handle> TTL <ms>", "Extends the lease of the current handle."},
    {"LOCK.RELEASE", 2, 2, 0, 2, {}, nullptr, call_release, write_release,
     "LOCK.RELEASE <key> <handle>", "Frees the key if the handle is its current one."},
    {"LOCK.STATUS", 1, 1, 0, 1, {}, nullptr, call_status, write_status_answer,
     "LOCK.STATUS <key>", "Who holds the key, without its handle."},
    {"LOCK.LIST", 0, 6, 0, 0, kListOptions, nullptr, call_list, write_list,
     "LOCK.LIST [MATCH <glob>] [CURSOR <c>] [COUNT <n>]", "Every hold, paged (admin)."},
    {"LOCK.ASSIGN", 2, 6, 0, 2, kAssignOptions, nullptr, call_assign, write_assignment,
     "LOCK.ASSIGN <key> <holderId> [TTL <ms>] [TIMEOUT <ms>]", "Assigns the key to a holder id."},
    {"LOCK.TRANSFER", 4, 4, 0, 2, kTransferOptions, nullptr, call_transfer, write_transfer,
     "LOCK.TRANSFER <key> <toId> FROM <fromId>", "Moves an assigned hold to another holder id."},
    {"LOCK.UNASSIGN", 1, 2, 0, 2, {}, nullptr, call_unassign, write_unassign,
     "LOCK.UNASSIGN <key> [<holderId>]", "Frees an assigned hold."},
    {"LOCK.HOLDER", 1, 1, 0, 1, {}, nullptr, call_holder, write_holder_answer,
     "LOCK.HOLDER <key>", "The holder id of an assigned key."},
    {"RULES.SET", 1, 1, 0, 1, {}, nullptr, call_rules_set, write_rules_set, "RULES.SET <toml>",
     "Installs or replaces the lock rule set (admin)."},
    {"RULES.GET", 0, 0, 0, 0, {}, nullptr, call_rules_get, write_rules_get, "RULES.GET",
     "The installed rule set as {name, toml}, or nil (admin)."},
    {"RULES.DELETE", 1, 1, 0, 1, {}, nullptr, call_rules_delete, write_ok, "RULES.DELETE <name>",
     "Removes the rule set: open access again (admin)."},
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


}  // namespace

std::span<const CommandSpec> command_table() { return kCommands; }

const CommandSpec* find_command(std::string_view name) {
  std::array<char, 32> buf;
  std::string_view key = upper(name, buf);
  if (key.empty()) return nullptr;
  auto it = index().find(key);
  return it == index().end() ? nullptr : it->second;
}

Flow cmd_ping(LocalContext& ctx, std::span<const std::string_view> args) {
  if (args.empty()) {
    ctx.out.simple("PONG");
  } else {
    ctx.out.bulk(args[0]);
  }
  return Flow::kContinue;
}

Flow cmd_quit(LocalContext& ctx, std::span<const std::string_view>) {
  ctx.out.simple("OK");
  return Flow::kClose;
}

Flow cmd_command(LocalContext& ctx, std::span<const std::string_view> args) {
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

}  // namespace holdfast::resp
