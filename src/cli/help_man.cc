// holdfast(1) in roff (man(7) macros), from the command tree: a synopsis line per command, then
// every command with its arguments and options, the variables they read, the files of the
// Debian package, and the exit codes of commands.h.
#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/help_model.h"

namespace holdfast::cli {
namespace {

// Text as roff prints it: a backslash is roff's escape character, and a line that starts
// with a dot or a quote would be read as a request.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

// Option names and commands are typed as they read, so their hyphens are minus signs (a plain
// "-" may print as a typographic hyphen that a copied command line does not accept).
std::string literal(const std::string& text) {
  std::string out;
  for (char c : roff(text)) {
    if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// KEY, [HOLDER], COMMAND...: as the synopsis shows a positional.
std::string positional_usage(const ArgDoc& arg) {
  std::string name = "\\fI" + literal(upper(arg.names[0])) + "\\fR";
  if (arg.repeatable) name += "...";
  return arg.required ? name : "[" + name + "]";
}

// Each line of `text` as its own roff line; an empty line starts a new paragraph.
void write_text(std::ostream& out, const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out << (line.empty() ? ".PP" : roff(line)) << "\n";
}

// Text laid out for a terminal (a footer's columns): kept as it is, line by line.
void write_preformatted(std::ostream& out, const std::string& text) {
  out << ".PP\n.nf\n";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out << roff(line) << "\n";
  out << ".fi\n";
}

void write_arg(std::ostream& out, const ArgDoc& arg) {
  out << ".TP\n";
  if (arg.positional) {
    out << "\\fI" << literal(upper(arg.names[0])) << "\\fR" << (arg.repeatable ? "..." : "");
  } else {
    for (std::size_t i = 0; i < arg.names.size(); ++i)
      out << (i > 0 ? ", " : "") << "\\fB" << literal(arg.names[i]) << "\\fR";
    if (!arg.value.empty()) out << " \\fI" << literal(arg.value) << "\\fR";
  }
  out << "\n";
  std::string text = arg.description;
  if (!arg.default_value.empty() && text.find("(default") == std::string::npos)
    text += " (default " + arg.default_value + ")";
  if (!arg.constraint.empty()) text += "; " + arg.constraint;
  if (arg.required && !arg.positional) text += "; required";
  // What the description does not say already.
  if (arg.repeatable && !arg.positional && text.find("repeatable") == std::string::npos)
    text += "; repeatable";
  if (!arg.envname.empty() && text.find("$" + arg.envname) == std::string::npos)
    text += "; read from $" + arg.envname + " when not given";
  write_text(out, text);
}

std::string usage(const CommandDoc& cmd) {
  std::string line = "\\fB" + literal(cmd.name) + "\\fR";
  if (!cmd.subcommands.empty()) return line + " \\fICOMMAND\\fR ...";
  if (cmd.options.size() + cmd.inherited.size() > 1) line += " [\\fIOPTIONS\\fR]";
  for (const ArgDoc& arg : cmd.positionals) line += " " + positional_usage(arg);
  return line;
}

void write_synopsis(std::ostream& out, const CommandDoc& cmd) {
  if (cmd.subcommands.empty()) out << usage(cmd) << "\n";
  for (const CommandDoc& sub : cmd.subcommands) write_synopsis(out, sub);
}

// Below the top: one subsection per command. A footer that repeats the parent's (the exit
// codes of every `locks` command) gives only what it adds.
void write_command(std::ostream& out, const CommandDoc& cmd, const std::string& parent_footer) {
  out << ".SS \"" << literal(cmd.name) << "\"\n";
  write_text(out, cmd.description);
  out << ".PP\n" << usage(cmd) << "\n";
  for (const ArgDoc& arg : cmd.positionals) write_arg(out, arg);
  for (const ArgDoc& arg : cmd.options)
    if (!arg.help) write_arg(out, arg);
  std::string footer = cmd.footer;
  if (!parent_footer.empty() && footer.size() >= parent_footer.size() &&
      footer.compare(footer.size() - parent_footer.size(), parent_footer.size(), parent_footer) ==
          0)
    footer.resize(footer.size() - parent_footer.size());
  while (!footer.empty() && footer.back() == '\n') footer.pop_back();
  if (!footer.empty()) write_preformatted(out, footer);
  for (const CommandDoc& sub : cmd.subcommands) write_command(out, sub, cmd.footer);
}

// Every variable an option reads, with the commands whose option it stands for.
void collect_env(const CommandDoc& cmd, std::map<std::string, std::vector<std::string>>& users,
                 std::map<std::string, std::string>& meaning) {
  for (const ArgDoc& arg : cmd.options) {
    if (arg.envname.empty()) continue;
    users[arg.envname].push_back(cmd.name + " " + arg.names.back());
    meaning.emplace(arg.envname, arg.description);
  }
  for (const CommandDoc& sub : cmd.subcommands) collect_env(sub, users, meaning);
}

void write_environment(std::ostream& out, const CommandDoc& root) {
  std::map<std::string, std::vector<std::string>> users;
  std::map<std::string, std::string> meaning;
  collect_env(root, users, meaning);
  out << ".SH ENVIRONMENT\n";
  for (const auto& [name, options] : users) {
    out << ".TP\n\\fB" << name << "\\fR\n";
    std::string text = "Stands for ";
    for (std::size_t i = 0; i < options.size(); ++i)
      text += (i == 0 ? "" : i + 1 == options.size() ? " and " : ", ") + options[i];
    write_text(out, text + " when the option is not given: " + meaning[name] + ".");
  }
  out << ".TP\n\\fBNOTIFY_SOCKET\\fR\n"
      << "Set by systemd for a unit of Type=notify: holdfast serve sends READY=1 there once every\n"
      << "listener is bound, and STOPPING=1 when it begins to shut down.\n";
}

void write_exit_status(std::ostream& out) {
  struct Row {
    ExitCode code;
    const char* meaning;
  };
  static constexpr Row kRows[] = {
      {kExitOk, "Done (holdfast serve: stopped by SIGINT or SIGTERM)."},
      {kExitNotAcquired,
       "Not acquired: the key is held or the wait timed out, or the hold was not renewed or "
       "released (holdfast serve: could not start)."},
      {kExitUsage, "Usage error: bad flags, arguments or configuration."},
      {kExitAccess, "Authentication or access error."},
      {kExitUnreachable, "The server is unreachable."},
  };
  out << ".SH \"EXIT STATUS\"\n";
  for (const Row& row : kRows)
    out << ".TP\n" << static_cast<int>(row.code) << "\n" << row.meaning << "\n";
  out << ".PP\nholdfast locks run exits with the status of the command it ran.\n";
}

}  // namespace

void write_man_page(std::ostream& out, const CommandDoc& root, const std::string& version) {
  out << ".\\\" Generated by `holdfast help-export man` from the same command tree as --help.\n"
      << ".TH HOLDFAST 1 \"\" \"holdfast " << version << "\" \"User Commands\"\n"
      << ".SH NAME\n"
      << "holdfast \\- the Holdfast lock server and its command-line client\n"
      << ".SH SYNOPSIS\n.nf\n";
  write_synopsis(out, root);
  out << ".fi\n.SH DESCRIPTION\n";
  write_text(out, root.description);
  out << ".PP\n"
      << "\\fBholdfast serve\\fR runs the server; \\fBholdfast locks\\fR takes, inspects and "
         "frees\n"
      << "locks on a server; \\fBholdfast rules\\fR manages the lock rule set and "
         "\\fBholdfast auth\\fR\n"
      << "helps write the credentials file. \\fBholdfast\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR "
         "shows one\n"
      << "command, and \\fBholdfast \\-\\-help\\fR every command, as below.\n"
      << ".SH OPTIONS\n";
  for (const ArgDoc& arg : root.options) write_arg(out, arg);
  out << ".SH COMMANDS\n";
  for (const CommandDoc& cmd : root.subcommands) write_command(out, cmd, root.footer);
  write_environment(out, root);
  out << ".SH FILES\n"
      << ".TP\n/etc/holdfast/holdfast.toml\n"
      << "The configuration the holdfast service reads (holdfast serve \\-\\-config).\n"
      << ".TP\n/var/lib/holdfast\n"
      << "The service's data dir: the write-ahead log, snapshots, and the Unix socket\n"
      << "holdfast.sock.\n"
      << ".TP\n/lib/systemd/system/holdfast.service\n"
      << "The systemd unit: holdfast serve as the holdfast user; \\fBsystemctl reload "
         "holdfast\\fR\n"
      << "rereads the credentials file.\n";
  write_exit_status(out);
  out << ".SH \"SEE ALSO\"\n"
      << "\\fBsystemctl\\fR(1), \\fBjournalctl\\fR(1), \\fBredis\\-cli\\fR(1)\n"
      << ".PP\n"
      << "In the Holdfast source: README.md, docs/configuration.md (every setting of\n"
      << "holdfast.toml) and docs/reference.md (every operation, error code and limit).\n";
}

}  // namespace holdfast::cli
