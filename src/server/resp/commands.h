// The RESP command table. Each row is data: name, arity, flags, handler, usage, summary, as in
// Redis's command table; `holdfast --help` and docs/resp.md are written from the same rows.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/principal.h"
#include "server/lock_service.h"
#include "server/resp/codec.h"

namespace holdfast {
class Authenticator;
class Metrics;
}  // namespace holdfast

namespace holdfast::resp {

struct CommandSpec;

// Per-connection state the commands read and change.
//
// Threads: on a node over PostgreSQL the lock commands run on executor threads, one at a time
// per connection, and only read this. Everything that writes it (AUTH, HELLO, CLIENT, RESET,
// ...) is a kLocal command and runs on the event loop, where CLIENT LIST reads other
// connections' state.
struct ConnectionState {
  SessionId id = 0;
  int proto = 2;
  Principal principal;
  bool authenticated = false;
  // CLIENT SETNAME (or HELLO ... SETNAME): how CLIENT LIST and log lines name the connection.
  // Empty: no name. Never holds spaces or control characters.
  std::string name;
  // CLIENT SETINFO LIB-NAME / LIB-VER: which client library is talking (shown by CLIENT LIST).
  std::string lib_name, lib_ver;
  // The peer and our end of the socket as CLIENT LIST shows them ("127.0.0.1:53110", or
  // "/path/holdfast.sock:0" on the Unix socket), and its descriptor.
  std::string peer_address, local_address;
  int fd = -1;
  std::chrono::steady_clock::time_point opened_at{}, last_active{};
  const CommandSpec* last_command = nullptr;  // set by the connection before each command
  // CLIENT NO-EVICT / NO-TOUCH: accepted and shown as flags; a lock server neither evicts
  // clients nor keeps access times, so they change nothing else.
  bool no_evict = false, no_touch = false;
  // Buffer figures for CLIENT LIST (qbuf, qbuf-free, omem): bytes of input read and not yet
  // run, room left in the input buffer, replies not yet written. Filled in when listed.
  std::size_t input_buffered = 0, input_free = 0, output_buffered = 0;

  // "id=7 name=worker-1 addr=127.0.0.1:53110": how log lines about this connection name it.
  std::string log_label() const;
};

// The Redis error line (ERR ...) when `name` cannot name a connection (it must be printable
// ASCII without spaces, as in Redis); nullopt when it can. Empty is allowed: no name.
std::optional<std::string> client_name_error(std::string_view name);

// What connection-level commands see of the other connections of the RESP front end
// (CLIENT LIST, CLIENT KILL, INFO clients). Implemented over the connection hub
// (LiveClients in resp/connection.h). Used on the event loop thread only.
class ClientDirectory {
 public:
  virtual ~ClientDirectory() = default;
  // Calls `fn` for every open connection, in id order.
  virtual void for_each(const std::function<void(const ConnectionState&)>& fn) const = 0;
  virtual std::size_t count() const = 0;
  // Connections accepted since the server started (both front ends: ids are shared).
  virtual std::uint64_t accepted() const = 0;
  // Closes connection `id` once the current event-loop step is over. false: no such
  // connection. REQUIRES: `id` is not the calling connection (that one answers Flow::kClose).
  virtual bool kill(SessionId id) = 0;
};

struct ServerInfo {
  std::string version;
  bool auth_mode = false;  // credentials configured: every connection must AUTH
  // What INFO and CONFIG GET report; set once before serving.
  std::string store = "embedded";  // "embedded" (table + log) or "postgres" (scale-out node)
  std::string fsync = "always";    // "always" or "never"
  std::string tcp_address{};       // the bound RESP address, e.g. "127.0.0.1:7420"; empty: off
  std::string unix_path{};         // empty: off
  std::string data_dir{};
  std::chrono::system_clock::time_point started_at = std::chrono::system_clock::now();
};

enum class Flow {
  kContinue,  // the reply is written; go on with the next command
  kBlock,     // a waiter was queued; the reply comes with its outcome
  kClose,     // the reply is written; close the connection after it leaves
};

struct CommandContext {
  LockService& service;
  ConnectionState& conn;
  ReplyWriter& out;
  WaiterClient* client;  // told the outcome of a queued waiter
  const ServerInfo& info;
  const Authenticator* auth = nullptr;  // null in local open mode
  Metrics* metrics = nullptr;           // command i of command_table() is metric id i
  ClientDirectory* clients = nullptr;   // null: no other connection is visible (tests, fuzzers)
  WaiterId blocked_on = 0;              // set by handlers that return kBlock
};

using Handler = Flow (*)(CommandContext& ctx, std::span<const std::string_view> args);

enum CommandFlags : std::uint32_t {
  kNoAuth = 1u << 0,  // allowed before the connection authenticated
  // Answered by the front end alone (connection state, server figures, the command table),
  // never by a lock-service call that may block: runs on the event loop, also on a node over
  // PostgreSQL, where other commands run on executor threads.
  kLocal = 1u << 1,
  kWrite = 1u << 2,     // may change lock state or the rule set (COMMAND flag "write")
  kReadOnly = 1u << 3,  // reads lock state ("readonly")
  kBlocking = 1u << 4,  // may wait for a grant ("blocking")
  kAdmin = 1u << 5,     // the admin or owner role, or a function, only ("admin")
  kKeyed = 1u << 6,     // the first argument is a lock key (COMMAND's first/last key 1)
};

struct CommandSpec {
  std::string_view name;  // upper case; a subcommand's own word (SETNAME in CLIENT SETNAME)
  int min_args;           // arguments after the name (after the subcommand, for one)
  int max_args;           // -1: no limit
  std::uint32_t flags;
  Handler handler;  // null for a container: execute() runs the subcommand's handler
  std::string_view usage;
  std::string_view summary;
  // COMMAND DOCS group: "connection", "server", "lock" or "rules".
  std::string_view group = "";
  std::span<const CommandSpec> subcommands = {};
};

std::span<const CommandSpec> command_table();
// Case-insensitive lookup; nullptr when unknown.
const CommandSpec* find_command(std::string_view name);
// A container's subcommand by its word, case-insensitively; nullptr when unknown.
const CommandSpec* find_subcommand(const CommandSpec& container, std::string_view word);
// Whether the command runs on the event loop even where others are offloaded (kLocal, or
// unknown: the error needs no service).
inline bool runs_on_loop(const CommandSpec* spec) {
  return spec == nullptr || (spec->flags & kLocal) != 0;
}

// Runs one parsed command (args[0] is its name; `spec` is find_command(args[0]), may be null):
// arity and authentication checks, the subcommand of a container, then the handler. Unknown
// commands answer "-ERR unknown command '<name>'"; before AUTH, commands without kNoAuth
// answer "-NOAUTH ...".
Flow execute(CommandContext& ctx, const CommandSpec* spec, std::span<const std::string_view> args);
inline Flow execute(CommandContext& ctx, std::span<const std::string_view> args) {
  return execute(ctx, find_command(args[0]), args);
}

// Handlers, grouped by file.
Flow cmd_ping(CommandContext&, std::span<const std::string_view>);
Flow cmd_hello(CommandContext&, std::span<const std::string_view>);
Flow cmd_auth(CommandContext&, std::span<const std::string_view>);
Flow cmd_quit(CommandContext&, std::span<const std::string_view>);
Flow cmd_reset(CommandContext&, std::span<const std::string_view>);
Flow cmd_select(CommandContext&, std::span<const std::string_view>);
Flow cmd_echo(CommandContext&, std::span<const std::string_view>);
// client_commands.cc
Flow cmd_client_id(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_getname(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_setname(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_setinfo(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_info(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_list(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_kill(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_no_evict(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_no_touch(CommandContext&, std::span<const std::string_view>);
Flow cmd_client_help(CommandContext&, std::span<const std::string_view>);
// info_command.cc
Flow cmd_info(CommandContext&, std::span<const std::string_view>);
Flow cmd_dbsize(CommandContext&, std::span<const std::string_view>);
Flow cmd_time(CommandContext&, std::span<const std::string_view>);
Flow cmd_config_get(CommandContext&, std::span<const std::string_view>);
Flow cmd_config_set(CommandContext&, std::span<const std::string_view>);
// command_docs.cc
Flow cmd_command(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_count(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_info(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_docs(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_list(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_help(CommandContext&, std::span<const std::string_view>);
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

// CLIENT HELP, COMMAND HELP: each subcommand's usage (after the container's name) and summary,
// as lines, from the table.
void write_subcommand_help(ReplyWriter& w, const CommandSpec& container);

// Writes the reply of a queued waiter's outcome (a hold, an assignment or LOCK_TIMEOUT).
void write_waiter_outcome(ReplyWriter& w, const WaiterOutcome& outcome);

}  // namespace holdfast::resp
