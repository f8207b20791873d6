// holdfast serve: runs the lock server.
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "auth/credentials.h"
#include "cli/commands.h"
#include "cli/duration_flag.h"
#include "core/duration.h"
#include "server/config.h"
#include "server/logging.h"
#include "server/server.h"
#include "server/tls/load.h"
#include "service/embedded/embedded_backend.h"
#include "service/policy.h"
#include "service/postgres/pg_backend.h"
#include "store/wal/wal_store.h"

namespace holdfast::cli {
namespace {

struct ServeFlags {
  std::string config;
  ConfigOverrides overrides;
  std::string listen, http, unix_path, data_dir, fsync, store, log_level, log_format;
  std::string tls_cert, tls_key, tls_ca, tls_client_auth;
  Millis session_grace_ms = 0;
  Millis statement_deadline_ms = 0;
  bool require_sync_replication = false;
  Millis script_time_limit_ms = 0;
  std::int64_t snapshot_after_bytes = 0;
  std::int64_t idle_poll_us = 0;
};

// Every client connection takes a file descriptor, and the soft limit is often 1 024 where the
// hard limit allows far more: raise the soft limit to the hard one, as Redis and Go programs do.
void raise_open_files_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t before = limit.rlim_cur;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur =
        std::min<rlim_t>(limit.rlim_max, rlim_t{1} << 20);  // the kernel's usual nr_open
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = before;
  }
  if (limit.rlim_cur != before) {
    spdlog::info("open files limit raised from {} to {}", before, limit.rlim_cur);
  } else {
    spdlog::info("open files limit {}", limit.rlim_cur);
  }
}

// A credentials file without a member or a function turns open mode off and lets nobody in:
// every call but PING, HELLO and AUTH is refused. That is allowed (a file being filled in, or
// emptied on purpose to shut everyone out), but never silently.
void warn_if_empty(const CredentialStore& credentials) {
  if (credentials.size() != 0) return;
  log_event(LogLevel::kWarn,
            "the credentials file has no [[member]] or [[function]]: nobody can authenticate, "
            "and every lock call is refused until it has one and the server reloads it (SIGHUP)",
            {{"path", credentials.path()}});
}

// SIGHUP reloads the credentials (and, in the server, the TLS certificate); start, serve until a
// stop signal, report a failed start.
int run_server(Server& server, LockService& service, CredentialStore* credentials,
               LoopHooks* hooks = nullptr) {
  if (credentials != nullptr) {
    server.on_reload([credentials] {
      if (auto st = credentials->reload(); st.ok()) {
        spdlog::info("SIGHUP: reloaded {} credentials from {}", credentials->size(),
                     credentials->path());
        warn_if_empty(*credentials);
      } else {
        spdlog::error("SIGHUP: keeping the previous credentials: {}", st.error().message);
      }
    });
  }
  if (auto st = server.start(service, hooks); !st.ok()) {
    std::cerr << "holdfast serve: " << st.error().message << "\n";
    return st.error().code == ErrorCode::kInvalidArgument ? kExitUsage : 1;
  }
  server.run();
  return kExitOk;
}

PolicyOptions policy_options(const ServerConfig& config, const CredentialStore* credentials) {
  PolicyOptions options;
  options.max_lease_ms = config.max_lease_ms;
  // Local open mode has one user, the owner: nobody to limit.
  options.acquire_per_user_per_hour = credentials != nullptr ? config.acquire_per_user_per_hour : 0;
  options.identities = credentials != nullptr;
  return options;
}

// A scale-out node: the locks live in PostgreSQL (docs/scale-out.md); the data dir keeps only
// the Unix socket and this node's identity.
int serve_node(ServerConfig config, CredentialStore* credentials, std::optional<tls::Loaded> tls) {
  PgBackendOptions options;
  options.url = config.store_url;
  options.data_dir = config.data_dir;
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  options.node_name =
      std::string(host) + " " + (config.listen.empty() ? config.unix_path : config.listen);
  options.pool_size = static_cast<std::size_t>(config.store_pool_size);
  options.commit_lanes = static_cast<std::size_t>(config.store_commit_lanes);
  options.session_grace_ms = config.session_grace_ms;
  options.statement_deadline_ms = config.statement_deadline_ms;
  options.require_sync_replication = config.require_sync_replication;
  // The loop waits for the database, which needs the CPU: it never polls.
  config.idle_poll_us = 0;
  SystemClock clock;
  Server server(config, clock, credentials);
  if (tls) server.use_tls(std::move(*tls));
  PgBackend backend(options, server.waker());
  Policy policy(backend, clock, policy_options(config, credentials));
  if (auto st = backend.start(); !st.ok()) {
    std::cerr << "holdfast serve: cannot use the PostgreSQL store "
              << pg::redact_url(config.store_url) << ": " << st.error().message << "\n";
    return 1;
  }
  // Pub/sub reaches every node: out through the database, and in from it (on the loop).
  server.pubsub().set_relay(
      [&backend](std::string_view c, std::string_view m) { backend.publish(c, m); },
      &PgBackend::publish_error);
  backend.on_message(
      [&server](std::string_view c, std::string_view m) { server.pubsub().deliver(c, m); });
  const int code = run_server(server, policy, credentials);
  backend.stop();  // wakes calls still blocked on its threads before they are joined
  return code;
}

int serve(const ServeFlags& f, CLI::App& cmd) {
  ConfigOverrides o;
  if (cmd.count("--listen")) o.listen = f.listen;
  if (cmd.count("--http")) o.http = f.http;
  if (cmd.count("--unix")) o.unix_path = f.unix_path;
  if (cmd.count("--data-dir")) o.data_dir = f.data_dir;
  if (cmd.count("--fsync")) o.fsync = f.fsync;
  if (cmd.count("--store")) o.store_url = f.store;
  if (cmd.count("--session-grace-ms")) o.session_grace_ms = f.session_grace_ms;
  if (cmd.count("--statement-deadline-ms")) o.statement_deadline_ms = f.statement_deadline_ms;
  if (cmd.count("--require-sync-replication")) o.require_sync_replication = true;
  if (cmd.count("--script-time-limit-ms")) o.script_time_limit_ms = f.script_time_limit_ms;
  if (cmd.count("--snapshot-after-bytes")) o.snapshot_after_bytes = f.snapshot_after_bytes;
  if (cmd.count("--idle-poll-us")) o.idle_poll_us = f.idle_poll_us;
  if (cmd.count("--log-level")) o.log_level = f.log_level;
  if (cmd.count("--log-format")) o.log_format = f.log_format;
  if (cmd.count("--tls-cert")) o.tls_cert = f.tls_cert;
  if (cmd.count("--tls-key")) o.tls_key = f.tls_key;
  if (cmd.count("--tls-ca")) o.tls_ca = f.tls_ca;
  if (cmd.count("--tls-client-auth")) o.tls_client_auth = f.tls_client_auth;
  auto config = load_config(f.config, o);
  if (!config.ok()) {
    std::cerr << "holdfast serve: " << config.error().message << "\n";
    return kExitUsage;
  }
  install_logger(config->log_level, config->log_format);
  // The certificate first: a file that does not load is the one line a failed start prints.
  std::optional<tls::Loaded> tls;
  if (config->tls.enabled()) {
    auto loaded = tls::load_server_context(config->tls);
    if (!loaded.ok()) {
      std::cerr << "holdfast serve: " << loaded.error().message << "\n";
      return kExitUsage;
    }
    tls = std::move(*loaded);
  }
  raise_open_files_limit();
  std::unique_ptr<CredentialStore> credentials;
  if (!config->credentials.empty()) {
    auto opened = CredentialStore::open(config->credentials);
    if (!opened.ok()) {
      std::cerr << "holdfast serve: " << opened.error().message << "\n";
      return kExitUsage;
    }
    credentials = std::move(*opened);
    spdlog::info("credentials: {} entries from {}", credentials->size(), config->credentials);
    warn_if_empty(*credentials);
  }
  if (!config->store_url.empty()) return serve_node(*config, credentials.get(), std::move(tls));
  SystemClock clock;
  wal::WalOptions wal_options;
  wal_options.data_dir = config->data_dir;
  wal_options.fsync = config->fsync == FsyncMode::kAlways  ? wal::FsyncMode::kAlways
                      : config->fsync == FsyncMode::kNever ? wal::FsyncMode::kNever
                                                           : wal::FsyncMode::kHorizon;
  wal_options.snapshot_threshold_bytes = static_cast<std::uint64_t>(config->snapshot_after_bytes);
  // The loop pauses for fork() instead of for encoding every live hold (docs/wal-format.md §6).
  wal_options.encode_snapshots_in_child = true;
  wal_options.encode_in_child_from_holds = wal::kEncodeInChildFromHolds;
  // The server's loop calls the store's before_sleep() and end_of_round() (core/loop_hooks.h).
  wal_options.commit_on_loop = true;
  // A loop that polls must not sleep on the log's timer instead (wal_store.h).
  wal_options.write_on_loop = config->idle_poll_us == 0;
  wal_options.on_fault = [](const std::optional<Error>& fault) {
    // One line when the log stops being writable and one when it is again, from the log's
    // own thread (the logger is thread-safe); /metrics and /readyz show it meanwhile.
    if (fault) {
      log_event(LogLevel::kError, "refusing changes", {{"reason", fault->message}});
    } else {
      log_event(LogLevel::kInfo, "accepting changes again: the write-ahead log is writable", {});
    }
  };
  wal::WalStore store(wal_options, clock);
  Server server(*config, clock, credentials.get());
  if (tls) server.use_tls(std::move(*tls));
  EmbeddedBackend backend(clock, store, server.waker());
  Policy policy(backend, clock, policy_options(*config, credentials.get()));
  if (auto st = backend.recover(); !st.ok()) {
    std::cerr << "holdfast serve: " << st.error().message << "\n";
    return 1;
  }
  log_event(LogLevel::kInfo, "recovered the log",
            {{"holds", static_cast<std::int64_t>(backend.table().held_count())},
             {"nextToken", static_cast<std::int64_t>(backend.table().last_token() + 1)}});
  if (const Millis until = backend.stats().recovering_until; until > 0)
    log_event(LogLevel::kWarn,
              "recovering after an unclean stop: nothing new is granted until the lease horizon",
              {{"untilMs", until}, {"inMs", until - clock.now_ms()}});
  const int code = run_server(server, policy, credentials.get(), &store);
  store.close();
  return code;
}

// "(default X)" for option help, X from ServerConfig: the defaults live in one place.
std::string default_is(const std::string& value) { return " (default " + value + ")"; }
std::string default_is(std::int64_t value) { return default_is(std::to_string(value)); }

// What only holdfast.toml sets (the settings without a flag), with the defaults, for the end
// of `serve --help`.
std::string serve_footer() {
  const ServerConfig d;
  std::vector<std::string> names;
  std::size_t width = 0;
  for (const ConfigSetting& s : config_settings()) {
    names.push_back("[" + std::string(s.table) + "] " + std::string(s.key));
    width = std::max(width, names.back().size());
  }
  std::string text = "Only in holdfast.toml (docs/configuration.md):\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    const ConfigSetting& s = config_settings()[i];
    if (!s.flag.empty()) continue;
    text += "  " + names[i] + std::string(width + 2 - names[i].size(), ' ') + std::string(s.about) +
            default_is(s.default_text(d)) + "\n";
  }
  return text +
         "Durations, in the file as on the command line: 1500ms, 30s, 5m or 2h; a plain number "
         "is\nmilliseconds.\n"
         "Flags override the file. Logs go to stderr; stdout has one line, \"holdfast ready "
         "...\",\n"
         "once every listener is bound. Exit codes: 0 stopped by SIGINT or SIGTERM; 1 could not\n"
         "start; 2 bad flags or configuration.";
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  const ServerConfig d;
  CLI::App* cmd = app.add_subcommand("serve", "Run the lock server");
  cmd->add_option(
         "--config", flags->config,
         "holdfast.toml to read ([server], [auth], [limits], [store], [tls]) (default none: "
         "every setting at its default)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--data-dir", flags->data_dir,
                  "where the log, snapshots and socket live" + default_is(d.data_dir));
  cmd->add_option("--listen", flags->listen,
                  "RESP over TCP, host:port; \"\" turns it off" + default_is(d.listen));
  cmd->add_option("--http", flags->http,
                  "HTTP/JSON, host:port; \"\" turns it off" + default_is(d.http));
  cmd->add_option("--unix", flags->unix_path,
                  "RESP over a Unix socket" + default_is("<data-dir>/holdfast.sock"));
  cmd->add_option("--fsync", flags->fsync,
                  "always: every answered change is on disk; horizon: answers before the disk, "
                  "and after a crash grants nothing until every answered lease has ended; "
                  "never: faster, unsafe" +
                      default_is(std::string(fsync_name(d.fsync))))
      ->check(CLI::IsMember({"always", "never", "horizon"}));
  cmd->add_option("--snapshot-after-bytes", flags->snapshot_after_bytes,
                  "take a snapshot (and drop the log it replaces) after this much log" +
                      default_is(d.snapshot_after_bytes));
  cmd->add_option("--idle-poll-us", flags->idle_poll_us,
                  "how long the loop may poll for work before it sleeps, adapting to how soon "
                  "work comes back (it costs CPU; worth it only for clients that poll "
                  "themselves); 0 never polls; not with --store" +
                      default_is(std::to_string(d.idle_poll_us) + "us"))
      ->transform(duration_us_flag())
      ->type_name("DURATION");
  cmd->add_option("--store", flags->store,
                  "postgres://... or postgresql://... to run as a node over a shared "
                  "PostgreSQL (default none: the embedded store in --data-dir)");
  cmd->add_option("--session-grace-ms", flags->session_grace_ms,
                  "with --store: how long a silent node's session holds outlive its last "
                  "heartbeat" +
                      default_is(format_duration(d.session_grace_ms)))
      ->transform(duration_flag(0))
      ->type_name("DURATION");
  cmd->add_option("--statement-deadline-ms", flags->statement_deadline_ms,
                  "with --store: a database round trip not answered within this closes its "
                  "connection (a write's outcome is then unknown: STORE_UNAVAILABLE)" +
                      default_is(format_duration(d.statement_deadline_ms)))
      ->transform(duration_flag(0))
      ->type_name("DURATION");
  cmd->add_flag("--require-sync-replication", flags->require_sync_replication,
                "with --store: refuse to start, and refuse changes, while the database does not "
                "replicate synchronously (default off: warn and serve)");
  cmd->add_option("--script-time-limit-ms", flags->script_time_limit_ms,
                  "EVAL: a script running longer is stopped, its changes so far kept" +
                      default_is(format_duration(d.script_time_limit_ms)))
      ->transform(duration_flag(0))
      ->type_name("DURATION");
  cmd->add_option("--log-level", flags->log_level,
                  "debug, info, warn or error: the least severe record logged" +
                      default_is(std::string(log_level_name(d.log_level))));
  cmd->add_option("--log-format", flags->log_format,
                  "text, or json (one object a line: time, level, message, fields)" +
                      default_is(d.log_format == LogFormat::kJson ? "json" : "text"));
  cmd->add_option("--tls-cert", flags->tls_cert,
                  "PEM certificate (with its chain): the TCP RESP and the HTTP listener then "
                  "speak TLS 1.2 and 1.3 only; the Unix socket stays plain (default none)");
  cmd->add_option("--tls-key", flags->tls_key, "PEM private key of --tls-cert (default none)");
  cmd->add_option("--tls-ca", flags->tls_ca,
                  "PEM CA certificates that client certificates must chain to (default none)");
  cmd->add_option("--tls-client-auth", flags->tls_client_auth,
                  "none, request or require a client certificate (default request with "
                  "--tls-ca, else none)")
      ->check(CLI::IsMember({"none", "request", "require"}));
  // Each flag's help names the setting it overrides; the settings without a flag end the help.
  for (const ConfigSetting& s : config_settings()) {
    if (s.flag.empty()) continue;
    CLI::Option* option = cmd->get_option_no_throw(std::string(s.flag));
    if (option == nullptr)
      throw std::logic_error("holdfast serve has no flag " + std::string(s.flag) + " for [" +
                             std::string(s.table) + "] " + std::string(s.key));
    option->description(option->get_description() + "; [" + std::string(s.table) + "] " +
                        std::string(s.key) + " in holdfast.toml");
  }
  cmd->footer(serve_footer());
  cmd->callback([flags, cmd, &exit_code] { exit_code = serve(*flags, *cmd); });
}

}  // namespace holdfast::cli
