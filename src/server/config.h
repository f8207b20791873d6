// Server configuration: the [server], [auth], [limits], [store] and [tls] tables of holdfast.toml
// (docs/reference.md section 6, "Configuration"; [server] snapshotAfterBytes and the [store] table
// are Holdfast's own), overridden by command-line flags.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "script/limits.h"
#include "server/logging.h"

namespace holdfast {

// always: an answered change is on disk; never: answers before the disk, unsafe after a crash;
// horizon: answers before the disk within a durable lease horizon (docs/horizon.md).
enum class FsyncMode { kAlways, kNever, kHorizon };
// The name in holdfast.toml and --fsync.
std::string_view fsync_name(FsyncMode mode);

inline constexpr std::int64_t kMinSnapshotAfterBytes = 4096;
inline constexpr std::int64_t kMaxSnapshotAfterBytes = std::int64_t{1} << 40;
// Off by default: a loop that polls for the next command spends the gap between commands on
// the CPU, more than the sleep and wake-up it saves unless clients themselves poll
// (docs/performance.md, "CPU per operation").
inline constexpr std::int64_t kDefaultIdlePollUs = 0;
inline constexpr std::int64_t kMaxIdlePollUs = 10'000;

// Whether a TLS listener asks for a client certificate: none (never), request (asks; a client
// may send none, but one it sends must chain to the CA), require (a client without one is
// refused).
enum class TlsClientAuth { kNone, kRequest, kRequire };
std::string_view tls_client_auth_name(TlsClientAuth mode);

// [tls] and the --tls-* flags (docs/tls.md). Empty `cert`: no TLS, the listeners speak plain.
struct TlsConfig {
  std::string cert, key, ca;                         // PEM files
  TlsClientAuth client_auth = TlsClientAuth::kNone;  // request by default when `ca` is given
  Millis handshake_timeout_ms = 10'000;  // a connection that has not finished it is closed
  // Where each file was named ("--tls-key" or "[tls] key"), for the messages about it.
  std::string cert_setting = "--tls-cert", key_setting = "--tls-key", ca_setting = "--tls-ca";

  bool enabled() const { return !cert.empty(); }
};

struct ServerConfig {
  std::string listen = "127.0.0.1:7420";  // RESP over TCP; empty: off
  std::string http = "127.0.0.1:7421";    // HTTP/JSON; empty: off
  std::string unix_path;  // RESP over a Unix socket; default <dataDir>/holdfast.sock
  std::string data_dir = "data";
  FsyncMode fsync = FsyncMode::kAlways;
  std::int64_t snapshot_after_bytes = 64 << 20;    // log written since the last snapshot
  std::int64_t idle_poll_us = kDefaultIdlePollUs;  // embedded: the longest poll of the loop
                                                   // before it sleeps
  std::string credentials;                         // empty: local open mode
  // HTTP: the origins whose web pages may call the API (CORS); empty: none.
  std::vector<std::string> cors_allowed_origins;
  std::int64_t acquire_per_user_per_hour = 600;
  Millis max_lease_ms = 86'400'000;
  Millis script_time_limit_ms = script::kDefaultTimeLimitMs;  // EVAL: a longer script stops
  std::string store_url;                // postgres://... for scale-out; empty: embedded
  Millis session_grace_ms = 10'000;     // scale-out: a silent node's session holds live this long
  std::int64_t store_pool_size = 32;    // scale-out: PostgreSQL connections per node
  std::int64_t store_commit_lanes = 1;  // scale-out: group-commit lanes, 0 off (pg_batch.h)
  // scale-out: every database round trip answers within this or its connection is closed
  Millis statement_deadline_ms = 3'000;
  bool require_sync_replication = false;  // scale-out: refuse to run without a sync standby
  LogLevel log_level = LogLevel::kInfo;   // records below this are dropped
  LogFormat log_format = LogFormat::kText;
  TlsConfig tls;
};

// One setting of holdfast.toml. The one list of them (config_settings.cc) is what the loader
// accepts and what `holdfast serve --help` lists, so a setting cannot be read but left out of
// the help. (A setting that is a duration takes an integer of milliseconds or a string with
// units, "30s": core/duration.h.)
struct ConfigSetting {
  std::string_view table;  // "limits"
  std::string_view key;    // "maxLeaseMs"
  std::string_view flag;   // the flag that overrides it, "--store"; empty: only the file sets it
  std::string_view about;  // what it is, for help
  std::string (*default_text)(const ServerConfig& defaults);
};
std::span<const ConfigSetting> config_settings();

// Overrides given on the command line; unset fields keep the file's (or the default) value.
struct ConfigOverrides {
  std::optional<std::string> listen, http, unix_path, data_dir, fsync, store_url, log_level,
      log_format, tls_cert, tls_key, tls_ca, tls_client_auth;
  std::optional<Millis> session_grace_ms, script_time_limit_ms, statement_deadline_ms;
  std::optional<bool> require_sync_replication;
  std::optional<std::int64_t> snapshot_after_bytes, idle_poll_us;
};

// Reads `path` (empty: no file) and applies `overrides`. Relative paths in the file (data dir,
// unix socket, credentials) resolve against the file's folder; flags resolve against the
// working directory. Unknown tables or keys, wrong types and bad values are errors naming them.
Result<ServerConfig> load_config(const std::string& path, const ConfigOverrides& overrides);

// "host:port" -> (host, port). Accepts "[::1]:7420" for IPv6.
Result<std::pair<std::string, std::uint16_t>> split_host_port(const std::string& address);

}  // namespace holdfast
