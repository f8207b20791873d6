// The RESP command table. Each row is data, as in Redis's command table: name, arity, flags,
// the options the command takes, what it does, usage and summary; COMMAND (in Redis 7's
// shapes), `holdfast --help` and docs/resp.md are written from the same rows.
//
// Two kinds of rows:
//  - connection commands (PING, HELLO, AUTH, CLIENT, INFO, COMMAND...) are answered by the
//    front end alone (`local`), on the loop;
//  - lock commands are calls into the LockService: `call` issues one from the parsed
//    arguments (positional ones, then the options of `options`), `write` renders its answer.
// A container (CLIENT, CONFIG, COMMAND) has subcommands, each a row of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "server/resp/codec.h"
#include "server/resp/options.h"
#include "service/lock_service.h"

namespace holdfast {
class Authenticator;
class Metrics;
namespace script {
class Engine;
}
namespace pubsub {
class Registry;
}
}  // namespace holdfast

namespace holdfast::resp {

struct CommandSpec;
class Subscriptions;

// Per-connection state the commands read and change, on the loop thread (where CLIENT LIST
// reads other connections' state too).
// MULTI ... EXEC: the commands queued since MULTI.
struct Transaction {
  bool active = false;  // inside MULTI
  bool dirty = false;   // a command was refused while queuing: EXEC answers EXECABORT
  std::vector<std::vector<std::string>> queued;
};

struct ConnectionState {
  SessionId id = 0;
  int proto = 2;
  Principal principal;
  bool authenticated = false;
  // The caller a verified client certificate named (certCommonName), when the connection came
  // with one: it is signed in as that caller from the start, AUTH replaces it, RESET returns to
  // it.
  std::optional<Principal> certificate_principal;
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
  Transaction transaction;

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
  kContinue,  // go on with the next command
  kClose,     // close the connection once the replies so far have left
  kExec,      // run the transaction's queued commands now (EXEC)
};

// What a connection command may touch.
struct CommandContext {
  LockService& service;  // for its figures (INFO, DBSIZE); lock commands are calls instead
  ConnectionState& conn;
  ReplyWriter& out;
  const ServerInfo& info;
  const Authenticator* auth = nullptr;  // null in local open mode
  Metrics* metrics = nullptr;           // command i of command_table() is metric id i
  ClientDirectory* clients = nullptr;   // null: no other connection is visible (tests, fuzzers)
  script::Engine* scripts = nullptr;    // SCRIPT's cache; null: scripts are off
  // The connection's pub/sub subscriptions and lock-event watch (subscriptions.h); null where
  // there is no connection to push to (a fuzzer's, a test's).
  Subscriptions* subscriptions = nullptr;
};

using Handler = Flow (*)(CommandContext& ctx, std::span<const std::string_view> args);

// A lock command's parsed arguments: the positional ones, then its options by index.
struct CallArgs {
  std::span<const std::string_view> positional;
  const OptionValues& options;
  bool in_transaction = false;  // inside EXEC or a script: a blocking command makes one attempt
  script::Engine* scripts = nullptr;   // EVAL, EVALSHA: the engine; null: scripts are off
  pubsub::Registry* pubsub = nullptr;  // EVAL, EVALSHA: PUBLISH from a script; null: none
};
using CallIssuer = Issued (*)(LockService& service, const Caller& caller, const CallArgs& args,
                              Completion& done);
using AnswerWriter = void (*)(ReplyWriter& out, Answer& answer);

enum CommandFlags : std::uint32_t {
  kNoAuth = 1u << 0,       // allowed before the connection authenticated
  kWrite = 1u << 2,        // may change lock state or the rule set (COMMAND flag "write")
  kReadOnly = 1u << 3,     // reads lock state ("readonly")
  kBlocking = 1u << 4,     // may wait for a grant ("blocking")
  kAdmin = 1u << 5,        // the admin or owner role, or a function, only ("admin")
  kKeyed = 1u << 6,        // the first argument is a lock key (COMMAND's first/last key 1)
  kNotQueued = 1u << 7,    // runs at once inside MULTI (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET)
  kRedisErrors = 1u << 8,  // one of Redis's own commands: bad input answers Redis's -ERR lines
  // A lock command whose last positional argument may be left out. Every option of such a row
  // takes a value, so the argument is there exactly when the arguments after the others are
  // odd in number: LOCK.ASSIGN k TTL 5 has no holder id, LOCK.ASSIGN k TTL has holder "TTL".
  kOptionalPositional = 1u << 9,
  // Runs on a RESP2 connection that subscribed (or watches lock events), which runs nothing
  // else, as in Redis: the (un)subscribe commands, LOCK.WATCH and LOCK.UNWATCH, PING, QUIT,
  // RESET.
  kSubscribeContext = 1u << 10,
};

struct CommandSpec {
  std::string_view name;  // upper case; a subcommand's own word (SETNAME in CLIENT SETNAME)
  int min_args;           // arguments after the name (after the subcommand, for one)
  int max_args;           // -1: no limit
  std::uint32_t flags;
  int positional;  // lock commands: arguments before the options (-1: every argument)
  std::span<const OptionSpec> options;  // lock commands
  // A connection command's handler; null for a lock command, and for a container without a
  // reply of its own (CLIENT: its subcommand runs).
  Handler local;
  CallIssuer call;     // lock commands
  AnswerWriter write;  // lock commands
  std::string_view usage;
  std::string_view summary;
  // COMMAND DOCS group: "connection", "server", "lock" or "rules".
  std::string_view group = "";
  std::span<const CommandSpec> subcommands = {};
};

// Whether `given` arguments (after the name, or the subcommand) fit the row's arity.
inline bool accepts_arity(const CommandSpec& spec, std::size_t given) {
  const auto n = static_cast<long long>(given);
  return n >= spec.min_args && (spec.max_args < 0 || n <= spec.max_args);
}
// A lock command's arguments as its row reads them: `positional` gets the positional ones,
// `values` the options after them; the error when the options are refused. The one reading
// for commands from a connection, queued in MULTI, and called from a script.
std::optional<Error> read_call_args(const CommandSpec& spec, std::span<const std::string_view> args,
                                    std::span<const std::string_view>& positional,
                                    OptionValues& values);
// How many of a lock command's `args` (after its name) are positional; the rest are options.
inline std::size_t positional_count(const CommandSpec& spec, std::size_t args) {
  std::size_t n = spec.positional < 0 ? args : static_cast<std::size_t>(spec.positional);
  if ((spec.flags & kOptionalPositional) && args >= n - 1 && (args - (n - 1)) % 2 == 0) --n;
  return n < args ? n : args;
}

std::span<const CommandSpec> command_table();
// Case-insensitive lookup; nullptr when unknown.
const CommandSpec* find_command(std::string_view name);
// A container's subcommand by its word, case-insensitively; nullptr when unknown.
const CommandSpec* find_subcommand(const CommandSpec& container, std::string_view word);
// The row's index: its metric id.
inline std::uint16_t command_id(const CommandSpec& spec) {
  return static_cast<std::uint16_t>(&spec - command_table().data());
}

// Handlers, grouped by file.
Flow cmd_ping(CommandContext&, std::span<const std::string_view>);
Flow cmd_hello(CommandContext&, std::span<const std::string_view>);
Flow cmd_auth(CommandContext&, std::span<const std::string_view>);
Flow cmd_quit(CommandContext&, std::span<const std::string_view>);
Flow cmd_reset(CommandContext&, std::span<const std::string_view>);
Flow cmd_select(CommandContext&, std::span<const std::string_view>);
// SELECT's reply, from a connection or a script: OK for 0, Redis's out-of-range error else.
void write_select(ReplyWriter& out, std::string_view index);
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
// transaction_commands.cc
Flow cmd_multi(CommandContext&, std::span<const std::string_view>);
Flow cmd_exec(CommandContext&, std::span<const std::string_view>);
Flow cmd_discard(CommandContext&, std::span<const std::string_view>);
Flow cmd_watch(CommandContext&, std::span<const std::string_view>);
Flow cmd_unwatch(CommandContext&, std::span<const std::string_view>);
// command_docs.cc
Flow cmd_command(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_count(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_info(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_docs(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_list(CommandContext&, std::span<const std::string_view>);
Flow cmd_command_help(CommandContext&, std::span<const std::string_view>);
// pubsub_commands.cc: Redis's pub/sub and LOCK.WATCH (docs/resp.md, docs/events.md).
Flow cmd_subscribe(CommandContext&, std::span<const std::string_view>);
Flow cmd_unsubscribe(CommandContext&, std::span<const std::string_view>);
Flow cmd_psubscribe(CommandContext&, std::span<const std::string_view>);
Flow cmd_punsubscribe(CommandContext&, std::span<const std::string_view>);
Flow cmd_publish(CommandContext&, std::span<const std::string_view>);
Flow cmd_pubsub_channels(CommandContext&, std::span<const std::string_view>);
Flow cmd_pubsub_numsub(CommandContext&, std::span<const std::string_view>);
Flow cmd_pubsub_numpat(CommandContext&, std::span<const std::string_view>);
Flow cmd_pubsub_help(CommandContext&, std::span<const std::string_view>);
Flow cmd_lock_watch(CommandContext&, std::span<const std::string_view>);
Flow cmd_lock_unwatch(CommandContext&, std::span<const std::string_view>);
// PUBLISH and PUBSUB called from a script (`args` from the command's name on, `spec` its row),
// answered on `out` as Redis answers a script; false when args[0] is neither (the caller goes
// on).
bool script_pubsub(pubsub::Registry& registry, ReplyWriter& out, const CommandSpec& spec,
                   std::span<const std::string_view> args);
// script_commands.cc
Flow cmd_script_load(CommandContext&, std::span<const std::string_view>);
Flow cmd_script_exists(CommandContext&, std::span<const std::string_view>);
Flow cmd_script_flush(CommandContext&, std::span<const std::string_view>);
Flow cmd_script_kill(CommandContext&, std::span<const std::string_view>);
Flow cmd_script_help(CommandContext&, std::span<const std::string_view>);
// Lock commands (lock_commands.cc, rules_commands.cc): their issuers, options and writers.
Issued call_acquire(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_try(LockService&, const Caller&, const CallArgs&, Completion&);
// multi_key_commands.cc: LOCK.ACQUIREALL, LOCK.TRYALL (their arguments are all positional).
Issued call_acquire_all(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_try_all(LockService&, const Caller&, const CallArgs&, Completion&);
void write_group(ReplyWriter&, Answer&);  // a multi-key grant, or nil
Issued call_renew(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_release(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_status(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_list(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_assign(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_transfer(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_unassign(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_holder(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_check(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_rules_set(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_rules_get(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_rules_delete(LockService&, const Caller&, const CallArgs&, Completion&);
// redis_commands.cc: the Redis lock idiom.
Issued call_set(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_get(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_del(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_exists(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_pexpire(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_expire(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_pexpireat(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_expireat(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_persist(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_pttl(LockService&, const Caller&, const CallArgs&, Completion&);
// script_commands.cc: EVAL, EVALSHA.
Issued call_eval(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_evalsha(LockService&, const Caller&, const CallArgs&, Completion&);
void write_script_reply(ReplyWriter&, Answer&);
void write_set(ReplyWriter&, Answer&);  // OK, or nil when not set; with GET: the old value
void write_get(ReplyWriter&, Answer&);
void write_count(ReplyWriter&, Answer&);
void write_pttl(ReplyWriter&, Answer&);
void write_ttl(ReplyWriter&, Answer&);

void write_grant(ReplyWriter&, Answer&);  // a hold with its handle, or nil
void write_renewal(ReplyWriter&, Answer&);
void write_release(ReplyWriter&, Answer&);
void write_status_answer(ReplyWriter&, Answer&);
void write_list(ReplyWriter&, Answer&);
void write_assignment(ReplyWriter&, Answer&);
void write_transfer(ReplyWriter&, Answer&);
void write_unassign(ReplyWriter&, Answer&);
void write_holder_answer(ReplyWriter&, Answer&);
void write_rules_set(ReplyWriter&, Answer&);
void write_rules_get(ReplyWriter&, Answer&);
void write_ok(ReplyWriter&, Answer&);

// The options of each lock command, with the index each is found at in CallArgs::options.
namespace opt {
enum Acquire { kTtl, kTimeout, kOwner, kSession, kMode, kPermits, kTake, kLockDelay };
enum Try { kTryTtl, kTryOwner, kTrySession, kTryMode, kTryPermits, kTryTake, kTryLockDelay };
enum List { kMatch, kCursor, kCount };
enum Assign { kAssignTtl, kAssignTimeout, kAssignLockDelay };
enum Transfer { kFrom };
}  // namespace opt
inline constexpr OptionSpec kAcquireOptions[] = {
    {"TTL", OptionKind::kMillis, "TTL is required (milliseconds)"},
    {"TIMEOUT", OptionKind::kMillis, "TIMEOUT is required (milliseconds; 0 for one attempt)"},
    {"OWNER", OptionKind::kText, ""},
    {"SESSION", OptionKind::kFlag, ""},
    {"MODE", OptionKind::kText, ""},
    {"PERMITS", OptionKind::kCount, ""},
    {"TAKE", OptionKind::kCount, ""},
    {"LOCKDELAY", OptionKind::kMillis, ""},
};
inline constexpr OptionSpec kTryOptions[] = {
    {"TTL", OptionKind::kMillis, "TTL is required (milliseconds)"},
    {"OWNER", OptionKind::kText, ""},
    {"SESSION", OptionKind::kFlag, ""},
    {"MODE", OptionKind::kText, ""},
    {"PERMITS", OptionKind::kCount, ""},
    {"TAKE", OptionKind::kCount, ""},
    {"LOCKDELAY", OptionKind::kMillis, ""},
};
inline constexpr OptionSpec kRenewOptions[] = {
    {"TTL", OptionKind::kMillis, "TTL is required (milliseconds)"},
};
inline constexpr OptionSpec kListOptions[] = {
    {"MATCH", OptionKind::kText, ""},
    {"CURSOR", OptionKind::kText, ""},
    {"COUNT", OptionKind::kCount, ""},
};
inline constexpr OptionSpec kAssignOptions[] = {
    {"TTL", OptionKind::kMillis, ""},
    {"TIMEOUT", OptionKind::kMillis, ""},
    {"LOCKDELAY", OptionKind::kMillis, ""},
};
inline constexpr OptionSpec kTransferOptions[] = {
    {"FROM", OptionKind::kText, ""},
};

// CLIENT HELP, COMMAND HELP: each subcommand's usage (after the container's name) and summary,
// as lines, from the table.
void write_subcommand_help(ReplyWriter& w, const CommandSpec& container);

}  // namespace holdfast::resp
