// MULTI, EXEC, DISCARD, WATCH, UNWATCH: Redis transactions over the command pipeline.
//
//  1. MULTI starts queuing: every later command except these five, QUIT and RESET answers
//     +QUEUED once the front end has checked it (it exists, its arity, its options), and is
//     kept. A command refused while queuing answers its error and marks the transaction, so
//     EXEC answers EXECABORT and runs nothing, as in Redis.
//  2. EXEC runs the queued commands back to back (the pipeline does: Flow::kExec) and answers
//     an array of their replies. A blocking command makes one attempt, as blocking commands do
//     inside Redis transactions: LOCK.ACQUIRE and LOCK.ASSIGN behave as with TIMEOUT 0.
//  3. DISCARD drops the queue. WATCH is refused: a lock key changes only through lock
//     commands, whose own conditions (a handle, an owner, a holder id) are the check.
#include "server/resp/commands.h"

namespace holdfast::resp {

Flow cmd_multi(CommandContext& ctx, std::span<const std::string_view>) {
  if (ctx.conn.transaction.active) {
    ctx.out.error_line("ERR MULTI calls can not be nested");
    return Flow::kContinue;
  }
  ctx.conn.transaction = Transaction{true, false, {}};
  ctx.out.simple("OK");
  return Flow::kContinue;
}

Flow cmd_exec(CommandContext& ctx, std::span<const std::string_view>) {
  Transaction& t = ctx.conn.transaction;
  if (!t.active) {
    ctx.out.error_line("ERR EXEC without MULTI");
    return Flow::kContinue;
  }
  if (t.dirty) {
    t = Transaction{};
    ctx.out.error_line("EXECABORT Transaction discarded because of previous errors.");
    return Flow::kContinue;
  }
  return Flow::kExec;  // the pipeline writes the array of replies
}

Flow cmd_discard(CommandContext& ctx, std::span<const std::string_view>) {
  if (!ctx.conn.transaction.active) {
    ctx.out.error_line("ERR DISCARD without MULTI");
    return Flow::kContinue;
  }
  ctx.conn.transaction = Transaction{};
  ctx.out.simple("OK");
  return Flow::kContinue;
}

Flow cmd_watch(CommandContext& ctx, std::span<const std::string_view>) {
  if (ctx.conn.transaction.active) {
    ctx.out.error_line("ERR WATCH inside MULTI is not allowed");
    return Flow::kContinue;
  }
  ctx.out.error_line(
      "ERR WATCH is not supported: a lock key changes only through lock commands, whose own "
      "conditions (handle, owner, holder id) guard it");
  return Flow::kContinue;
}

Flow cmd_unwatch(CommandContext& ctx, std::span<const std::string_view>) {
  ctx.out.simple("OK");  // nothing is ever watched
  return Flow::kContinue;
}

}  // namespace holdfast::resp
