// EVAL, EVALSHA and SCRIPT: Lua scripts as Redis runs them (docs/resp.md, "Scripts"), over the
// engine of script/ and the commands of this table (script_calls.h).
//
//  1. EVAL and EVALSHA are lock-command rows: before anything runs, a service that cannot
//     run scripts is refused; then numkeys splits KEYS from ARGV with Redis's errors, and the
//     script runs to its end inside this call, as one step of the service
//     (LockService::atomically: on a node over PostgreSQL, one database transaction).
//  2. The script's reply is finished through LockService::complete(): it leaves after the
//     replies before it, and only once every change the script made is durable.
//  3. SCRIPT LOAD, EXISTS and FLUSH work on the engine's cache; SCRIPT KILL answers NOTBUSY,
//     since no script runs while a command is read: a script past its time limit stops
//     itself (script/lua_runtime.h).
#include <string>

#include "core/validation.h"
#include "script/engine.h"
#include "server/resp/ascii.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"
#include "server/resp/script_calls.h"

namespace holdfast::resp {
namespace {

constexpr const char* kNoScripts = "ERR scripts are not available on this server";

Issued finish(LockService& service, Completion& done, ScriptReply reply) {
  service.complete(done, Answer(std::move(reply)));
  return Issued::kApplied;
}

Issued run_script(LockService& service, const Caller& caller, const CallArgs& a, Completion& done,
                  bool by_sha) {
  if (a.scripts == nullptr) return finish(service, done, ScriptReply::error(kNoScripts));
  const auto numkeys = parse_int64(a.positional[1]);
  const auto rest = a.positional.subspan(2);
  if (!numkeys)
    return finish(service, done, ScriptReply::error("ERR value is not an integer or out of range"));
  if (*numkeys > static_cast<std::int64_t>(rest.size()))
    return finish(service, done,
                  ScriptReply::error("ERR Number of keys can't be greater than number of args"));
  if (*numkeys < 0)
    return finish(service, done, ScriptReply::error("ERR Number of keys can't be negative"));
  const auto keys = rest.first(static_cast<std::size_t>(*numkeys));
  const auto args = rest.subspan(keys.size());
  ScriptCalls host(service, caller, a.pubsub);
  ScriptReply reply;
  auto body = [&] {
    reply = by_sha ? a.scripts->eval_sha(a.positional[0], keys, args, host)
                   : a.scripts->eval(a.positional[0], keys, args, host);
  };
  // One step of the service: on a node over PostgreSQL, one database transaction. (Passed
  // by one reference, which std::function keeps without allocating.)
  auto st = service.atomically([&body] { body(); });
  if (!st.ok())
    reply = ScriptReply::error("ERR the script's changes were not committed: " +
                               error_text(st.error()));
  return finish(service, done, std::move(reply));
}

// Status and error lines cannot hold a line break: Redis turns them into spaces too.
std::string one_line(std::string_view text) {
  std::string line(text);
  for (char& c : line)
    if (c == '\r' || c == '\n') c = ' ';
  return line;
}

void write_value(ReplyWriter& out, const ScriptReply& r) {
  switch (r.kind) {
    case ScriptReply::Kind::kNil:
      out.null();
      return;
    case ScriptReply::Kind::kInteger:
      out.integer(r.integer);
      return;
    case ScriptReply::Kind::kBulk:
      out.bulk(r.text);
      return;
    case ScriptReply::Kind::kStatus:
      out.simple(one_line(r.text));
      return;
    case ScriptReply::Kind::kError:
      out.error_line(one_line(r.text));
      return;
    case ScriptReply::Kind::kArray:
      out.array(r.items.size());
      for (const ScriptReply& item : r.items) write_value(out, item);
      return;
  }
}

}  // namespace

Issued call_eval(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  return run_script(service, caller, a, done, /*by_sha=*/false);
}

Issued call_evalsha(LockService& service, const Caller& caller, const CallArgs& a,
                    Completion& done) {
  return run_script(service, caller, a, done, /*by_sha=*/true);
}

void write_script_reply(ReplyWriter& out, Answer& answer) {
  write_value(out, std::get<ScriptReply>(answer));
}

Flow cmd_script_load(CommandContext& ctx, std::span<const std::string_view> args) {
  if (ctx.scripts == nullptr) {
    ctx.out.error_line(kNoScripts);
  } else {
    write_value(ctx.out, ctx.scripts->load(args[0]));
  }
  return Flow::kContinue;
}

Flow cmd_script_exists(CommandContext& ctx, std::span<const std::string_view> args) {
  ctx.out.array(args.size());
  for (std::string_view sha : args)
    ctx.out.integer(ctx.scripts != nullptr && ctx.scripts->exists(sha) ? 1 : 0);
  return Flow::kContinue;
}

Flow cmd_script_flush(CommandContext& ctx, std::span<const std::string_view> args) {
  // ASYNC or SYNC: the same here, a flush takes no longer than the cache is small.
  if (!args.empty() && !ascii_iequals(args[0], "ASYNC") && !ascii_iequals(args[0], "SYNC")) {
    ctx.out.error_line("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return Flow::kContinue;
  }
  if (ctx.scripts != nullptr) ctx.scripts->flush();
  ctx.out.simple("OK");
  return Flow::kContinue;
}

Flow cmd_script_kill(CommandContext& ctx, std::span<const std::string_view>) {
  ctx.out.error_line("NOTBUSY No scripts in execution right now.");
  return Flow::kContinue;
}

Flow cmd_script_help(CommandContext& ctx, std::span<const std::string_view>) {
  write_subcommand_help(ctx.out, *find_command("SCRIPT"));
  return Flow::kContinue;
}

}  // namespace holdfast::resp
