// The subcommands of the holdfast binary. Each adds itself to the CLI11 app and returns the
// exit code through a shared slot (docs/reference.md section 8: 0 done, 1 not acquired, 2 usage
// error, 3 authentication or access error, 4 server unreachable).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace holdfast::cli {

struct RemoteOptions;

enum ExitCode : int {
  kExitOk = 0,
  kExitNotAcquired = 1,
  kExitUsage = 2,
  kExitAccess = 3,
  kExitUnreachable = 4,
};

void add_serve_command(CLI::App& app, int& exit_code);
void add_auth_command(CLI::App& app, int& exit_code);
void add_rules_command(CLI::App& app, int& exit_code);
// rules push|get|delete, which talk to a server.
void add_rules_remote_commands(CLI::App& rules, int& exit_code);
// holdfast locks ...: the lock commands over the client library (locks_cmd.cc).
void add_locks_command(CLI::App& app, int& exit_code);
// holdfast locks watch [PREFIX] (locks_watch.cc), with the `locks` options it reads.
void add_locks_watch_command(CLI::App& locks, const RemoteOptions& remote, int& exit_code);

}  // namespace holdfast::cli
