#include "server/resp/pipeline.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64))
    out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
  return out;
}

}  // namespace

Pipeline::Pipeline(const Env& env, SessionId id, Events& events, ClientDirectory* clients)
    : env_(env), events_(events), clients_(clients), runner_(env.service, *this, env.metrics, id) {
  state_.id = id;
  if (env.info.auth_mode) {
    state_.authenticated = false;
  } else {
    state_.principal = Principal::local_owner();
    state_.authenticated = true;
  }
}

void Pipeline::held_from(std::size_t before) {
  if (&local_buffer() == &held_) runner_.note_local(held_.size() - before);
}

void Pipeline::error_line(std::string_view line) {
  std::string& buf = local_buffer();
  const std::size_t before = buf.size();
  ReplyWriter(buf, state_.proto).error_line(line);
  held_from(before);
}

Flow Pipeline::run(std::span<const std::string_view> args) {
  struct Running {
    bool& flag;
    explicit Running(bool& f) : flag(f) { flag = true; }
    ~Running() { flag = false; }
  } running(running_);

  const CommandSpec* spec = find_command(args[0]);
  // CLIENT LIST's cmd= and idle=.
  state_.last_command = spec;
  state_.last_active = std::chrono::steady_clock::now();
  std::string& buf = local_buffer();
  const std::size_t before = buf.size();
  ReplyWriter out(buf, state_.proto);
  Flow flow = Flow::kContinue;
  auto arity_ok = [&](const CommandSpec& row, std::string_view display, std::size_t n) {
    const int given = static_cast<int>(n);
    if (given >= row.min_args && (row.max_args < 0 || given <= row.max_args)) return true;
    write_error(out, invalid_argument("wrong number of arguments for '" + std::string(display) +
                                      "' (usage: " + std::string(row.usage) + ")"));
    return false;
  };
  std::span<const std::string_view> rest = args.subspan(1);
  if (spec == nullptr) {
    out.error_line("ERR unknown command '" + printable(args[0]) + "'");
  } else if (!arity_ok(*spec, spec->name, rest.size())) {
  } else if (!state_.authenticated && (spec->flags & kNoAuth) == 0) {
    // Redis's code, so client libraries raise their authentication error.
    out.error_line(
        "NOAUTH Authentication required: send AUTH <token> (or AUTH <user> <token>) first");
  } else {
    const CommandSpec* row = spec;
    if (!spec->subcommands.empty() && (spec->local == nullptr || !rest.empty())) {
      row = find_subcommand(*spec, rest[0]);
      if (row == nullptr) {
        out.error_line("ERR unknown subcommand '" + printable(rest[0]) + "'. Try " +
                       std::string(spec->name) + " HELP.");
      } else if (rest = rest.subspan(1);
                 !arity_ok(*row, std::string(spec->name) + " " + std::string(row->name),
                           rest.size())) {
        row = nullptr;
      }
    }
    if (row != nullptr && row->local != nullptr) {
      const auto start = std::chrono::steady_clock::now();
      flow = run_local(*row, rest, out);
      if (env_.metrics != nullptr)
        env_.metrics->observe(command_id(*spec), std::chrono::steady_clock::now() - start);
    } else if (row != nullptr && issue(*row, rest, out)) {
      return flow;  // nothing written here: the answer comes through the runner
    }
  }
  held_from(before);
  return flow;
}

Flow Pipeline::run_local(const CommandSpec& spec, std::span<const std::string_view> args,
                         ReplyWriter& out) {
  CommandContext ctx{env_.service, state_, out, env_.info, env_.auth, env_.metrics, clients_};
  return spec.local(ctx, args);
}

bool Pipeline::issue(const CommandSpec& spec, std::span<const std::string_view> args,
                     ReplyWriter& out) {
  const auto positional = args.first(std::min<std::size_t>(args.size(), spec.positional));
  OptionValues values{};
  if (auto err = parse_options(args.subspan(positional.size()), spec.options, spec.name, values)) {
    write_error(out, *err);
    return false;
  }
  runner_.issue(command_id(spec), [&](LockService& service, Completion& done) {
    return spec.call(service, Caller{&state_.principal, state_.id}, CallArgs{positional, values},
                     done);
  });
  return true;
}

void Pipeline::answer(std::uint16_t command, Result<Answer> result) {
  ReplyWriter out(out_, state_.proto);
  if (!result.ok()) {
    write_error(out, result.error());
  } else {
    command_table()[command].write(out, *result);
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
