#include "server/resp/pipeline.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "server/resp/ascii.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

// "CLIENT LIST" as Redis names it in errors: "client|list".
std::string redis_name(std::string_view display) {
  std::string name = ascii_lower(display);
  std::replace(name.begin(), name.end(), ' ', '|');
  return name;
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64))
    out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
  return out;
}

}  // namespace

Pipeline::Pipeline(const Env& env, SessionId id, Events& events, ClientDirectory* clients)
    : env_(env),
      events_(events),
      clients_(clients),
      subs_(*this, env.pubsub, env.events, state_.principal, env_.limits),
      runner_(env.service, *this, env.metrics, id) {
  state_.id = id;
  if (env.info.auth_mode) {
    state_.authenticated = false;
  } else {
    state_.principal = Principal::local_owner();
    state_.authenticated = true;
  }
}

void Pipeline::sign_in_by_certificate(Principal caller) {
  state_.certificate_principal = caller;
  state_.principal = std::move(caller);
  state_.authenticated = true;
}

void Pipeline::held_from(std::size_t before) {
  if (&local_buffer() == &held_) runner_.note_local(held_.size() - before);
}

void Pipeline::push_frame(std::string_view frame, bool can_wait) {
  // RESP3 pushes are out of band; in RESP2 a message follows the replies before it.
  std::string& buf = state_.proto >= 3 ? out_ : local_buffer();
  const std::size_t before = buf.size();
  buf.append(frame);
  if (&buf == &held_) held_from(before);
  if (running_) return;
  if (can_wait) {
    events_.pushes_ready();
  } else {
    events_.replies_ready();
  }
}

void Pipeline::push_shared(const events::SharedText& frames) {
  // Shared only when nothing of the connection's own would have to go first: output() is
  // empty, and in RESP2 no reply is held back behind a call in flight.
  const bool first = out_.empty() && (state_.proto >= 3 || !runner_.in_flight());
  if (!first || !events_.share(frames)) {
    push_frame(frames.view(), /*can_wait=*/true);
    return;
  }
  events_.pushes_ready();
}

void Pipeline::fell_behind(std::string_view last) {
  // What is not being written yet goes: the last frame follows what is.
  out_.assign(last);
  events_.fell_behind(last.empty());
  if (!running_) events_.replies_ready();
}

void Pipeline::error_line(std::string_view line) {
  std::string& buf = local_buffer();
  const std::size_t before = buf.size();
  ReplyWriter(buf, state_.proto).error_line(line);
  held_from(before);
}

namespace {

// Sets a flag for the duration of a scope (and puts back what it was: scopes nest).
struct Running {
  bool& flag;
  const bool was;
  explicit Running(bool& f) : flag(f), was(f) { flag = true; }
  ~Running() { flag = was; }
};

}  // namespace

Flow Pipeline::run(std::span<const std::string_view> args) {
  Running running(running_);
  return run_one(args, /*in_transaction=*/false);
}

void Pipeline::drain() {
  Running running(running_);
  if (executing_ && exec_next_ == 0 && !exec_queue_.empty() && !runner_.in_flight()) {
    // The whole transaction as one step of the service: on a node over PostgreSQL, one
    // database transaction. If that fails, none of it took effect: its replies give way to
    // one error.
    auto st = env_.service.atomically([this] { run_queued(); });
    if (!st.ok()) {
      out_.resize(exec_mark_);
      ReplyWriter(out_, state_.proto)
          .error_line("EXECABORT Transaction discarded: " + error_text(st.error()));
      end_exec();
    }
  }
  run_queued();
}

void Pipeline::end_exec() {
  exec_queue_.clear();
  exec_next_ = 0;
  executing_ = false;
}

void Pipeline::run_queued() {
  while (executing_ && runner_.ready()) {
    if (exec_next_ == exec_queue_.size()) {
      end_exec();
      break;
    }
    const std::vector<std::string>& command = exec_queue_[exec_next_++];
    std::vector<std::string_view> args(command.begin(), command.end());
    (void)run_one(args, /*in_transaction=*/true);
  }
}

const CommandSpec* Pipeline::resolve(const CommandSpec* spec,
                                     std::span<const std::string_view>& rest, std::string_view name,
                                     ReplyWriter& out) {
  auto arity_ok = [&](const CommandSpec& row, std::string_view display) {
    if (accepts_arity(row, rest.size())) return true;
    if ((row.flags & kRedisErrors) != 0) {
      out.error_line("ERR wrong number of arguments for '" + redis_name(display) + "' command");
      return false;
    }
    write_error(out, invalid_argument("wrong number of arguments for '" + std::string(display) +
                                      "' (usage: " + std::string(row.usage) + ")"));
    return false;
  };
  if (spec == nullptr) {
    out.error_line("ERR unknown command '" + printable(name) + "'");
    return nullptr;
  }
  if (!arity_ok(*spec, spec->name)) return nullptr;
  if (spec->subcommands.empty() || (spec->local != nullptr && rest.empty())) return spec;
  const CommandSpec* row = find_subcommand(*spec, rest[0]);
  if (row == nullptr) {
    out.error_line("ERR unknown subcommand '" + printable(rest[0]) + "'. Try " +
                   std::string(spec->name) + " HELP.");
    return nullptr;
  }
  rest = rest.subspan(1);
  if (!arity_ok(*row, std::string(spec->name) + " " + std::string(row->name))) return nullptr;
  return row;
}

Flow Pipeline::run_one(std::span<const std::string_view> args, bool in_transaction) {
  const CommandSpec* spec = find_command(args[0]);
  // CLIENT LIST's cmd= and idle=; the command's latency counts from here too.
  state_.last_command = spec;
  state_.last_active = std::chrono::steady_clock::now();
  std::string& buf = local_buffer();
  const std::size_t before = buf.size();
  ReplyWriter out(buf, state_.proto);
  Flow flow = Flow::kContinue;
  std::span<const std::string_view> rest = args.subspan(1);
  if (spec != nullptr && !state_.authenticated && (spec->flags & kNoAuth) == 0) {
    // Redis's code, so client libraries raise their authentication error.
    out.error_line(
        "NOAUTH Authentication required: send AUTH <token> (or AUTH <user> <token>) first");
    if (state_.transaction.active) state_.transaction.dirty = true;
  } else if (state_.transaction.active && (spec == nullptr || (spec->flags & kNotQueued) == 0)) {
    queue(resolve(spec, rest, args[0], out), args, out);
  } else if (const CommandSpec* row = resolve(spec, rest, args[0], out); row == nullptr) {
  } else if (state_.proto == 2 && subs_.count() > 0 && (row->flags & kSubscribeContext) == 0) {
    // Redis's words, with its name for the command ("client|list" for a subcommand).
    const std::string name = row == spec ? std::string(spec->name)
                                         : std::string(spec->name) + " " + std::string(row->name);
    out.error_line("ERR Can't execute '" + redis_name(name) +
                   "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed "
                   "in this context");
  } else if (row->local != nullptr) {
    flow = run_local(*row, rest, out);
    if (env_.metrics != nullptr)
      env_.metrics->observe(command_id(*spec),
                            std::chrono::steady_clock::now() - state_.last_active);
    if (flow == Flow::kExec) {
      exec_mark_ = before;
      start_exec(out);
      held_from(before);
      drain();  // EXEC: its commands' replies follow its header
      return Flow::kContinue;
    }
  } else if (issue(*row, rest, out, in_transaction)) {
    return flow;  // nothing written here: the answer comes through the runner
  }
  held_from(before);
  return flow;
}

void Pipeline::queue(const CommandSpec* row, std::span<const std::string_view> args,
                     ReplyWriter& out) {
  Transaction& t = state_.transaction;
  OptionValues values{};
  if (row == nullptr) {
    t.dirty = true;
    return;
  }
  if (row->call != nullptr) {
    const std::size_t skip = row == find_command(args[0]) ? 1 : 2;  // name, or name + subcommand
    std::span<const std::string_view> positional;
    if (!read_options(*row, args.subspan(skip), positional, values, out)) {
      t.dirty = true;
      return;
    }
  }
  t.queued.emplace_back(args.begin(), args.end());
  out.simple("QUEUED");
}

void Pipeline::start_exec(ReplyWriter& out) {
  Transaction& t = state_.transaction;
  out.array(t.queued.size());
  exec_queue_ = std::move(t.queued);
  exec_next_ = 0;
  t = Transaction{};
  executing_ = true;
}

Flow Pipeline::run_local(const CommandSpec& spec, std::span<const std::string_view> args,
                         ReplyWriter& out) {
  CommandContext ctx{env_.service, state_,   out,          env_.info, env_.auth,
                     env_.metrics, clients_, env_.scripts, &subs_};
  return spec.local(ctx, args);
}

bool Pipeline::read_options(const CommandSpec& spec, std::span<const std::string_view> args,
                            std::span<const std::string_view>& positional, OptionValues& values,
                            ReplyWriter& out) {
  if (auto err = read_call_args(spec, args, positional, values)) {
    write_command_error(out, spec.flags, *err);
    return false;
  }
  return true;
}

bool Pipeline::issue(const CommandSpec& spec, std::span<const std::string_view> args,
                     ReplyWriter& out, bool in_transaction) {
  std::span<const std::string_view> positional;
  OptionValues values{};
  if (!read_options(spec, args, positional, values, out)) return false;
  runner_.issue(
      command_id(spec),
      [&](LockService& service, Completion& done) {
        return spec.call(service, Caller{&state_.principal, state_.id},
                         CallArgs{positional, values, in_transaction, env_.scripts, env_.pubsub},
                         done);
      },
      state_.last_active);
  return true;
}

void Pipeline::answer(std::uint16_t command, Result<Answer> result) {
  ReplyWriter out(out_, state_.proto);
  const CommandSpec& spec = command_table()[command];
  if (!result.ok()) {
    write_command_error(out, spec.flags, result.error());
  } else {
    spec.write(out, *result);
  }
  if (!running_) events_.replies_ready();
}

void Pipeline::release_local(std::size_t bytes) {
  out_.append(held_, held_begin_, bytes);
  held_begin_ += bytes;
  if (held_begin_ == held_.size()) {
    held_.clear();
    held_begin_ = 0;
  }
}

}  // namespace holdfast::resp
