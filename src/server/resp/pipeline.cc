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

Pipeline::Pipeline(const Env& env, SessionId id, Events& events)
    : env_(env), events_(events), runner_(env.service, *this, env.metrics, id) {
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
  std::string& buf = local_buffer();
  const std::size_t before = buf.size();
  ReplyWriter out(buf, state_.proto);
  Flow flow = Flow::kContinue;
  const int n = static_cast<int>(args.size()) - 1;
  if (spec == nullptr) {
    out.error_line("ERR unknown command '" + printable(args[0]) + "'");
  } else if (n < spec->min_args || (spec->max_args >= 0 && n > spec->max_args)) {
    write_error(out, invalid_argument("wrong number of arguments for '" + std::string(spec->name) +
                                      "' (usage: " + std::string(spec->usage) + ")"));
  } else if (!state_.authenticated && (spec->flags & kNoAuth) == 0) {
    write_error(out, Error(ErrorCode::kUnauthenticated, "authenticate first with AUTH <token>"));
  } else if (spec->local != nullptr) {
    const auto start = std::chrono::steady_clock::now();
    LocalContext ctx{state_, out, env_.info, env_.auth};
    flow = spec->local(ctx, args.subspan(1));
    if (env_.metrics != nullptr)
      env_.metrics->observe(command_id(*spec), std::chrono::steady_clock::now() - start);
  } else {
    const auto rest = args.subspan(1);
    const auto positional = rest.first(std::min<std::size_t>(rest.size(), spec->positional));
    OptionValues values{};
    if (auto err = parse_options(rest.subspan(positional.size()), spec->options, spec->name,
                                 values)) {
      write_error(out, *err);
    } else {
      runner_.issue(command_id(*spec), [&](LockService& service, Completion& done) {
        return spec->call(service, Caller{&state_.principal, state_.id},
                          CallArgs{positional, values}, done);
      });
      return flow;
    }
  }
  held_from(before);
  return flow;
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
