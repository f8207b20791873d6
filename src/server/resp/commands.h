// The RESP command table. Each row is data, as in Redis's command table: name, arity, flags,
// the options the command takes, what it does, usage and summary; COMMAND, `holdfast --help`
// and docs/resp.md are written from the same rows.
//
// Two kinds of rows:
//  - connection commands (PING, HELLO, AUTH, QUIT, COMMAND) run in the front end (`local`);
//  - lock commands are calls into the LockService: `call` issues one from the parsed
//    arguments (positional ones, then the options of `options`), `write` renders its answer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/principal.h"
#include "server/resp/codec.h"
#include "server/resp/options.h"
#include "service/lock_service.h"

namespace holdfast {
class Authenticator;
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
  kContinue,  // go on with the next command
  kClose,     // close the connection once the replies so far have left
};

// What a connection command may touch.
struct LocalContext {
  ConnectionState& conn;
  ReplyWriter& out;
  const ServerInfo& info;
  const Authenticator* auth = nullptr;  // null in local open mode
};
using LocalHandler = Flow (*)(LocalContext& ctx, std::span<const std::string_view> args);

// A lock command's parsed arguments: the positional ones, then its options by index.
struct CallArgs {
  std::span<const std::string_view> positional;
  const OptionValues& options;
};
using CallIssuer = Issued (*)(LockService& service, const Caller& caller, const CallArgs& args,
                              Completion& done);
using AnswerWriter = void (*)(ReplyWriter& out, Answer& answer);

enum CommandFlags : std::uint32_t {
  kNoAuth = 1u << 0,  // allowed before the connection authenticated
};

struct CommandSpec {
  std::string_view name;  // upper case
  int min_args;           // arguments after the name
  int max_args;           // -1: no limit
  std::uint32_t flags;
  int positional;                       // lock commands: arguments before the options
  std::span<const OptionSpec> options;  // lock commands
  LocalHandler local;                   // connection commands
  CallIssuer call;                      // lock commands
  AnswerWriter write;                   // lock commands
  std::string_view usage;
  std::string_view summary;
};

std::span<const CommandSpec> command_table();
// Case-insensitive lookup; nullptr when unknown.
const CommandSpec* find_command(std::string_view name);
// The row's index: its metric id.
inline std::uint16_t command_id(const CommandSpec& spec) {
  return static_cast<std::uint16_t>(&spec - command_table().data());
}

// Connection commands, by file.
Flow cmd_ping(LocalContext&, std::span<const std::string_view>);
Flow cmd_quit(LocalContext&, std::span<const std::string_view>);
Flow cmd_command(LocalContext&, std::span<const std::string_view>);
Flow cmd_hello(LocalContext&, std::span<const std::string_view>);
Flow cmd_auth(LocalContext&, std::span<const std::string_view>);

// Lock commands (lock_commands.cc, rules_commands.cc): their issuers, options and writers.
Issued call_acquire(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_try(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_renew(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_release(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_status(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_list(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_assign(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_transfer(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_unassign(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_holder(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_rules_set(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_rules_get(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_rules_delete(LockService&, const Caller&, const CallArgs&, Completion&);

void write_grant(ReplyWriter&, Answer&);       // a hold with its handle, or nil
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
enum Acquire { kTtl, kTimeout, kOwner, kSession };
enum Try { kTryTtl, kTryOwner, kTrySession };
enum List { kMatch, kCursor, kCount };
enum Assign { kAssignTtl, kAssignTimeout };
enum Transfer { kFrom };
}  // namespace opt
inline constexpr OptionSpec kAcquireOptions[] = {
    {"TTL", OptionKind::kMillis, "TTL is required (milliseconds)"},
    {"TIMEOUT", OptionKind::kMillis, "TIMEOUT is required (milliseconds; 0 for one attempt)"},
    {"OWNER", OptionKind::kText, ""},
    {"SESSION", OptionKind::kFlag, ""},
};
inline constexpr OptionSpec kTryOptions[] = {
    {"TTL", OptionKind::kMillis, "TTL is required (milliseconds)"},
    {"OWNER", OptionKind::kText, ""},
    {"SESSION", OptionKind::kFlag, ""},
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
};
inline constexpr OptionSpec kTransferOptions[] = {
    {"FROM", OptionKind::kText, "FROM <fromId> is required"},
};

}  // namespace holdfast::resp
