#include "server/resp/script_calls.h"

#include <optional>

#include "server/pubsub/registry.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"

namespace holdfast::resp {

// The completion of one call of the script. A call that did not finish inside the service
// (it should not happen where scripts run) is orphaned: it deletes itself when it finishes.
struct ScriptCalls::Inner final : Completion {
  std::optional<Result<Answer>> result;
  bool orphaned = false;

  void finish(Result<Answer> r) override {
    if (orphaned) {
      delete this;
      return;
    }
    result = std::move(r);
  }
  bool immediate() const override { return true; }
};

std::unique_ptr<ScriptCalls::Inner>& ScriptCalls::spare() {
  static thread_local std::unique_ptr<Inner> inner;
  return inner;
}

ScriptCalls::ScriptCalls(LockService& service, const Caller& caller, pubsub::Registry* pubsub)
    : service_(service), caller_(caller), pubsub_(pubsub), inner_(std::move(spare())) {
  if (!inner_) inner_ = std::make_unique<Inner>();
}

ScriptCalls::~ScriptCalls() {
  inner_->result.reset();
  spare() = std::move(inner_);
}

void ScriptCalls::call(std::span<const std::string_view> args, std::string& reply) {
  ReplyWriter out(reply, 2);
  const CommandSpec* spec = find_command(args[0]);
  if (spec == nullptr) {
    out.error_line("ERR Unknown Redis command called from script");
    return;
  }
  if (pubsub_ != nullptr && script_pubsub(*pubsub_, out, *spec, args)) return;
  if (spec->local == cmd_select) {
    // Redis lets a script SELECT; here only database 0 exists, so any other index is refused
    // there too rather than ignored.
    if (args.size() != 2) {
      out.error_line("ERR Wrong number of args calling Redis command from script");
    } else {
      write_select(out, args[1]);
    }
    return;
  }
  if (spec->call == nullptr || spec->call == call_eval || spec->call == call_evalsha) {
    out.error_line("ERR This Redis command is not allowed from script");
    return;
  }
  const auto rest = args.subspan(1);
  if (!accepts_arity(*spec, rest.size())) {
    out.error_line("ERR Wrong number of args calling Redis command from script");
    return;
  }
  std::span<const std::string_view> positional;
  OptionValues values{};
  if (auto err = read_call_args(*spec, rest, positional, values)) {
    write_command_error(out, spec->flags, *err);
    return;
  }
  inner_->result.reset();
  (void)spec->call(service_, caller_, CallArgs{positional, values, /*in_transaction=*/true},
                   *inner_);
  if (!inner_->result) {
    inner_.release()->orphaned = true;
    inner_ = std::make_unique<Inner>();
    out.error_line("ERR the command would wait, which a script cannot");
    return;
  }
  // Written from where finish() put it (an Answer is a large variant: no move), then dropped.
  Result<Answer>& result = *inner_->result;
  if (!result.ok()) {
    write_command_error(out, spec->flags, result.error());
  } else {
    spec->write(out, *result);
  }
  inner_->result.reset();
}

}  // namespace holdfast::resp
