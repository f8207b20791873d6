// holdfast rules push FILE.toml | get | delete NAME: the server's lock rule set, through the
// client library (RULES.SET / RULES.GET / RULES.DELETE). Admin, owner or function tokens only.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/locks_output.h"
#include "cli/remote.h"

namespace holdfast::cli {
namespace {

struct RulesFlags {
  RemoteOptions remote;
  std::string file;
  std::string name;
};

int push(const RulesFlags& f, Client& client) {
  std::ifstream in(f.file);
  if (!in) {
    std::cerr << "holdfast rules push: cannot read " << f.file << "\n";
    return kExitUsage;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const bool replaced = client.push_rule_set(ss.str());
  auto installed = client.rule_set();
  const std::string name = installed ? installed->name : std::string();
  if (f.remote.json) {
    std::cout << "{\"name\":" << json_string(name)
              << ",\"replaced\":" << (replaced ? "true" : "false") << "}\n";
  } else {
    std::cout << (replaced ? "replaced" : "installed") << " rule set " << name << "\n";
  }
  return kExitOk;
}

int get(const RulesFlags& f, Client& client) {
  auto installed = client.rule_set();
  if (f.remote.json) {
    if (installed) {
      std::cout << "{\"name\":" << json_string(installed->name)
                << ",\"toml\":" << json_string(installed->toml) << "}\n";
    } else {
      std::cout << "null\n";
    }
  } else if (installed) {
    std::cout << installed->toml;
    if (!installed->toml.empty() && installed->toml.back() != '\n') std::cout << "\n";
  } else {
    std::cout << "no rule set installed: every member may take every key\n";
  }
  return kExitOk;
}

int remove(const RulesFlags& f, Client& client) {
  client.delete_rule_set(f.name);
  if (f.remote.json) {
    std::cout << "{\"deleted\":true}\n";
  } else {
    std::cout << "deleted rule set " << f.name << "; every member may take every key again\n";
  }
  return kExitOk;
}

}  // namespace

void add_rules_remote_commands(CLI::App& rules, int& exit_code) {
  auto f = std::make_shared<RulesFlags>();
  auto on = [f, &exit_code](CLI::App* cmd, int (*body)(const RulesFlags&, Client&)) {
    add_remote_options(cmd, f->remote);
    cmd->callback([f, &exit_code, body] {
      exit_code = run_remote(f->remote, "holdfast rules", [&](Client& c) { return body(*f, c); });
    });
  };
  CLI::App* p =
      rules.add_subcommand("push", "Install (or replace) the lock rule set from a TOML file");
  p->add_option("file", f->file, "the rule set, e.g. lock-policy.toml")
      ->required()
      ->check(CLI::ExistingFile);
  on(p, push);
  CLI::App* g = rules.add_subcommand("get", "Print the installed rule set");
  on(g, get);
  CLI::App* d = rules.add_subcommand("delete", "Remove the rule set (open access again)");
  d->add_option("name", f->name, "the rule set's name")->required();
  on(d, remove);
}

}  // namespace holdfast::cli
