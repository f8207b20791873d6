// COMMAND and its subcommands, in Redis 7's shapes, generated from the command table:
//  - COMMAND / COMMAND INFO: per command [name, arity, flags, first key, last key, step,
//    ACL categories, tips, key specifications, subcommands] (redis-py's r.command() reads it);
//  - COMMAND DOCS: per command {summary, since, group, arguments[, subcommands]}, the
//    arguments made from the usage line (resp/usage_grammar.h); redis-cli builds its help and
//    its typing hints from it;
//  - COMMAND COUNT, COMMAND LIST [FILTERBY ...].
// Names are lower case, and a subcommand is "container|sub", as Redis writes them.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "core/glob.h"
#include "server/resp/ascii.h"
#include "server/resp/commands.h"
#include "server/resp/usage_grammar.h"

namespace holdfast::resp {
namespace {

std::string full_name(const CommandSpec& c, const CommandSpec* container) {
  return container == nullptr ? ascii_lower(c.name)
                              : ascii_lower(container->name) + "|" + ascii_lower(c.name);
}

std::vector<std::string_view> flag_names(const CommandSpec& c) {
  std::vector<std::string_view> out;
  if (c.flags & kWrite) out.push_back("write");
  if (c.flags & kReadOnly) out.push_back("readonly");
  if (c.flags & kAdmin) out.push_back("admin");
  if (c.flags & kBlocking) out.push_back("blocking");
  if (c.flags & kNoAuth) out.push_back("no_auth");
  if (c.local != nullptr) {  // answered by the front end alone
    out.push_back("loading");
    out.push_back("stale");
    out.push_back("fast");
  }
  return out;
}

std::vector<std::string> categories(const CommandSpec& c) {
  std::vector<std::string> out;
  if (c.flags & kWrite) out.push_back("@write");
  if (c.flags & kReadOnly) out.push_back("@read");
  if (c.flags & kAdmin) {
    out.push_back("@admin");
    out.push_back("@dangerous");
  }
  if (c.flags & kBlocking) out.push_back("@blocking");
  const bool fast = c.local != nullptr || ((c.flags & kKeyed) && !(c.flags & kBlocking));
  out.push_back(fast ? "@fast" : "@slow");
  if (!c.group.empty()) out.push_back("@" + std::string(c.group));
  return out;
}

void write_info(ReplyWriter& w, const CommandSpec& c, const CommandSpec* container) {
  const int words = container == nullptr ? 1 : 2;
  const int min = c.min_args + words;
  const int arity = c.max_args >= 0 && c.max_args == c.min_args ? min : -min;
  const bool keyed = (c.flags & kKeyed) != 0;
  w.array(10);
  w.bulk(full_name(c, container));
  w.integer(arity);
  const auto flags = flag_names(c);
  w.set(flags.size());
  for (auto f : flags) w.simple(f);
  w.integer(keyed ? 1 : 0);  // first key
  w.integer(keyed ? 1 : 0);  // last key
  w.integer(keyed ? 1 : 0);  // step
  const auto cats = categories(c);
  w.set(cats.size());
  for (const auto& cat : cats) w.simple(cat);
  w.set(0);  // tips
  if (keyed) {
    w.array(1);
    w.map(3);
    w.bulk("flags");
    w.set(2);
    w.simple((c.flags & kWrite) ? "RW" : "RO");
    w.simple((c.flags & kWrite) ? "UPDATE" : "ACCESS");
    w.bulk("begin_search");
    w.map(2);
    w.field("type", "index");
    w.bulk("spec");
    w.map(1);
    w.field("index", 1);
    w.bulk("find_keys");
    w.map(2);
    w.field("type", "range");
    w.bulk("spec");
    w.map(3);
    w.field("lastkey", 0);
    w.field("keystep", 1);
    w.field("limit", 0);
  } else {
    w.array(0);
  }
  w.array(c.subcommands.size());
  for (const auto& sub : c.subcommands) write_info(w, sub, &c);
}

void write_argument(ReplyWriter& w, const ArgumentDoc& a) {
  std::vector<std::string_view> flags;
  if (a.optional) flags.push_back("optional");
  if (a.multiple) flags.push_back("multiple");
  const bool has_display = a.type != "pure-token" && a.type != "oneof" && a.type != "block";
  w.map(2 + (has_display ? 1 : 0) + (a.type == "key" ? 1 : 0) + (a.token.empty() ? 0 : 1) +
        (flags.empty() ? 0 : 1) + (a.arguments.empty() ? 0 : 1));
  w.field("name", a.name);
  w.field("type", a.type);
  if (has_display) w.field("display_text", a.name);
  if (a.type == "key") w.field("key_spec_index", 0);
  if (!a.token.empty()) w.field("token", a.token);
  if (!flags.empty()) {
    w.bulk("flags");
    w.set(flags.size());
    for (auto f : flags) w.simple(f);
  }
  if (!a.arguments.empty()) {
    w.bulk("arguments");
    w.array(a.arguments.size());
    for (const auto& inner : a.arguments) write_argument(w, inner);
  }
}

void write_docs(CommandContext& ctx, const CommandSpec& c, const CommandSpec* container) {
  // A container's usage line only points at its subcommands, which carry the arguments.
  std::vector<ArgumentDoc> args;
  if (c.subcommands.empty()) {
    if (auto parsed = parse_usage(c.usage, container == nullptr ? 1 : 2)) args = std::move(*parsed);
  }
  ReplyWriter& w = ctx.out;
  w.map(3 + (args.empty() ? 0 : 1) + (c.subcommands.empty() ? 0 : 1));
  w.field("summary", c.summary);
  w.field("since", ctx.info.version);
  w.field("group", c.group);
  if (!args.empty()) {
    w.bulk("arguments");
    w.array(args.size());
    for (const auto& a : args) write_argument(w, a);
  }
  if (!c.subcommands.empty()) {
    w.bulk("subcommands");
    w.map(c.subcommands.size());
    for (const auto& sub : c.subcommands) {
      w.bulk(full_name(sub, &c));
      write_docs(ctx, sub, &c);
    }
  }
}

// "client|list" or "lock.try": the spec and its container (null for a top-level command).
std::pair<const CommandSpec*, const CommandSpec*> lookup(std::string_view name) {
  const auto bar = name.find('|');
  const CommandSpec* top = find_command(name.substr(0, bar));
  if (top == nullptr || bar == std::string_view::npos) return {top, nullptr};
  const CommandSpec* sub = find_subcommand(*top, name.substr(bar + 1));
  if (sub == nullptr) return {nullptr, nullptr};
  return {sub, top};
}

}  // namespace

Flow cmd_command(CommandContext& ctx, std::span<const std::string_view>) {
  ctx.out.array(command_table().size());
  for (const auto& c : command_table()) write_info(ctx.out, c, nullptr);
  return Flow::kContinue;
}

Flow cmd_command_count(CommandContext& ctx, std::span<const std::string_view>) {
  ctx.out.integer(static_cast<std::int64_t>(command_table().size()));
  return Flow::kContinue;
}

Flow cmd_command_info(CommandContext& ctx, std::span<const std::string_view> args) {
  if (args.empty()) return cmd_command(ctx, args);
  ctx.out.array(args.size());
  for (auto name : args) {
    auto [spec, container] = lookup(name);
    if (spec == nullptr) {
      ctx.out.null();
    } else {
      write_info(ctx.out, *spec, container);
    }
  }
  return Flow::kContinue;
}

Flow cmd_command_docs(CommandContext& ctx, std::span<const std::string_view> args) {
  std::vector<std::pair<const CommandSpec*, const CommandSpec*>> found;
  if (args.empty()) {
    for (const auto& c : command_table()) found.emplace_back(&c, nullptr);
  } else {
    for (auto name : args)
      if (auto hit = lookup(name); hit.first != nullptr) found.push_back(hit);
  }
  ctx.out.map(found.size());
  for (auto [spec, container] : found) {
    ctx.out.bulk(full_name(*spec, container));
    write_docs(ctx, *spec, container);
  }
  return Flow::kContinue;
}

Flow cmd_command_list(CommandContext& ctx, std::span<const std::string_view> args) {
  std::string pattern, category;
  bool module = false;
  if (!args.empty()) {
    if (args.size() != 3 || !ascii_iequals(args[0], "FILTERBY")) {
      ctx.out.error_line(
          "ERR syntax error (usage: COMMAND LIST [FILTERBY PATTERN|ACLCAT|MODULE <value>])");
      return Flow::kContinue;
    }
    if (ascii_iequals(args[1], "PATTERN")) {
      pattern = ascii_lower(args[2]);
    } else if (ascii_iequals(args[1], "ACLCAT")) {
      category = "@" + ascii_lower(args[2]);
    } else if (ascii_iequals(args[1], "MODULE")) {
      module = true;  // no command comes from a module
    } else {
      ctx.out.error_line("ERR syntax error: FILTERBY takes PATTERN, ACLCAT or MODULE");
      return Flow::kContinue;
    }
  }
  std::vector<std::string> names;
  for (const auto& c : command_table()) {
    if (module) break;
    const std::string name = ascii_lower(c.name);
    if (!pattern.empty() && !glob_match(pattern, name)) continue;
    if (!category.empty()) {
      const auto cats = categories(c);
      if (std::find(cats.begin(), cats.end(), category) == cats.end()) continue;
    }
    names.push_back(name);
  }
  ctx.out.array(names.size());
  for (const auto& n : names) ctx.out.bulk(n);
  return Flow::kContinue;
}

Flow cmd_command_help(CommandContext& ctx, std::span<const std::string_view>) {
  write_subcommand_help(ctx.out, *find_command("COMMAND"));
  return Flow::kContinue;
}

}  // namespace holdfast::resp
