// Every setting of holdfast.toml (docs/configuration.md), in the order the docs give them.
#include <string>

#include "core/duration.h"
#include "server/config.h"

namespace holdfast {
namespace {

std::string integer(std::int64_t v) { return std::to_string(v); }

constexpr ConfigSetting kSettings[] = {
    {"server", "listen", "--listen", "RESP over TCP, host:port; \"\" turns it off",
     [](const ServerConfig& d) { return d.listen; }},
    {"server", "http", "--http", "HTTP/JSON, host:port; \"\" turns it off",
     [](const ServerConfig& d) { return d.http; }},
    {"server", "unix", "--unix", "RESP over a Unix socket",
     [](const ServerConfig&) { return std::string("<dataDir>/holdfast.sock"); }},
    {"server", "dataDir", "--data-dir", "where the log, snapshots and socket live",
     [](const ServerConfig& d) { return d.data_dir; }},
    {"server", "fsync", "--fsync", "always, horizon or never",
     [](const ServerConfig& d) { return std::string(fsync_name(d.fsync)); }},
    {"server", "snapshotAfterBytes", "--snapshot-after-bytes",
     "log written before a snapshot replaces it",
     [](const ServerConfig& d) { return integer(d.snapshot_after_bytes); }},
    {"server", "idlePollUs", "--idle-poll-us",
     "how long the loop may poll for work before it sleeps (a plain number is microseconds)",
     [](const ServerConfig& d) { return integer(d.idle_poll_us); }},
    {"server", "logLevel", "--log-level", "debug, info, warn or error",
     [](const ServerConfig& d) { return std::string(log_level_name(d.log_level)); }},
    {"server", "logFormat", "--log-format", "text or json",
     [](const ServerConfig& d) {
       return std::string(d.log_format == LogFormat::kJson ? "json" : "text");
     }},
    {"server", "corsAllowedOrigins", "",
     "origins whose web pages may call the HTTP API, e.g. [\"https://app.example.com\"]; "
     "[\"*\"]: every origin",
     [](const ServerConfig&) { return std::string("none"); }},
    {"auth", "credentials", "", "the credentials file",
     [](const ServerConfig&) { return std::string("none: local open mode"); }},
    {"limits", "acquirePerUserPerHour", "", "each member's acquire attempts per rolling hour",
     [](const ServerConfig& d) { return integer(d.acquire_per_user_per_hour); }},
    {"limits", "maxLeaseMs", "", "longer TTLs are capped to this; at most 24h",
     [](const ServerConfig& d) { return format_duration(d.max_lease_ms); }},
    {"limits", "scriptTimeLimitMs", "--script-time-limit-ms",
     "EVAL: a script running longer is stopped",
     [](const ServerConfig& d) { return format_duration(d.script_time_limit_ms); }},
    {"store", "url", "--store", "postgres://... to run as a node over PostgreSQL",
     [](const ServerConfig&) { return std::string("none: the embedded store"); }},
    {"store", "sessionGraceMs", "--session-grace-ms",
     "how long a silent node's session holds outlive its last heartbeat",
     [](const ServerConfig& d) { return format_duration(d.session_grace_ms); }},
    {"store", "poolSize", "", "with a store URL: PostgreSQL connections per node, 1 to 256",
     [](const ServerConfig& d) { return integer(d.store_pool_size); }},
    {"store", "commitLanes", "",
     "with a store URL: lock writes batched per commit in this many lanes, 0 to 64 (0: one "
     "transaction each)",
     [](const ServerConfig& d) { return integer(d.store_commit_lanes); }},
    {"store", "statementDeadlineMs", "--statement-deadline-ms",
     "with a store URL: a database round trip not answered within this closes its connection",
     [](const ServerConfig& d) { return format_duration(d.statement_deadline_ms); }},
    {"store", "requireSyncReplication", "--require-sync-replication",
     "with a store URL: refuse to serve while the database does not replicate synchronously",
     [](const ServerConfig& d) {
       return std::string(d.require_sync_replication ? "true" : "false");
     }},
    {"tls", "cert", "--tls-cert",
     "PEM certificate (with its chain): the TCP RESP and the HTTP listener then speak TLS 1.2 "
     "and 1.3 only; the Unix socket stays plain",
     [](const ServerConfig&) { return std::string("none"); }},
    {"tls", "key", "--tls-key", "PEM private key of the certificate",
     [](const ServerConfig&) { return std::string("none"); }},
    {"tls", "ca", "--tls-ca", "PEM CA certificates that client certificates must chain to",
     [](const ServerConfig&) { return std::string("none"); }},
    {"tls", "clientAuth", "--tls-client-auth", "none, request or require a client certificate",
     [](const ServerConfig&) { return std::string("request with a CA, else none"); }},
    {"tls", "handshakeTimeoutMs", "",
     "a TLS client that has not finished its handshake by then is cut off",
     [](const ServerConfig& d) { return format_duration(d.tls.handshake_timeout_ms); }},
};

}  // namespace

std::span<const ConfigSetting> config_settings() { return kSettings; }

}  // namespace holdfast
