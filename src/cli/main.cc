// holdfast: the lock server and its command-line client.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Holdfast: a lease-based lock service.\n"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "holdfast 0.1.0");
  int exit_code = holdfast::cli::kExitOk;
  holdfast::cli::add_serve_command(app, exit_code);
  holdfast::cli::add_auth_command(app, exit_code);
  holdfast::cli::add_rules_command(app, exit_code);
  holdfast::cli::add_locks_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
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
