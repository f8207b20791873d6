// holdfast: the lock server and its command-line client.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/build_info.h"
#include "cli/commands.h"
#include "cli/help_export.h"

namespace {

// Below the top-level help: each command's usage, arguments and options (with defaults), down
// to the leaves, so that one `holdfast --help` shows every option.
void print_commands(std::ostream& out, const CLI::App& parent, const std::string& path) {
  const CLI::Formatter formatter;  // the default layout, the one every command uses
  for (const CLI::App* cmd : parent.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string name = path + " " + cmd->get_name();
    out << "\n"
        << name << ": " << cmd->get_description() << "\n"
        << formatter.make_usage(cmd, name) << formatter.make_positionals(cmd)
        << formatter.make_groups(cmd, CLI::AppFormatMode::Sub);
    print_commands(out, *cmd, name);
  }
}

void print_every_command(std::ostream& out, CLI::App& app) {
  out << app.help() << "Every command (`holdfast COMMAND --help` shows one, with more detail):\n";
  print_commands(out, app, "holdfast");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Holdfast: a lease-based lock service.\n"};
  app.require_subcommand(1);
  app.set_version_flag("--version", holdfast::cli::version_line());
  int exit_code = holdfast::cli::kExitOk;
  holdfast::cli::add_serve_command(app, exit_code);
  holdfast::cli::add_auth_command(app, exit_code);
  holdfast::cli::add_rules_command(app, exit_code);
  holdfast::cli::add_locks_command(app, exit_code);
  if (holdfast::cli::is_help_export(argc, argv)) return holdfast::cli::export_help(app, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    // `holdfast --help` shows every command with its options and their defaults;
    // `holdfast CMD --help` shows one command.
    if (app.get_subcommands().empty()) {
      print_every_command(std::cout, app);
      return 0;
    }
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return holdfast::cli::kExitUsage;
  }
  return exit_code;
}
