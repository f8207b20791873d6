// holdfast rules: the lock rule set.
//   eval EXPR [--user ID] [--role R] [--group type/id]... [--key KEY]
//        [--operation OP] [--mode M] [--permits N] [--take K]
//        [--holder H] [--to T] [--from F]   evaluates a rule locally
//   eval --json                     one {"expr", "bindings"} request on stdin, one typed reply
//   push FILE.toml | get | delete NAME   (against a server; see rules_remote.cc)
#include <cstdint>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/rule_set.h"
#include "cel/cel.h"
#include "cel/json_eval.h"
#include "cli/commands.h"

namespace holdfast::cli {
namespace {

struct EvalFlags {
  std::string expr;
  std::string user = "alice";
  std::string role = "member";
  std::vector<std::string> groups;
  std::string key;
  std::optional<std::string> holder, to, from;  // request.holderId, request.toId, request.fromId
  std::optional<std::string> operation, mode;   // request.operation, request.mode
  std::optional<std::int64_t> permits, take;    // request.permits, request.take
  bool json = false;
};

int eval(const EvalFlags& f) {
  if (f.json) {
    std::string request((std::istreambuf_iterator<char>(std::cin)),
                        std::istreambuf_iterator<char>());
    std::cout << cel::eval_json_request(request) << "\n";
    return kExitOk;
  }
  if (f.expr.empty()) {
    std::cerr << "holdfast rules eval: give an expression, or --json with a request on stdin\n";
    return kExitUsage;
  }
  Principal p;
  p.id = f.user;
  if (f.role == "member") {
    p.role = Role::kMember;
  } else if (f.role == "admin") {
    p.role = Role::kAdmin;
  } else if (f.role == "owner") {
    p.role = Role::kOwner;
  } else {
    std::cerr << "holdfast rules eval: --role must be member, admin or owner\n";
    return kExitUsage;
  }
  for (const auto& g : f.groups) {
    auto slash = g.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == g.size()) {
      std::cerr << "holdfast rules eval: --group must be type/id, not " << g << "\n";
      return kExitUsage;
    }
    p.groups.emplace_back(g.substr(0, slash), g.substr(slash + 1));
  }
  auto program = cel::compile(f.expr);
  if (!program.ok()) {
    std::cerr << "error: " << program.error().message << "\n";
    return kExitUsage;
  }
  RuleRequest asked;
  asked.holder_id = f.holder;
  asked.to_id = f.to;
  asked.from_id = f.from;
  asked.operation = f.operation;
  asked.mode = f.mode;
  asked.permits = f.permits;
  asked.take = f.take;
  cel::Activation activation = rule_activation(p, f.key, asked);
  auto value = program->evaluate(activation);
  if (!value.ok()) {
    std::cerr << "error: " << value.error().message << "\n";
    return kExitNotAcquired;
  }
  std::cout << cel::format_value(*value) << "\n";
  return kExitOk;
}

}  // namespace

void add_rules_command(CLI::App& app, int& exit_code) {
  CLI::App* rules =
      app.add_subcommand("rules", "The lock rule set: push, get, delete, and eval to try a rule");
  rules->require_subcommand(1);
  auto f = std::make_shared<EvalFlags>();
  CLI::App* e = rules->add_subcommand(
      "eval",
      "Evaluate a CEL rule as the server would: user.userId, user.role, record.key, "
      "request.operation, request.mode, request.permits, request.take, request.holderId, "
      "request.toId, request.fromId, isMemberOf(type, id).\n"
      "Prints the value (exit 0); a compile error exits 2, an evaluation error 1.\n"
      "With --json, reads {\"expr\": ..., \"bindings\": {name: {\"type\": T, \"value\": V}}} on "
      "stdin and\n"
      "prints {\"type\": T, \"value\": V} or {\"error\": message}.");
  e->add_option("expr", f->expr, "the CEL expression");
  e->add_option("--user", f->user, "user.userId (default alice)");
  e->add_option("--role", f->role, "user.role: member, admin or owner (default member)");
  e->add_option("--group", f->groups, "a type/id group for isMemberOf; repeatable (default none)");
  e->add_option("--key", f->key, "record.key (default \"\")");
  e->add_option("--operation", f->operation,
                "request.operation, e.g. acquire or tryAcquire (default: absent)");
  e->add_option("--mode", f->mode,
                "request.mode: exclusive, shared or semaphore (default: absent)");
  e->add_option("--permits", f->permits, "request.permits, an int (default: absent)");
  e->add_option("--take", f->take, "request.take, an int (default: absent)");
  e->add_option("--holder", f->holder, "request.holderId (default: absent)");
  e->add_option("--to", f->to, "request.toId (default: absent)");
  e->add_option("--from", f->from, "request.fromId (default: absent)");
  e->add_flag("--json", f->json, "the evaluator protocol on stdin/stdout");
  e->callback([f, &exit_code] { exit_code = eval(*f); });
  add_rules_remote_commands(*rules, exit_code);
}

}  // namespace holdfast::cli
