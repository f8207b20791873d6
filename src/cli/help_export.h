// holdfast help-export man|bash|zsh [-o FILE]: writes holdfast(1) or a shell's completion from
// the binary's own command tree (help_model.h). Hidden, as a tool of the build: the package's
// manual page and completions are made by running the freshly built binary, so they list
// exactly the commands and options it has. Not a CLI11 subcommand, so that it stays out of the
// tree it describes and out of --help.
#pragma once

#include <CLI/CLI.hpp>

namespace holdfast::cli {

// Whether the command line asks for the export (its first argument is "help-export").
bool is_help_export(int argc, char** argv);
// Writes the export of `app` (every command added) as the command line asks; returns the exit
// code: 0, or 2 with a message on stderr for a bad format or an unwritable file.
int export_help(const CLI::App& app, int argc, char** argv);

}  // namespace holdfast::cli
