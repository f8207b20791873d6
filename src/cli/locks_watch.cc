// holdfast locks watch [PREFIX]: the lock events of the keys starting with PREFIX (every key
// without it), one line each, until interrupted (docs/events.md). A line for people reads
//   12:00:03.250 acquired jobs:1 token=7 heldBy=user:alice owner=run-1 lease=30.0s
// and with --json each line is the event's JSON object, as GET /v1/events sends it.
//
// It sends LOCK.WATCH on one connection (RESP3, so events are push frames) and prints what
// arrives, flushing each line. A `reset` (the watch fell behind the server's buffer) or a lost
// connection ends it with exit code 4; like `tail -f`, it otherwise runs until a signal ends it.
#include <boost/json.hpp>
#include <chrono>
#include <ctime>
#include <iostream>

#include "cli/commands.h"
#include "cli/locks_output.h"
#include "cli/remote.h"
#include "client/connection.h"
#include "client/error_map.h"
#include "client/tls.h"
#include "client/url.h"
#include "holdfast/errors.h"

namespace holdfast::cli {
namespace {

namespace json = boost::json;
using client_internal::Connection;
using client_internal::Reply;

std::string clock_time(std::int64_t at_ms) {
  const std::time_t seconds = static_cast<std::time_t>(at_ms / 1000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
  char ms[8];
  std::snprintf(ms, sizeof(ms), ".%03d", static_cast<int>(at_ms % 1000));
  return std::string(buf) + ms;
}

std::string field_text(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) return {};
  if (v->is_string()) return std::string(v->as_string());
  return json::serialize(*v);
}

// One line for people: the time, the kind, the key, then what the event says of the hold.
std::string human_line(std::string_view kind, const std::string& data) {
  boost::system::error_code ec;
  json::value v = json::parse(data, ec);
  if (ec || !v.is_object()) return std::string(kind) + " " + data;
  const json::object& o = v.as_object();
  std::string line;
  if (const auto* at = o.if_contains("at"); at && at->is_int64())
    line = clock_time(at->as_int64()) + " ";
  line += std::string(kind) + " " + field_text(o, "key");
  for (const char* name : {"token", "heldBy", "holder", "owner", "mode", "reason", "waitedMs"}) {
    const std::string value = field_text(o, name);
    if (!value.empty() && !(std::string_view(name) == "mode" && value == "exclusive"))
      line += " " + std::string(name) + "=" + value;
  }
  const auto* lease = o.if_contains("leaseExpiresAt");
  const auto* at = o.if_contains("at");
  if (lease && lease->is_int64() && at && at->is_int64()) {
    char left[32];
    std::snprintf(left, sizeof(left), " lease=%.1fs",
                  static_cast<double>(lease->as_int64() - at->as_int64()) / 1000.0);
    line += left;
  }
  return line;
}

int watch(const RemoteOptions& remote, const std::string& prefix) {
  const bool as_json = remote.json;
  auto addresses = client_internal::parse_server_urls(remote.server);
  client_internal::ServerAddress address = addresses.front();
  if (!remote.token.empty()) address.token = remote.token;
  // rediss://: the same TLS files as every other subcommand.
  std::optional<client_internal::TlsContext> tls;
  if (address.tls) {
    ClientOptions options;
    options.tls_ca = remote.tls_ca;
    options.tls_cert = remote.tls_cert;
    options.tls_key = remote.tls_key;
    tls.emplace(options);
  }
  const auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(10); };
  std::unique_ptr<Connection> conn = Connection::open(address, soon(), tls ? &*tls : nullptr);
  std::vector<std::string> command = {"LOCK.WATCH"};
  if (!prefix.empty()) {
    command.push_back("PREFIX");
    command.push_back(prefix);
  }
  conn->send(client_internal::encode_command(command), soon());
  const Reply confirm = conn->receive(soon(), "LOCK.WATCH");
  if (confirm.is_error()) client_internal::throw_server_error(confirm.str);
  for (;;) {
    // Events come when they come: a deadline far away (a receive that times out would leave
    // the connection broken).
    const Reply push = conn->receive(
        std::chrono::steady_clock::now() + std::chrono::hours(24 * 365), "LOCK.WATCH");
    if (push.type != Reply::Type::kArray || push.items.size() != 3 ||
        push.items[0].str != "lock.event")
      continue;
    const std::string& kind = push.items[1].str;
    const std::string& data = push.items[2].str;
    std::cout << (as_json ? data : human_line(kind, data)) << std::endl;
    if (kind == "reset") {
      std::cerr << "holdfast locks watch: the watch fell behind the server and was ended; read "
                   "the state with `holdfast locks list` and watch again\n";
      return kExitUnreachable;
    }
  }
}

}  // namespace

void add_locks_watch_command(CLI::App& locks, const RemoteOptions& remote, int& exit_code) {
  auto prefix = std::make_shared<std::string>();
  CLI::App* cmd = locks.add_subcommand(
      "watch", "Print lock events as they happen (one line each; --json: the events' JSON)");
  cmd->fallthrough();
  cmd->add_option("PREFIX", *prefix, "only keys starting with this (default: every key)");
  cmd->footer(
      "Runs until a signal ends it (Ctrl-C). Exit codes: 3 authentication or access error;\n"
      "4 server unreachable, the connection lost, or the watch fell behind (reset).");
  cmd->callback([&remote, &exit_code, prefix] {
    try {
      exit_code = watch(remote, *prefix);
    } catch (const Error& e) {
      if (remote.json) {
        std::cout << json_error(e) << "\n";
      } else {
        std::cerr << "holdfast locks watch: " << e.what() << "\n";
      }
      exit_code = exit_code_for(e);
    }
  });
}

}  // namespace holdfast::cli
