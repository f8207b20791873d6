// Shell completion for holdfast, from the command tree.
//
// bash: one function, `_holdfast`, holding the tree as associative arrays keyed by the command
// ("holdfast locks") or the command and an option ("holdfast serve --fsync"). It walks the words
// before the cursor: a command's subcommand moves down the tree, an option that takes a value
// skips that value, and `--` hands the rest to a command line (`holdfast locks run KEY -- CMD`).
// At the cursor it offers the subcommands, or the options when the word starts with "-", or
// the values of the option before it: its choices, or files when it names one.
//
// zsh: one function per command over _arguments (descriptions, choices, files, repeatable
// options), the commands with subcommands dispatching to them as zsh's own completions do.
#include <string>
#include <utility>
#include <vector>

#include "cli/help_model.h"
#include "core/text.h"

namespace holdfast::cli {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// What the completion of a command needs: its options, its own and those it lets through.
std::vector<const ArgDoc*> all_options(const CommandDoc& cmd) {
  std::vector<const ArgDoc*> options;
  for (const ArgDoc& arg : cmd.options) options.push_back(&arg);
  for (const ArgDoc& arg : cmd.inherited) options.push_back(&arg);
  return options;
}

// The arrays of the bash function, filled over the whole tree.
struct BashTables {
  std::vector<std::pair<std::string, std::string>> subs, opts, takes, choices, files;
};

void fill(BashTables& t, const CommandDoc& cmd) {
  std::vector<std::string> names;
  for (const CommandDoc& sub : cmd.subcommands)
    names.push_back(sub.name.substr(cmd.name.size() + 1));
  if (!names.empty()) t.subs.emplace_back(cmd.name, joined(names));
  std::vector<std::string> option_names;
  for (const ArgDoc* arg : all_options(cmd)) {
    for (const std::string& name : arg->names) {
      option_names.push_back(name);
      if (arg->value.empty()) continue;
      const std::string key = cmd.name + " " + name;
      t.takes.emplace_back(key, "1");
      if (!arg->choices.empty()) t.choices.emplace_back(key, joined(arg->choices));
      if (arg->file) t.files.emplace_back(key, "1");
    }
  }
  t.opts.emplace_back(cmd.name, joined(option_names));
  for (const ArgDoc& arg : cmd.positionals)
    if (arg.file) t.files.emplace_back(cmd.name, "1");
  for (const CommandDoc& sub : cmd.subcommands) fill(t, sub);
}

void write_array(std::ostream& out, const char* name,
                 const std::vector<std::pair<std::string, std::string>>& rows) {
  out << "  local -A " << name << "=(\n";
  for (const auto& [key, value] : rows)
    out << "    [" << shell_quoted(key) << "]=" << shell_quoted(value) << "\n";
  out << "  )\n";
}

constexpr const char* kBashWalk = R"(  local cur=${COMP_WORDS[COMP_CWORD]}
  local path=holdfast option= word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ -n $option ]]; then
      # The option's value; `--opt=value` splits into three words, the value after the "=".
      [[ $word == = ]] || option=
      continue
    fi
    if [[ $word == -- ]]; then
      # A command line to run: its first word is a command, the others most often files.
      if ((i + 1 == COMP_CWORD)); then
        COMPREPLY=($(compgen -c -- "$cur"))
      else
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      return 0
    fi
    if [[ -n ${takes["$path $word"]} ]]; then
      option=$word
    elif [[ $word != -* && " ${subs[$path]} " == *" $word "* ]]; then
      path="$path $word"
    fi
  done
  if [[ -n $option ]]; then
    if [[ -n ${choices["$path $option"]} ]]; then
      COMPREPLY=($(compgen -W "${choices["$path $option"]}" -- "$cur"))
    elif [[ -n ${files["$path $option"]} ]]; then
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "${opts[$path]}" -- "$cur"))
  elif [[ -n ${subs[$path]} ]]; then
    COMPREPLY=($(compgen -W "${subs[$path]}" -- "$cur"))
  elif [[ -n ${files[$path]} ]]; then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}
)";

// The description in an _arguments spec sits in brackets: escape what ends them.
std::string zsh_description(const std::string& text) {
  std::string out;
  for (char c : first_line(text)) {
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The message part of a spec ends at a colon.
std::string zsh_message(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string zsh_value_action(const ArgDoc& arg) {
  if (arg.file) return "_files";
  if (!arg.choices.empty()) return "(" + joined(arg.choices) + ")";
  return " ";  // a value is required, and nothing can be offered for it
}

std::vector<std::string> zsh_option_specs(const ArgDoc& arg) {
  std::vector<std::string> specs;
  std::string exclusive;  // -h and --help exclude each other
  if (arg.names.size() > 1) exclusive = "(" + joined(arg.names) + ")";
  for (const std::string& name : arg.names) {
    std::string spec = exclusive + (arg.repeatable ? "*" : "") + name;
    if (!arg.value.empty()) spec += "=";
    spec += "[" + zsh_description(arg.description) + "]";
    if (!arg.value.empty()) spec += ":" + zsh_message(arg.value) + ":" + zsh_value_action(arg);
    specs.push_back(shell_quoted(spec));
  }
  return specs;
}

std::string zsh_function_name(const CommandDoc& cmd) {
  std::string name = "_";
  for (char c : cmd.name) name += (c == ' ' || c == '-') ? '_' : c;
  return name;
}

void write_zsh_function(std::ostream& out, const CommandDoc& cmd) {
  for (const CommandDoc& sub : cmd.subcommands) write_zsh_function(out, sub);
  const bool dispatches = !cmd.subcommands.empty();
  out << zsh_function_name(cmd) << "() {\n";
  if (dispatches)
    out << "  local curcontext=$curcontext state state_descr line ret=1\n  typeset -A opt_args\n";
  out << "  _arguments -s -S" << (dispatches ? " -C" : "") << " \\\n";
  for (const ArgDoc* arg : all_options(cmd))
    for (const std::string& spec : zsh_option_specs(*arg)) out << "    " << spec << " \\\n";
  if (dispatches) {
    out << "    ': :->command' \\\n    '*:: :->argument' && ret=0\n"
        << "  case $state in\n    command)\n      local -a commands=(\n";
    for (const CommandDoc& sub : cmd.subcommands) {
      const std::string name = sub.name.substr(cmd.name.size() + 1);
      out << "        " << shell_quoted(name + ":" + first_line(sub.description)) << "\n";
    }
    out << "      )\n      _describe -t commands " << shell_quoted(cmd.name + " command")
        << " commands && ret=0\n      ;;\n    argument)\n      case $words[1] in\n";
    for (const CommandDoc& sub : cmd.subcommands)
      out << "        " << sub.name.substr(cmd.name.size() + 1) << ") " << zsh_function_name(sub)
          << " && ret=0 ;;\n";
    out << "      esac\n      ;;\n  esac\n  return ret\n}\n\n";
    return;
  }
  int index = 1;
  for (const ArgDoc& arg : cmd.positionals) {
    const std::string message = zsh_message(first_line(arg.description));
    // A last argument that takes the rest is a command line of its own (locks run's CMD).
    const std::string spec =
        arg.repeatable ? "*::" + message + ":_normal"
                       : std::to_string(index++) + ":" + message + ":" + zsh_value_action(arg);
    out << "    " << shell_quoted(spec) << " \\\n";
  }
  out << "    && return 0\n  return 1\n}\n\n";
}

}  // namespace

void write_bash_completion(std::ostream& out, const CommandDoc& root) {
  BashTables t;
  fill(t, root);
  out << "# bash completion for holdfast. Generated by `holdfast help-export bash` from the\n"
      << "# command tree that --help prints: edit the commands, not this file.\n"
      << "_holdfast() {\n";
  write_array(out, "subs", t.subs);
  write_array(out, "opts", t.opts);
  write_array(out, "takes", t.takes);
  write_array(out, "choices", t.choices);
  write_array(out, "files", t.files);
  out << kBashWalk << "complete -F _holdfast holdfast\n";
}

void write_zsh_completion(std::ostream& out, const CommandDoc& root) {
  out << "#compdef holdfast\n"
      << "# zsh completion for holdfast. Generated by `holdfast help-export zsh` from the\n"
      << "# command tree that --help prints: edit the commands, not this file.\n\n";
  write_zsh_function(out, root);
  // Autoloaded from $fpath the file is _holdfast's body: define, then complete. Sourced, it
  // registers itself.
  out << "if [[ $funcstack[1] == _holdfast ]]; then\n  _holdfast \"$@\"\nelse\n"
      << "  compdef _holdfast holdfast\nfi\n";
}

}  // namespace holdfast::cli
