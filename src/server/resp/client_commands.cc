// CLIENT subcommands: what a connection is called, what it says about itself, and the list of
// open connections, in Redis's shapes.
//
// What each means for a lock server:
//  - ID: the connection's id, which is also the session id its SESSION holds belong to.
//  - SETNAME / GETNAME: a name for CLIENT LIST and for the server's log lines about the
//    connection (HELLO ... SETNAME sets it too).
//  - SETINFO LIB-NAME|LIB-VER: the client library, shown by CLIENT LIST.
//  - INFO / LIST: one line per connection (id, addresses, name, age, idle, flags, buffers,
//    last command, user, protocol, library). Members see their own connections only.
//  - KILL: closes connections (admin role or a function in auth mode): their waiters leave
//    their queues and their SESSION holds are released, as on any disconnect.
//  - NO-EVICT / NO-TOUCH: accepted and shown as flags (e, T). Holdfast never evicts
//    connections and keeps no access times, so they change nothing else.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <vector>

#include "core/validation.h"
#include "server/resp/ascii.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

// Redis's rule for names and library fields: printable ASCII, no spaces.
bool plain_word(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c <= '~'; });
}

// The user name CLIENT LIST shows: the principal's id once authenticated, else Redis's
// "default".
std::string_view user_of(const ConnectionState& c) {
  return c.authenticated && !c.principal.id.empty() ? std::string_view(c.principal.id) : "default";
}

std::int64_t seconds_since(std::chrono::steady_clock::time_point t,
                           std::chrono::steady_clock::time_point now) {
  if (t == std::chrono::steady_clock::time_point{}) return 0;
  return std::chrono::duration_cast<std::chrono::seconds>(now - t).count();
}

// One CLIENT LIST line (without its newline).
std::string client_line(const ConnectionState& c) {
  const auto now = std::chrono::steady_clock::now();
  std::string flags;
  if (c.no_evict) flags += 'e';
  if (c.no_touch) flags += 'T';
  if (flags.empty()) flags = "N";
  std::string line = "id=" + std::to_string(c.id);
  line += " addr=" + c.peer_address + " laddr=" + c.local_address + " fd=" + std::to_string(c.fd);
  line += " name=" + c.name;
  line += " age=" + std::to_string(seconds_since(c.opened_at, now));
  line += " idle=" + std::to_string(seconds_since(c.last_active, now));
  line += " flags=" + flags + " db=0 sub=0 psub=0 ssub=0 multi=-1";
  // The parser keeps views into the input buffer: a command's arguments take no memory of
  // their own (argv-mem 0). Replies wait in one buffer (obl), never in a list (oll 0).
  line +=
      " qbuf=" + std::to_string(c.input_buffered) + " qbuf-free=" + std::to_string(c.input_free);
  line += " argv-mem=0 multi-mem=0";
  line += " obl=" + std::to_string(c.output_buffered) +
          " oll=0 omem=" + std::to_string(c.output_buffered);
  line += " tot-mem=" + std::to_string(c.input_buffered + c.input_free + c.output_buffered);
  line += " cmd=" +
          (c.last_command != nullptr ? ascii_lower(c.last_command->name) : std::string("NULL"));
  line += " user=" + std::string(user_of(c));
  line += " resp=" + std::to_string(c.proto);
  line += " lib-name=" + c.lib_name + " lib-ver=" + c.lib_ver;
  return line;
}

// The connections the caller may see: every one for the admin and owner roles and functions,
// a member's own (same principal) otherwise, as other members' addresses and names are not
// theirs to know. Only this one without a directory.
std::vector<const ConnectionState*> visible_clients(const CommandContext& ctx) {
  std::vector<const ConnectionState*> out;
  if (ctx.clients == nullptr) {
    out.push_back(&ctx.conn);
    return out;
  }
  const bool all = ctx.conn.principal.is_privileged();
  const std::string me = ctx.conn.principal.held_by();
  ctx.clients->for_each([&](const ConnectionState& c) {
    if (all || c.id == ctx.conn.id || (c.authenticated && c.principal.held_by() == me))
      out.push_back(&c);
  });
  return out;
}

Flow on_off(CommandContext& ctx, std::string_view arg, bool* flag) {
  if (ascii_iequals(arg, "ON")) {
    *flag = true;
  } else if (ascii_iequals(arg, "OFF")) {
    *flag = false;
  } else {
    ctx.out.error_line("ERR syntax error: ON or OFF");
    return Flow::kContinue;
  }
  ctx.out.simple("OK");
  return Flow::kContinue;
}

// What CLIENT KILL's filters select.
struct KillFilter {
  std::optional<SessionId> id;
  std::optional<std::string> addr, laddr, user;
  std::optional<std::int64_t> max_age;
  bool no_type_matches = false;  // TYPE master|replica|pubsub: none of ours
  bool skip_me = true;

  bool matches(const ConnectionState& c) const {
    if (no_type_matches) return false;
    if (id && c.id != *id) return false;
    if (addr && c.peer_address != *addr) return false;
    if (laddr && c.local_address != *laddr) return false;
    if (user && user_of(c) != *user) return false;
    if (max_age && seconds_since(c.opened_at, std::chrono::steady_clock::now()) < *max_age)
      return false;
    return true;
  }
};

// Parses the filter form of CLIENT KILL; the error line on failure.
std::optional<std::string> read_kill_filter(std::span<const std::string_view> args, KillFilter* f) {
  if (args.size() % 2 != 0) return "ERR syntax error: CLIENT KILL takes <filter> <value> pairs";
  for (std::size_t i = 0; i < args.size(); i += 2) {
    const std::string_view name = args[i], value = args[i + 1];
    if (ascii_iequals(name, "ID")) {
      auto v = parse_int64(value);
      if (!v || *v < 1) return "ERR client-id should be greater than 0";
      f->id = static_cast<SessionId>(*v);
    } else if (ascii_iequals(name, "ADDR")) {
      f->addr = std::string(value);
    } else if (ascii_iequals(name, "LADDR")) {
      f->laddr = std::string(value);
    } else if (ascii_iequals(name, "USER")) {
      f->user = std::string(value);
    } else if (ascii_iequals(name, "TYPE")) {
      if (ascii_iequals(value, "normal")) continue;
      if (!ascii_iequals(value, "master") && !ascii_iequals(value, "replica") &&
          !ascii_iequals(value, "slave") && !ascii_iequals(value, "pubsub"))
        return "ERR Unknown client type '" + std::string(value.substr(0, 32)) + "'";
      f->no_type_matches = true;
    } else if (ascii_iequals(name, "SKIPME")) {
      if (ascii_iequals(value, "yes")) {
        f->skip_me = true;
      } else if (ascii_iequals(value, "no")) {
        f->skip_me = false;
      } else {
        return "ERR syntax error: SKIPME takes yes or no";
      }
    } else if (ascii_iequals(name, "MAXAGE")) {
      auto v = parse_int64(value);
      if (!v || *v < 0) return "ERR MAXAGE must be a non-negative number of seconds";
      f->max_age = *v;
    } else {
      return "ERR syntax error: unknown CLIENT KILL filter '" + std::string(name.substr(0, 32)) +
             "'";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> client_name_error(std::string_view name) {
  if (plain_word(name)) return std::nullopt;
  return "ERR Client names cannot contain spaces, newlines or special characters.";
}

std::string ConnectionState::log_label() const {
  std::string label = "id=" + std::to_string(id);
  if (!name.empty()) label += " name=" + name;
  if (!peer_address.empty()) label += " addr=" + peer_address;
  return label;
}

Flow cmd_client_id(CommandContext& ctx, std::span<const std::string_view>) {
  ctx.out.integer(static_cast<std::int64_t>(ctx.conn.id));
  return Flow::kContinue;
}

Flow cmd_client_getname(CommandContext& ctx, std::span<const std::string_view>) {
  if (ctx.conn.name.empty()) {
    ctx.out.null();
  } else {
    ctx.out.bulk(ctx.conn.name);
  }
  return Flow::kContinue;
}

Flow cmd_client_setname(CommandContext& ctx, std::span<const std::string_view> args) {
  if (auto error = client_name_error(args[0])) {
    ctx.out.error_line(*error);
    return Flow::kContinue;
  }
  ctx.conn.name = std::string(args[0]);
  ctx.out.simple("OK");
  return Flow::kContinue;
}

Flow cmd_client_setinfo(CommandContext& ctx, std::span<const std::string_view> args) {
  std::string* field = ascii_iequals(args[0], "LIB-NAME")  ? &ctx.conn.lib_name
                       : ascii_iequals(args[0], "LIB-VER") ? &ctx.conn.lib_ver
                                                           : nullptr;
  if (field == nullptr) {
    ctx.out.error_line("ERR Unrecognized option '" + std::string(args[0].substr(0, 32)) +
                       "': CLIENT SETINFO takes LIB-NAME or LIB-VER");
    return Flow::kContinue;
  }
  if (!plain_word(args[1])) {
    ctx.out.error_line("ERR " + ascii_lower(args[0]) +
                       " cannot contain spaces, newlines or special characters.");
    return Flow::kContinue;
  }
  *field = std::string(args[1]);
  ctx.out.simple("OK");
  return Flow::kContinue;
}

Flow cmd_client_info(CommandContext& ctx, std::span<const std::string_view>) {
  const ConnectionState* me = &ctx.conn;
  for (const ConnectionState* c : visible_clients(ctx))  // the directory's copy has buffer figures
    if (c->id == ctx.conn.id) me = c;
  ctx.out.verbatim(client_line(*me) + "\n");
  return Flow::kContinue;
}

Flow cmd_client_list(CommandContext& ctx, std::span<const std::string_view> args) {
  std::vector<SessionId> ids;
  bool none = false;
  for (std::size_t i = 0; i < args.size();) {
    if (ascii_iequals(args[i], "TYPE") && i + 1 < args.size()) {
      const std::string_view type = args[i + 1];
      if (ascii_iequals(type, "master") || ascii_iequals(type, "replica") ||
          ascii_iequals(type, "pubsub")) {
        none = true;
      } else if (!ascii_iequals(type, "normal")) {
        ctx.out.error_line("ERR Unknown client type '" + std::string(type.substr(0, 32)) + "'");
        return Flow::kContinue;
      }
      i += 2;
    } else if (ascii_iequals(args[i], "ID") && i + 1 < args.size()) {
      for (++i; i < args.size(); ++i) {
        auto v = parse_int64(args[i]);
        if (!v || *v < 1) {
          ctx.out.error_line("ERR Invalid client ID");
          return Flow::kContinue;
        }
        ids.push_back(static_cast<SessionId>(*v));
      }
    } else {
      ctx.out.error_line("ERR syntax error (usage: CLIENT LIST [TYPE <type>] [ID <id>...])");
      return Flow::kContinue;
    }
  }
  std::string text;
  if (!none) {
    for (const ConnectionState* c : visible_clients(ctx)) {
      if (!ids.empty() && std::find(ids.begin(), ids.end(), c->id) == ids.end()) continue;
      text += client_line(*c);
      text += '\n';
    }
  }
  ctx.out.verbatim(text);
  return Flow::kContinue;
}

Flow cmd_client_kill(CommandContext& ctx, std::span<const std::string_view> args) {
  if (!ctx.conn.principal.is_privileged()) {
    write_error(ctx.out, Error(ErrorCode::kForbidden, "CLIENT KILL needs the admin or owner role"));
    return Flow::kContinue;
  }
  KillFilter filter;
  const bool old_form = args.size() == 1;  // CLIENT KILL <addr>: OK or an error, as Redis
  if (old_form) {
    filter.addr = std::string(args[0]);
    filter.skip_me = false;
  } else if (auto error = read_kill_filter(args, &filter)) {
    ctx.out.error_line(*error);
    return Flow::kContinue;
  }
  std::vector<SessionId> victims;
  bool me = false;
  for (const ConnectionState* c : visible_clients(ctx)) {
    if (!filter.matches(*c)) continue;
    if (c->id == ctx.conn.id) {
      me = !filter.skip_me;
      continue;
    }
    victims.push_back(c->id);
    spdlog::info("client {} closed by CLIENT KILL from client {}", c->log_label(),
                 ctx.conn.log_label());
  }
  std::size_t killed = me ? 1 : 0;
  for (SessionId id : victims)
    if (ctx.clients != nullptr && ctx.clients->kill(id)) ++killed;
  if (old_form) {
    if (killed == 0) {
      ctx.out.error_line("ERR No such client");
    } else {
      ctx.out.simple("OK");
    }
  } else {
    ctx.out.integer(static_cast<std::int64_t>(killed));
  }
  return me ? Flow::kClose : Flow::kContinue;
}

Flow cmd_client_no_evict(CommandContext& ctx, std::span<const std::string_view> args) {
  return on_off(ctx, args[0], &ctx.conn.no_evict);
}

Flow cmd_client_no_touch(CommandContext& ctx, std::span<const std::string_view> args) {
  return on_off(ctx, args[0], &ctx.conn.no_touch);
}

Flow cmd_client_help(CommandContext& ctx, std::span<const std::string_view>) {
  write_subcommand_help(ctx.out, *find_command("CLIENT"));
  return Flow::kContinue;
}

}  // namespace holdfast::resp
