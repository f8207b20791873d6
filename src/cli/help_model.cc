#include "cli/help_model.h"

#include <string>
#include <vector>

namespace holdfast::cli {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at = text.find(separator); at != std::string::npos;
       at = text.find(separator, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

// CLI11 names an option's value by its type and then each validator's description, joined by
// colons: "TEXT:{always,never,horizon}", "TEXT:FILE", "INT:milliseconds >= 1". A set of choices
// and an existing file are what a completion can offer; anything else is a constraint to show.
void read_value(const CLI::Option& opt, ArgDoc& arg) {
  const std::vector<std::string> parts = split(opt.get_type_name(), ':');
  arg.value = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.size() > 2 && part.front() == '{' && part.back() == '}') {
      arg.choices = split(part.substr(1, part.size() - 2), ',');
      arg.value.clear();
      for (const std::string& choice : arg.choices)
        arg.value += (arg.value.empty() ? "" : "|") + choice;
    } else if (part == "FILE") {
      arg.file = true;
      arg.value = "FILE";
    } else if (!part.empty()) {
      arg.constraint += (arg.constraint.empty() ? "" : "; ") + part;
    }
  }
  if (!opt.get_option_text().empty()) arg.value = opt.get_option_text();
}

// An option that reads its variable itself (--token tells which of the two a refused token came
// from, so CLI11 does not do the fallback) says so in its help: "(default: $NAME...".
std::string default_variable(const std::string& description) {
  const std::string marker = "(default: $";
  const std::size_t at = description.find(marker);
  if (at == std::string::npos) return {};
  std::size_t end = at + marker.size();
  while (end < description.size() &&
         ((description[end] >= 'A' && description[end] <= 'Z') || description[end] == '_'))
    ++end;
  return description.substr(at + marker.size(), end - at - marker.size());
}

ArgDoc describe_arg(const CLI::Option& opt, const CLI::App& app) {
  ArgDoc arg;
  arg.positional = !opt.nonpositional();
  if (arg.positional) {
    arg.names = {opt.get_name(true)};
  } else {
    for (const std::string& s : opt.get_snames()) arg.names.push_back("-" + s);
    for (const std::string& l : opt.get_lnames()) arg.names.push_back("--" + l);
  }
  // A flag has no type name: it takes no value.
  if (opt.get_type_size() != 0 && !opt.get_type_name().empty()) read_value(opt, arg);
  arg.required = opt.get_required();
  arg.repeatable = opt.get_expected_max() >= CLI::detail::expected_max_vector_size;
  arg.help = &opt == app.get_help_ptr() || &opt == app.get_help_all_ptr();
  arg.description = opt.get_description();
  arg.envname = opt.get_envname();
  if (arg.envname.empty()) arg.envname = default_variable(arg.description);
  arg.default_value = opt.get_default_str();
  return arg;
}

bool hidden(const CLI::Option* opt) { return opt->get_group().empty(); }

std::vector<ArgDoc> options_of(const CLI::App& app) {
  std::vector<ArgDoc> options;
  for (const CLI::Option* opt : app.get_options()) {
    if (!hidden(opt) && opt->nonpositional()) options.push_back(describe_arg(*opt, app));
  }
  return options;
}

}  // namespace

CommandDoc describe_commands(const CLI::App& app, const std::string& name) {
  CommandDoc doc;
  doc.name = name;
  doc.description = app.get_description();
  doc.footer = app.get_footer();
  doc.options = options_of(app);
  for (const CLI::Option* opt : app.get_options()) {
    if (!hidden(opt) && !opt->nonpositional()) doc.positionals.push_back(describe_arg(*opt, app));
  }
  if (app.get_fallthrough() && app.get_parent() != nullptr) {
    for (ArgDoc& option : options_of(*app.get_parent()))
      if (!option.help) doc.inherited.push_back(std::move(option));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* a) {
         return !a->get_group().empty();  // an empty group hides a command from --help
       })) {
    doc.subcommands.push_back(describe_commands(*sub, name + " " + sub->get_name()));
  }
  return doc;
}

}  // namespace holdfast::cli
