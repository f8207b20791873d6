// The command tree of the holdfast binary as plain data, read from the CLI11 App that parses
// the command line: every command, option and argument with its description, value, default
// and environment variable. The manual page and the shell completions are written from it
// (help_man.cc, help_completion.cc), so they list exactly what --help lists: a new option
// reaches all of them by being added to its command, and nothing is maintained by hand.
#pragma once

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace holdfast::cli {

// One option (--ttl) or positional argument (KEY) of a command.
struct ArgDoc {
  std::vector<std::string> names;  // "-h", "--help"; for a positional its one name, "key"
  bool positional = false;
  // What the value is called in a synopsis ("INT", "FILE", "always|never|horizon"); empty for a
  // flag, which takes no value.
  std::string value;
  std::vector<std::string> choices;  // the only values accepted, when there is such a list
  std::string constraint;            // what a validator checks besides, e.g. "milliseconds >= 1"
  bool file = false;                 // must name an existing file
  bool required = false;
  bool repeatable = false;  // an option given several times, or a positional taking the rest
  bool help = false;        // -h/--help, which every command has
  std::string description;
  std::string envname;        // the variable read when the option is not given
  std::string default_value;  // CLI11's default, when one was set (most defaults are in the text)
};

struct CommandDoc {
  std::string name;  // the whole command: "holdfast locks acquire"
  std::string description;
  std::string footer;  // what --help prints below the options
  std::vector<ArgDoc> options;
  // A command that lets its parent's options come after it (`holdfast locks acquire K --json`)
  // also completes them.
  std::vector<ArgDoc> inherited;
  std::vector<ArgDoc> positionals;
  std::vector<CommandDoc> subcommands;
};

// Reads `app` (the holdfast App, every command added) into a tree named `name`. Hidden
// commands and options (no group) are left out, as --help leaves them out.
CommandDoc describe_commands(const CLI::App& app, const std::string& name);

// The roff source of holdfast(1), for `man`; `version` goes in its title line.
void write_man_page(std::ostream& out, const CommandDoc& root, const std::string& version);
// A bash completion script: a `complete -F` function completing commands, options and their
// values at every level.
void write_bash_completion(std::ostream& out, const CommandDoc& root);
// A zsh completion function (`#compdef holdfast`) over _arguments, with descriptions.
void write_zsh_completion(std::ostream& out, const CommandDoc& root);

}  // namespace holdfast::cli
