// The RESP command table. Each row is data: name, arity, flags, handler, usage, summary, as in
// Redis's command table; `holdfast --help` and docs/resp.md are written from the same rows.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/principal.h"
#include "server/resp/codec.h"
#include "server/service.h"

namespace holdfast {
class Authenticator;
class Metrics;
}

namespace holdfast::resp {

// Per-connection state the commands read and change.
struct ConnectionState {
  SessionId id = 0;
  int proto = 2;
  Principal principal;
  bool authenticated = false;
};

struct ServerInfo {
  std::string version;
  bool auth_mode = false;  // credentials configured: every connection must AUTH
};

enum class Flow {
  kContinue,  // the reply is written; go on with the next command
  kBlock,     // a waiter was queued; the reply comes with its outcome
  kClose,     // the reply is written; close the connection after it leaves
};

struct CommandContext {
  Service& service;
  ConnectionState& conn;
  ReplyWriter& out;
  WaiterClient* client;  // told the outcome of a queued waiter
  const ServerInfo& info;
  const Authenticator* auth = nullptr;  // null in local open mode
  Metrics* metrics = nullptr;           // command i of command_table() is metric id i
  WaiterId blocked_on = 0;  // set by handlers that return kBlock
};

using Handler = Flow (*)(CommandContext& ctx, std::span<const std::string_view> args);

enum CommandFlags : std::uint32_t {
  kNoAuth = 1u << 0,  // allowed before the connection authenticated
};

struct CommandSpec {
  std::string_view name;  // upper case
  int min_args;           // arguments after the name
  int max_args;           // -1: no limit
  std::uint32_t flags;
  Handler handler;
  std::string_view usage;
  std::string_view summary;
};

std::span<const CommandSpec> command_table();
// Case-insensitive lookup; nullptr when unknown.
const CommandSpec* find_command(std::string_view name);

// Runs one parsed command (args[0] is its name): arity and authentication checks, then the
// handler. Unknown commands answer "-ERR unknown command '<name>'".
Flow execute(CommandContext& ctx, std::span<const std::string_view> args);

// Handlers, grouped by file.
Flow cmd_ping(CommandContext&, std::span<const std::string_view>);
Flow cmd_hello(CommandContext&, std::span<const std::string_view>);
Flow cmd_auth(CommandContext&, std::span<const std::string_view>);
Flow cmd_quit(CommandContext&, std::span<const std::string_view>);
Flow cmd_command(CommandContext&, std::span<const std::string_view>);
Flow cmd_acquire(CommandContext&, std::span<const std::string_view>);
Flow cmd_try(CommandContext&, std::span<const std::string_view>);
Flow cmd_renew(CommandContext&, std::span<const std::string_view>);
Flow cmd_release(CommandContext&, std::span<const std::string_view>);
Flow cmd_status(CommandContext&, std::span<const std::string_view>);
Flow cmd_list(CommandContext&, std::span<const std::string_view>);
Flow cmd_assign(CommandContext&, std::span<const std::string_view>);
Flow cmd_transfer(CommandContext&, std::span<const std::string_view>);
Flow cmd_unassign(CommandContext&, std::span<const std::string_view>);
Flow cmd_holder(CommandContext&, std::span<const std::string_view>);
Flow cmd_rules_set(CommandContext&, std::span<const std::string_view>);
Flow cmd_rules_get(CommandContext&, std::span<const std::string_view>);
Flow cmd_rules_delete(CommandContext&, std::span<const std::string_view>);

// Writes the reply of a queued waiter's outcome (a hold, an assignment or LOCK_TIMEOUT).
void write_waiter_outcome(ReplyWriter& w, const WaiterOutcome& outcome);

}  // namespace holdfast::resp
