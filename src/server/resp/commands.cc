#include "server/resp/commands.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <string>

#include "server/resp/ascii.h"
#include "server/resp/value_commands.h"

namespace holdfast::resp {
namespace {

// Usage lines follow a small grammar that COMMAND DOCS turns into Redis argument
// descriptions (resp/usage_grammar.h): <name> an argument, WORD a literal, [..] optional,
// a|b one of, <name>... repeated.

// One row a command, as in Redis's command table.
// clang-format off
constexpr CommandSpec kClientSubcommands[] = {
    {"ID", 0, 0, 0, 0, {}, cmd_client_id, nullptr, nullptr,
     "CLIENT ID",
     "The connection's id (the session id of its SESSION holds).", "connection"},
    {"GETNAME", 0, 0, 0, 0, {}, cmd_client_getname, nullptr, nullptr,
     "CLIENT GETNAME",
     "The connection's name, or nil.", "connection"},
    {"SETNAME", 1, 1, 0, 0, {}, cmd_client_setname, nullptr, nullptr,
     "CLIENT SETNAME <name>",
     "Names the connection in CLIENT LIST and the server's log lines (empty: no name).",
     "connection"},
    {"SETINFO", 2, 2, 0, 0, {}, cmd_client_setinfo, nullptr, nullptr,
     "CLIENT SETINFO LIB-NAME|LIB-VER <value>",
     "Records the client library's name or version, shown by CLIENT LIST.", "connection"},
    {"INFO", 0, 0, 0, 0, {}, cmd_client_info, nullptr, nullptr,
     "CLIENT INFO",
     "This connection, as a CLIENT LIST line.", "connection"},
    {"LIST", 0, -1, 0, 0, {}, cmd_client_list, nullptr, nullptr,
     "CLIENT LIST [TYPE <type>] [ID <id>...]",
     "One line per open RESP connection: id, addresses, name, age, idle time, last command, user.",
     "connection"},
    {"KILL", 1, -1, kAdmin, 0, {}, cmd_client_kill, nullptr, nullptr,
     "CLIENT KILL [<addr>] [ID <id>] [ADDR <addr>] [LADDR <laddr>] [USER <user>] [TYPE <type>] "
     "[SKIPME YES|NO] [MAXAGE <seconds>]",
     "Closes connections (admin); their waiters leave and their SESSION holds are released.",
     "connection"},
    {"NO-EVICT", 1, 1, 0, 0, {}, cmd_client_no_evict, nullptr, nullptr,
     "CLIENT NO-EVICT ON|OFF",
     "Accepted and shown as a flag: Holdfast never evicts connections.", "connection"},
    {"NO-TOUCH", 1, 1, 0, 0, {}, cmd_client_no_touch, nullptr, nullptr,
     "CLIENT NO-TOUCH ON|OFF",
     "Accepted and shown as a flag: Holdfast keeps no access times.", "connection"},
    {"HELP", 0, 0, 0, 0, {}, cmd_client_help, nullptr, nullptr,
     "CLIENT HELP",
     "The CLIENT subcommands.", "connection"},
};
// clang-format on

// One row a command, as in Redis's command table.
// clang-format off
constexpr CommandSpec kConfigSubcommands[] = {
    {"GET", 1, -1, 0, 0, {}, cmd_config_get, nullptr, nullptr,
     "CONFIG GET <parameter>...",
     "Read-only settings as Redis names them (save, appendonly, appendfsync, databases, dir, "
     "port, ...).", "server"},
    {"SET", 2, -1, kAdmin, 0, {}, cmd_config_set, nullptr, nullptr,
     "CONFIG SET <parameter> <value>",
     "Refused: settings come from holdfast.toml and flags.", "server"},
};
// clang-format on

// One row a command, as in Redis's command table.
// clang-format off
constexpr CommandSpec kCommandSubcommands[] = {
    {"COUNT", 0, 0, 0, 0, {}, cmd_command_count, nullptr, nullptr,
     "COMMAND COUNT",
     "How many commands there are.", "server"},
    {"INFO", 0, -1, 0, 0, {}, cmd_command_info, nullptr, nullptr,
     "COMMAND INFO [<command>...]",
     "Each command's name, arity, flags, key positions and subcommands (all when none named).",
     "server"},
    {"DOCS", 0, -1, 0, 0, {}, cmd_command_docs, nullptr, nullptr,
     "COMMAND DOCS [<command>...]",
     "Each command's summary, group and arguments (all when none named).", "server"},
    {"LIST", 0, 3, 0, 0, {}, cmd_command_list, nullptr, nullptr,
     "COMMAND LIST [FILTERBY PATTERN|ACLCAT|MODULE <value>]",
     "The command names.", "server"},
    {"HELP", 0, 0, 0, 0, {}, cmd_command_help, nullptr, nullptr,
     "COMMAND HELP",
     "The COMMAND subcommands.", "server"},
};
// clang-format on

// One row a command, as in Redis's command table.
// clang-format off
constexpr CommandSpec kScriptSubcommands[] = {
    {"LOAD", 1, 1, 0, 0, {}, cmd_script_load, nullptr, nullptr,
     "SCRIPT LOAD <script>",
     "Compiles and keeps a script; answers its SHA-1 for EVALSHA.", "scripting"},
    {"EXISTS", 1, -1, 0, 0, {}, cmd_script_exists, nullptr, nullptr,
     "SCRIPT EXISTS <sha1>...",
     "1 or 0 for each SHA-1: whether that script is kept.", "scripting"},
    {"FLUSH", 0, 1, 0, 0, {}, cmd_script_flush, nullptr, nullptr,
     "SCRIPT FLUSH [ASYNC|SYNC]",
     "Forgets every kept script.", "scripting"},
    {"KILL", 0, 0, 0, 0, {}, cmd_script_kill, nullptr, nullptr,
     "SCRIPT KILL",
     "NOTBUSY: no script runs while a command is read (a script past its time limit stops "
     "itself).", "scripting"},
    {"HELP", 0, 0, 0, 0, {}, cmd_script_help, nullptr, nullptr,
     "SCRIPT HELP",
     "The SCRIPT subcommands.", "scripting"},
};
// clang-format on

// One row a command, as in Redis's command table.
// clang-format off
constexpr CommandSpec kPubsubSubcommands[] = {
    {"CHANNELS", 0, -1, kRedisErrors, 0, {}, cmd_pubsub_channels, nullptr, nullptr,
     "PUBSUB CHANNELS [<pattern>]",
     "The channels with a subscriber on this server, matching the glob if given.", "pubsub"},
    {"NUMSUB", 0, -1, kRedisErrors, 0, {}, cmd_pubsub_numsub, nullptr, nullptr,
     "PUBSUB NUMSUB [<channel>...]",
     "Each channel and its subscribers on this server (patterns not counted).", "pubsub"},
    {"NUMPAT", 0, 0, kRedisErrors, 0, {}, cmd_pubsub_numpat, nullptr, nullptr,
     "PUBSUB NUMPAT",
     "How many patterns have a subscriber on this server.", "pubsub"},
    {"HELP", 0, 0, kRedisErrors, 0, {}, cmd_pubsub_help, nullptr, nullptr,
     "PUBSUB HELP",
     "The PUBSUB subcommands.", "pubsub"},
};
// clang-format on

// One row a command, as in Redis's command table.
// clang-format off
constexpr CommandSpec kLockAndServerCommands[] = {
    {"PING", 0, 1, kNoAuth | kSubscribeContext, 0, {}, cmd_ping, nullptr, nullptr,
     "PING [<message>]",
     "Answers PONG (or the message).", "connection"},
    {"HELLO", 0, 6, kNoAuth, 0, {}, cmd_hello, nullptr, nullptr,
     "HELLO [2|3] [AUTH <user> <token>] [SETNAME <name>]",
     "Chooses the protocol version and optionally authenticates and names the connection.",
     "connection"},
    {"AUTH", 1, 2, kNoAuth, 0, {}, cmd_auth, nullptr, nullptr,
     "AUTH [<user>] <token>",
     "Authenticates the connection with a bearer token; user \"default\" means no user name.",
     "connection"},
    {"QUIT", 0, 0, kNoAuth | kNotQueued | kSubscribeContext, 0, {}, cmd_quit, nullptr, nullptr,
     "QUIT",
     "Closes the connection after the reply.", "connection"},
    {"RESET", 0, 0, kNoAuth | kNotQueued | kSubscribeContext, 0, {}, cmd_reset, nullptr, nullptr,
     "RESET",
     "Back to a fresh connection: RESP2, no name, no subscriptions, unauthenticated in auth "
     "mode; holds stay.",
     "connection"},
    {"SELECT", 1, 1, kRedisErrors, 0, {}, cmd_select, nullptr, nullptr,
     "SELECT <index>",
     "Database 0 is the only one: OK for 0, an error otherwise.", "connection"},
    {"ECHO", 1, 1, 0, 0, {}, cmd_echo, nullptr, nullptr,
     "ECHO <message>",
     "Answers the message.", "connection"},
    {"MULTI", 0, 0, kNotQueued, 0, {}, cmd_multi, nullptr, nullptr,
     "MULTI",
     "Starts a transaction: the commands until EXEC are queued, then run back to back.",
     "transactions"},
    {"EXEC", 0, 0, kNotQueued, 0, {}, cmd_exec, nullptr, nullptr,
     "EXEC",
     "Runs the queued commands with nothing in between; answers their replies as an array.",
     "transactions"},
    {"DISCARD", 0, 0, kNotQueued, 0, {}, cmd_discard, nullptr, nullptr,
     "DISCARD",
     "Drops the queued commands and ends the transaction.", "transactions"},
    {"WATCH", 1, -1, kNotQueued, 0, {}, cmd_watch, nullptr, nullptr,
     "WATCH <key>...",
     "Refused: keys change only through lock commands, whose own conditions guard them.",
     "transactions"},
    {"UNWATCH", 0, 0, kNotQueued, 0, {}, cmd_unwatch, nullptr, nullptr,
     "UNWATCH",
     "OK: nothing is watched.", "transactions"},
    {"CLIENT", 1, -1, 0, 0, {}, nullptr, nullptr, nullptr,
     "CLIENT <subcommand> [<arg>...]",
     "Connection introspection and naming.", "connection", kClientSubcommands},
    {"INFO", 0, -1, 0, 0, {}, cmd_info, nullptr, nullptr,
     "INFO [<section>...]",
     "Server, clients, memory, persistence, stats, keyspace and holdfast sections, as Redis's "
     "INFO.", "server"},
    {"DBSIZE", 0, 0, kReadOnly, 0, {}, cmd_dbsize, nullptr, nullptr,
     "DBSIZE",
     "How many keys are held.", "server"},
    {"TIME", 0, 0, 0, 0, {}, cmd_time, nullptr, nullptr,
     "TIME",
     "The server's clock: [unix seconds, microseconds].", "server"},
    {"CONFIG", 1, -1, 0, 0, {}, nullptr, nullptr, nullptr,
     "CONFIG <subcommand> [<arg>...]",
     "Read-only view of the settings.", "server", kConfigSubcommands},
    {"COMMAND", 0, -1, 0, 0, {}, cmd_command, nullptr, nullptr,
     "COMMAND [<subcommand> [<arg>...]]",
     "Describes the commands as Redis 7 does (for client libraries and redis-cli hints).",
     "server", kCommandSubcommands},
    {"LOCK.ACQUIRE", 5, 16, kWrite | kBlocking | kKeyed, 1, kAcquireOptions,
     nullptr, call_acquire, write_grant,
     "LOCK.ACQUIRE <key> TTL <ms> TIMEOUT <ms> [OWNER <owner>] [SESSION] "
     "[MODE SHARED|EXCLUSIVE] [PERMITS <n>] [TAKE <k>] [LOCKDELAY <ms>]",
     "Waits up to TIMEOUT in the key's FIFO queue; answers a hold or LOCK_TIMEOUT.", "lock"},
    {"LOCK.TRY", 3, 14, kWrite | kKeyed, 1, kTryOptions, nullptr, call_try, write_grant,
     "LOCK.TRY <key> TTL <ms> [OWNER <owner>] [SESSION] [MODE SHARED|EXCLUSIVE] "
     "[PERMITS <n>] [TAKE <k>] [LOCKDELAY <ms>]",
     "One attempt; answers a hold or nil.", "lock"},
    {"LOCK.ACQUIREALL", 1, -1, kWrite | kBlocking, -1, {}, nullptr, call_acquire_all,
     write_group,
     "LOCK.ACQUIREALL TTL <ms> TIMEOUT <ms> [OWNER <owner>] [SESSION] KEY <key> "
     "[MODE SHARED|EXCLUSIVE] [PERMITS <n>] [TAKE <k>] [<key-block>...]",
     "Several keys (each KEY <key> with its own mode), granted all at once or not at all; waits "
     "up to TIMEOUT in every key's queue; answers one handle and a hold per key.", "lock"},
    {"LOCK.TRYALL", 1, -1, kWrite, -1, {}, nullptr, call_try_all, write_group,
     "LOCK.TRYALL TTL <ms> [OWNER <owner>] [SESSION] KEY <key> [MODE SHARED|EXCLUSIVE] "
     "[PERMITS <n>] [TAKE <k>] [<key-block>...]",
     "One attempt at several keys, all or nothing; answers one handle and a hold per key, or "
     "nil.", "lock"},
    {"LOCK.RENEW", 4, 4, kWrite | kKeyed, 2, kRenewOptions, nullptr, call_renew, write_renewal,
     "LOCK.RENEW <key> <handle> TTL <ms>",
     "Extends the lease of the current handle.", "lock"},
    {"LOCK.RELEASE", 2, 2, kWrite | kKeyed, 2, {}, nullptr, call_release, write_release,
     "LOCK.RELEASE <key> <handle>",
     "Frees the key if the handle is its current one.", "lock"},
    {"LOCK.STATUS", 1, 1, kReadOnly | kKeyed, 1, {}, nullptr, call_status, write_status_answer,
     "LOCK.STATUS <key>",
     "Who holds the key, without its handle.", "lock"},
    {"LOCK.LIST", 0, 6, kReadOnly | kAdmin, 0, kListOptions, nullptr, call_list, write_list,
     "LOCK.LIST [MATCH <glob>] [CURSOR <c>] [COUNT <n>]",
     "Every hold, paged (admin).", "lock"},
    {"LOCK.ASSIGN", 1, 8, kWrite | kBlocking | kKeyed | kOptionalPositional, 2, kAssignOptions,
     nullptr, call_assign, write_assignment,
     "LOCK.ASSIGN <key> [<holderId>] [TTL <ms>] [TIMEOUT <ms>] [LOCKDELAY <ms>]",
     "Assigns the key to a holder id (with credentials, the caller's own by default).", "lock"},
    {"LOCK.TRANSFER", 2, 4, kWrite | kKeyed, 2, kTransferOptions,
     nullptr, call_transfer, write_transfer,
     "LOCK.TRANSFER <key> <toId> [FROM <fromId>]",
     "Moves an assigned hold to another holder id (with credentials, from the caller by "
     "default).", "lock"},
    {"LOCK.UNASSIGN", 1, 2, kWrite | kKeyed, 2, {}, nullptr, call_unassign, write_unassign,
     "LOCK.UNASSIGN <key> [<holderId>]",
     "Frees an assigned hold (with credentials, the caller's own by default).", "lock"},
    {"LOCK.HOLDER", 1, 1, kReadOnly | kKeyed, 1, {}, nullptr, call_holder, write_holder_answer,
     "LOCK.HOLDER <key>",
     "The holder id of an assigned key and the hold's fencing token.", "lock"},
    {"LOCK.CHECK", 1, 2, kReadOnly | kKeyed, 2, {}, nullptr, call_check, write_holder_answer,
     "LOCK.CHECK <key> [<holderId>]",
     "The hold with its token if the holder id holds the key, else LOCK_NOT_HOLDER.", "lock"},
    // The Redis lock idiom over the same keys (docs/redis-locks.md).
    {"SET", 2, -1, kWrite | kKeyed | kRedisErrors, -1, {}, nullptr, call_set, write_set,
     "SET <key> <value> [NX|XX] [GET] [EX <seconds>|PX <ms>|EXAT <unix-seconds>|PXAT "
     "<unix-ms>|KEEPTTL]",
     "Takes the key as a Redis lock: a hold whose owner is the value (NX: only a free key).",
     "string"},
    {"GET", 1, 1, kReadOnly | kKeyed | kRedisErrors, 1, {}, nullptr, call_get, write_get,
     "GET <key>",
     "The value SET stored for a held key (its owner); nil when the key is free.", "string"},
    {"DEL", 1, -1, kWrite | kKeyed | kRedisErrors, -1, {}, nullptr, call_del, write_count,
     "DEL <key>...",
     "Frees the keys held by the caller's principal (any, for admins); answers how many.",
     "generic"},
    {"UNLINK", 1, -1, kWrite | kKeyed | kRedisErrors, -1, {}, nullptr, call_del, write_count,
     "UNLINK <key>...",
     "As DEL.", "generic"},
    {"EXISTS", 1, -1, kReadOnly | kKeyed | kRedisErrors, -1, {}, nullptr, call_exists, write_count,
     "EXISTS <key>...",
     "How many of the keys are held.", "generic"},
    {"PEXPIRE", 2, -1, kWrite | kKeyed | kRedisErrors, -1, {}, nullptr, call_pexpire, write_count,
     "PEXPIRE <key> <ms> [NX|XX|GT|LT]",
     "Moves the lease end of a hold of the caller's principal; 1 when it did.", "generic"},
    {"EXPIRE", 2, -1, kWrite | kKeyed | kRedisErrors, -1, {}, nullptr, call_expire, write_count,
     "EXPIRE <key> <seconds> [NX|XX|GT|LT]",
     "PEXPIRE in seconds.", "generic"},
    {"PEXPIREAT", 2, -1, kWrite | kKeyed | kRedisErrors, -1, {}, nullptr, call_pexpireat, write_count,
     "PEXPIREAT <key> <unix-ms> [NX|XX|GT|LT]",
     "PEXPIRE to an instant.", "generic"},
    {"EXPIREAT", 2, -1, kWrite | kKeyed | kRedisErrors, -1, {}, nullptr, call_expireat, write_count,
     "EXPIREAT <key> <unix-seconds> [NX|XX|GT|LT]",
     "PEXPIREAT in seconds.", "generic"},
    {"PERSIST", 1, 1, kWrite | kKeyed | kRedisErrors, 1, {}, nullptr, call_persist, write_count,
     "PERSIST <key>",
     "Extends the hold to the longest lease (no hold lives forever).", "generic"},
    {"PTTL", 1, 1, kReadOnly | kKeyed | kRedisErrors, 1, {}, nullptr, call_pttl, write_pttl,
     "PTTL <key>",
     "Milliseconds left of the key's lease; -2 when free, -1 without a lease end.", "generic"},
    {"TTL", 1, 1, kReadOnly | kKeyed | kRedisErrors, 1, {}, nullptr, call_pttl, write_ttl,
     "TTL <key>",
     "PTTL in seconds.", "generic"},
    // Lua scripts (docs/resp.md, "Scripts").
    {"EVAL", 2, -1, kWrite, -1, {}, nullptr, call_eval, write_script_reply,
     "EVAL <script> <numkeys> [<key>...] [<arg>...]",
     "Runs a Lua script atomically; its redis.call reaches the lock and Redis-idiom commands.",
     "scripting"},
    {"EVALSHA", 2, -1, kWrite, -1, {}, nullptr, call_evalsha, write_script_reply,
     "EVALSHA <sha1> <numkeys> [<key>...] [<arg>...]",
     "Runs a kept script by its SHA-1; NOSCRIPT when none is kept under it.", "scripting"},
    {"SCRIPT", 1, -1, 0, 0, {}, nullptr, nullptr, nullptr,
     "SCRIPT <subcommand> [<arg>...]",
     "The script cache.", "scripting", kScriptSubcommands},
    // Pub/sub (docs/resp.md, "Pub/sub") and lock events (docs/events.md).
    {"SUBSCRIBE", 1, -1, kRedisErrors | kSubscribeContext, 0, {}, cmd_subscribe, nullptr, nullptr,
     "SUBSCRIBE <channel>...",
     "Listens to channels: PUBLISH to one arrives as a message push.", "pubsub"},
    {"UNSUBSCRIBE", 0, -1, kRedisErrors | kSubscribeContext, 0, {}, cmd_unsubscribe, nullptr,
     nullptr,
     "UNSUBSCRIBE [<channel>...]",
     "Stops listening to the channels (all of them when none is named).", "pubsub"},
    {"PSUBSCRIBE", 1, -1, kRedisErrors | kSubscribeContext, 0, {}, cmd_psubscribe, nullptr,
     nullptr,
     "PSUBSCRIBE <pattern>...",
     "Listens to every channel matching the globs: a pmessage push each.", "pubsub"},
    {"PUNSUBSCRIBE", 0, -1, kRedisErrors | kSubscribeContext, 0, {}, cmd_punsubscribe, nullptr,
     nullptr,
     "PUNSUBSCRIBE [<pattern>...]",
     "Stops listening to the patterns (all of them when none is named).", "pubsub"},
    {"PUBLISH", 2, 2, kRedisErrors, 0, {}, cmd_publish, nullptr, nullptr,
     "PUBLISH <channel> <message>",
     "Sends the message to the channel's subscribers; answers how many got it on this server.",
     "pubsub"},
    {"PUBSUB", 1, -1, kRedisErrors, 0, {}, nullptr, nullptr, nullptr,
     "PUBSUB <subcommand> [<arg>...]",
     "Who listens to what on this server.", "pubsub", kPubsubSubcommands},
    {"LOCK.WATCH", 0, 2, kSubscribeContext, 0, {}, cmd_lock_watch, nullptr, nullptr,
     "LOCK.WATCH [PREFIX <prefix>]",
     "Streams lock events (of keys starting with the prefix, that the caller may read) as "
     "lock.event pushes.", "lock"},
    {"LOCK.UNWATCH", 0, 0, kSubscribeContext, 0, {}, cmd_lock_unwatch, nullptr, nullptr,
     "LOCK.UNWATCH",
     "Stops the lock events.", "lock"},
    {"RULES.SET", 1, 1, kWrite | kAdmin, 1, {}, nullptr, call_rules_set, write_rules_set,
     "RULES.SET <toml>",
     "Installs or replaces the lock rule set (admin).", "rules"},
    {"RULES.GET", 0, 0, kReadOnly | kAdmin, 0, {}, nullptr, call_rules_get, write_rules_get,
     "RULES.GET",
     "The installed rule set as {name, toml}, or nil (admin).", "rules"},
    {"RULES.DELETE", 1, 1, kWrite | kAdmin, 1, {}, nullptr, call_rules_delete, write_ok,
     "RULES.DELETE <name>",
     "Removes the rule set: open access again (admin).", "rules"},
};
// clang-format on

template <std::size_t N, std::size_t M>
constexpr std::array<CommandSpec, N + M> join(const CommandSpec (&a)[N],
                                              const CommandSpec (&b)[M]) {
  std::array<CommandSpec, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}

// The typed-value rows (value_commands.h) come after the others, so a row's index, which is
// its metric id, does not move when they change.
constexpr auto kCommands = join(kLockAndServerCommands, kValueCommands);

// Command names are matched case-insensitively through an upper-cased copy on the stack.
std::string_view upper(std::string_view name, std::array<char, 32>& buf) {
  if (name.size() > buf.size()) return {};
  for (std::size_t i = 0; i < name.size(); ++i) buf[i] = ascii_upper(name[i]);
  return {buf.data(), name.size()};
}

// The command index, looked up once per command: open addressing over a few letters of the
// name, so a lookup upper-cases and hashes nothing but three letters and the length, and
// compares the name (case-insensitively) only with entries that match those.
class CommandIndex {
 public:
  CommandIndex() {
    static_assert(std::size(kCommands) * 2 < kSlots);
    for (const auto& c : kCommands) {
      std::size_t i = slot(c.name);
      while (slots_[i] != nullptr) i = (i + 1) % kSlots;
      slots_[i] = &c;
    }
  }
  const CommandSpec* find(std::string_view name) const {
    if (name.empty()) return nullptr;
    for (std::size_t i = slot(name); slots_[i] != nullptr; i = (i + 1) % kSlots)
      if (ascii_iequals(slots_[i]->name, name)) return slots_[i];
    return nullptr;
  }

 private:
  static constexpr std::size_t kSlots = 256;
  static std::size_t slot(std::string_view name) {
    const auto letter = [&](std::size_t i) {
      return static_cast<std::size_t>(static_cast<unsigned char>(ascii_upper(name[i])));
    };
    return (name.size() * 131 + letter(0) * 31 + letter(name.size() / 2) * 7 +
            letter(name.size() - 1)) %
           kSlots;
  }
  std::array<const CommandSpec*, kSlots> slots_{};
};

const CommandIndex& index() {
  static const CommandIndex index;
  return index;
}

}  // namespace

std::span<const CommandSpec> command_table() { return kCommands; }

std::optional<Error> read_call_args(const CommandSpec& spec, std::span<const std::string_view> args,
                                    std::span<const std::string_view>& positional,
                                    OptionValues& values) {
  const std::size_t count = positional_count(spec, args.size());
  positional = args.first(count);
  return parse_options(args.subspan(count), spec.options, spec.name, values);
}

const CommandSpec* find_command(std::string_view name) { return index().find(name); }

const CommandSpec* find_subcommand(const CommandSpec& container, std::string_view word) {
  std::array<char, 32> buf;
  std::string_view key = upper(word, buf);
  if (key.empty()) return nullptr;
  for (const auto& sub : container.subcommands)
    if (sub.name == key) return &sub;
  return nullptr;
}

void write_subcommand_help(ReplyWriter& w, const CommandSpec& container) {
  w.array(container.subcommands.size() * 2);
  for (const auto& sub : container.subcommands) {
    w.simple(sub.usage.substr(container.name.size() + 1));
    w.simple("    " + std::string(sub.summary));
  }
}

}  // namespace holdfast::resp
