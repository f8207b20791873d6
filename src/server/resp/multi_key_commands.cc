// LOCK.ACQUIREALL and LOCK.TRYALL: several keys at once (docs/lock-kinds.md, "Several keys at
// once"). Their arguments are the request's options, then one block per key:
//   TTL <ms> [TIMEOUT <ms>] [OWNER <owner>] [SESSION] KEY <key> [MODE ..] [PERMITS <n>] [TAKE <k>]
//   [KEY <key> ...]
// The word after KEY is always the key, whatever it says; a key's block ends at the next KEY in
// an option's place. Each part is read by the one option parser (options.h), and each key's
// mode by the one mode rule (server/lock_mode_args.h).
#include <string>
#include <vector>

#include "server/lock_mode_args.h"
#include "server/resp/ascii.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

constexpr OptionSpec kKeyOptions[] = {
    {"MODE", OptionKind::kText, ""},
    {"PERMITS", OptionKind::kCount, ""},
    {"TAKE", OptionKind::kCount, ""},
};
enum KeyOption { kMode, kPermits, kTake };

constexpr OptionSpec kAllOptions[] = {
    {"TTL", OptionKind::kMillis, "TTL is required (milliseconds)"},
    {"TIMEOUT", OptionKind::kMillis, "TIMEOUT is required (milliseconds; 0 for one attempt)"},
    {"OWNER", OptionKind::kText, ""},
    {"SESSION", OptionKind::kFlag, ""},
};
constexpr OptionSpec kTryAllOptions[] = {
    {"TTL", OptionKind::kMillis, "TTL is required (milliseconds)"},
    {"OWNER", OptionKind::kText, ""},
    {"SESSION", OptionKind::kFlag, ""},
};

bool is_key_word(std::string_view word) { return ascii_iequals(word, "KEY"); }

// Reads the arguments into `out`; `blocking`: LOCK.ACQUIREALL (TIMEOUT, which a transaction
// makes 0), else LOCK.TRYALL.
std::optional<Error> read_all(std::span<const std::string_view> args, bool blocking,
                              bool in_transaction, AcquireAllArgs& out) {
  const std::string_view command = blocking ? "LOCK.ACQUIREALL" : "LOCK.TRYALL";
  std::size_t first_key = 0;
  // The request's options take a value each, but SESSION; KEY can only start a block.
  while (first_key < args.size() && !is_key_word(args[first_key]))
    first_key += ascii_iequals(args[first_key], "SESSION") ? 1 : 2;
  first_key = std::min(first_key, args.size());
  OptionValues head;
  const std::span<const OptionSpec> specs = blocking ? std::span<const OptionSpec>(kAllOptions)
                                                     : std::span<const OptionSpec>(kTryAllOptions);
  if (auto err = parse_options(args.subspan(0, first_key), specs, command, head)) return err;
  out.ttl_ms = head[0].number;
  std::size_t next = 1;
  if (blocking) {
    // Inside a transaction a blocking command makes one attempt, as in Redis.
    out.timeout_ms = in_transaction ? 0 : head[next].number;
    ++next;
  }
  if (head[next].present) out.owner = head[next].text;
  out.session_scoped = head[next + 1].present;

  for (std::size_t i = first_key; i < args.size();) {
    if (++i == args.size()) return invalid_argument("KEY needs a value");
    KeyRequest key;
    key.key = args[i++];
    std::size_t end = i;
    while (end < args.size() && !is_key_word(args[end])) end += 2;  // every key option has a value
    end = std::min(end, args.size());
    OptionValues opts;
    if (auto err = parse_options(args.subspan(i, end - i), kKeyOptions, command, opts))
      return err->with("key", std::string(key.key));
    auto number = [](const OptionValue& v) {
      return v.present ? std::optional<std::int64_t>(v.number) : std::nullopt;
    };
    std::optional<std::string_view> mode;
    if (opts[kMode].present) mode = opts[kMode].text;
    if (auto err =
            read_lock_mode(mode, number(opts[kPermits]), number(opts[kTake]), kRespSpelling, key))
      return err->with("key", std::string(key.key));
    out.keys.push_back(key);
    i = end;
  }
  if (out.keys.empty())
    return invalid_argument(std::string(command) + " needs at least one KEY <key>");
  return std::nullopt;
}

}  // namespace

Issued call_acquire_all(LockService& service, const Caller& caller, const CallArgs& a,
                        Completion& done) {
  AcquireAllArgs args;
  if (auto err = read_all(a.positional, /*blocking=*/true, a.in_transaction, args)) {
    done.finish(std::move(*err));
    return Issued::kApplied;
  }
  return service.acquire_all(caller, args, done);
}

Issued call_try_all(LockService& service, const Caller& caller, const CallArgs& a,
                    Completion& done) {
  AcquireAllArgs args;
  if (auto err = read_all(a.positional, /*blocking=*/false, a.in_transaction, args)) {
    done.finish(std::move(*err));
    return Issued::kApplied;
  }
  return service.try_acquire_all(caller, args, done);
}

void write_group(ReplyWriter& out, Answer& answer) {
  const auto* group = std::get_if<GroupHold>(&answer);
  if (group == nullptr) {
    out.null();  // a try that met a held key or a waiter
    return;
  }
  out.map(3);
  out.field("handle", group->handle.to_string());
  out.field("leaseExpiresAt", group->lease_expires_at);
  out.bulk("holds");
  out.array(group->holds.size());
  for (const HoldState& h : group->holds) write_hold(out, kGrantFields, h);
}

}  // namespace holdfast::resp
