#include "server/config.h"

#include <toml++/toml.h>

#include <cctype>
#include <filesystem>
#include <tuple>

#include "core/duration.h"
#include "core/validation.h"
#include "server/http/cors.h"

namespace holdfast {
namespace {

namespace fs = std::filesystem;

std::string resolve(const fs::path& base, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  return (base / p).lexically_normal().string();
}

Error config_error(const std::string& path, const std::string& message) {
  return invalid_argument(path + ": " + message);
}

// Every key of [section] must be one of config_settings().
std::optional<Error> check_keys(const std::string& path, const toml::table& table,
                                std::string_view section) {
  for (const auto& [key, value] : table) {
    bool known = false;
    for (const ConfigSetting& s : config_settings())
      known = known || (s.table == section && s.key == key.str());
    if (!known)
      return config_error(
          path, "unknown key '" + std::string(key.str()) + "' in [" + std::string(section) + "]");
  }
  return std::nullopt;
}

bool is_table(std::string_view name) {
  for (const ConfigSetting& s : config_settings())
    if (s.table == name) return true;
  return false;
}

Result<FsyncMode> parse_fsync(const std::string& v) {
  for (const FsyncMode mode : {FsyncMode::kAlways, FsyncMode::kNever, FsyncMode::kHorizon})
    if (v == fsync_name(mode)) return mode;
  return invalid_argument("fsync must be \"always\", \"never\" or \"horizon\", not \"" + v + "\"");
}

// Reads one string setting; a wrong type is an error naming it.
std::optional<Error> read_string(const std::string& path, const toml::table& t, const char* section,
                                 const char* key, std::string* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  if (auto s = n->value<std::string>(); s && n->is_string()) {
    *out = *s;
    return std::nullopt;
  }
  return config_error(path, std::string("[") + section + "] " + key + " must be a string");
}

std::optional<Error> read_int(const std::string& path, const toml::table& t, const char* section,
                              const char* key, std::int64_t* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  if (n->is_integer()) {
    *out = *n->value<std::int64_t>();
    return std::nullopt;
  }
  return config_error(path, std::string("[") + section + "] " + key + " must be an integer");
}

std::optional<Error> read_bool(const std::string& path, const toml::table& t, const char* section,
                               const char* key, bool* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  if (n->is_boolean()) {
    *out = *n->value<bool>();
    return std::nullopt;
  }
  return config_error(path, std::string("[") + section + "] " + key + " must be true or false");
}

// How a duration setting is counted: in milliseconds (every ...Ms), or in microseconds.
struct DurationUnit {
  Result<std::int64_t> (*parse)(std::string_view);
  std::string_view base, example, hint;
};
constexpr DurationUnit kInMillis{parse_duration, "milliseconds", "\"30s\"", kDurationHint};
constexpr DurationUnit kInMicros{parse_duration_us, "microseconds", "\"500us\"", kMicrosecondsHint};

// Reads a duration: an integer of the unit, or a string with units ("30s").
std::optional<Error> read_duration(const std::string& path, const toml::table& t,
                                   const char* section, const char* key, std::int64_t* out,
                                   const DurationUnit& unit = kInMillis) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  const std::string name = std::string("[") + section + "] " + key;
  if (n->is_integer()) {
    *out = *n->value<std::int64_t>();
    return std::nullopt;
  }
  if (n->is_string()) {
    auto amount = unit.parse(*n->value<std::string>());
    if (!amount.ok()) return config_error(path, name + ": " + amount.error().message);
    *out = *amount;
    return std::nullopt;
  }
  return config_error(path, name + " must be a duration: an integer of " + std::string(unit.base) +
                                " or a string such as " + std::string(unit.example) + " (" +
                                std::string(unit.hint) + ")");
}

// A store URL names PostgreSQL, or is a libpq key=value string: anything else (mysql://...) is
// refused here, before a connection is tried, rather than by libpq's puzzling socket error.
std::optional<Error> check_store_url(const std::string& url) {
  if (url.empty()) return std::nullopt;
  const std::size_t colon = url.find("://");
  if (colon == std::string::npos) {
    if (url.find('=') != std::string::npos) return std::nullopt;  // host=... dbname=...
    return invalid_argument(
        "[store] url (--store) must be a postgres:// or postgresql:// URL or a libpq "
        "key=value string (host=... dbname=...)");
  }
  std::string scheme = url.substr(0, colon);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme == "postgres" || scheme == "postgresql") return std::nullopt;
  return invalid_argument("[store] url (--store): " + scheme +
                          ":// is not supported: Holdfast keeps its locks in PostgreSQL "
                          "(postgres:// or postgresql://, or a libpq key=value string)");
}

// Reads a list of strings; a wrong type is an error naming the setting.
std::optional<Error> read_string_list(const std::string& path, const toml::table& t,
                                      const char* section, const char* key,
                                      std::vector<std::string>* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  const std::string name = std::string("[") + section + "] " + key;
  const toml::array* items = n->as_array();
  if (items == nullptr) return config_error(path, name + " must be a list of strings");
  out->clear();
  for (const toml::node& item : *items) {
    if (!item.is_string()) return config_error(path, name + " must be a list of strings");
    out->push_back(*item.value<std::string>());
  }
  return std::nullopt;
}

Result<TlsClientAuth> parse_client_auth(const std::string& v) {
  for (const TlsClientAuth mode :
       {TlsClientAuth::kNone, TlsClientAuth::kRequest, TlsClientAuth::kRequire})
    if (v == tls_client_auth_name(mode)) return mode;
  return invalid_argument("must be \"none\", \"request\" or \"require\", not \"" + v + "\"");
}

// The [tls] settings once the file and the flags are read: a certificate needs its key (and the
// other way round), a CA or client certificates need a certificate, and asking for client
// certificates needs the CA they must chain to.
Status check_tls(TlsConfig& t, const std::optional<std::string>& client_auth) {
  if (t.cert.empty() != t.key.empty())
    return invalid_argument(t.cert.empty() ? t.key_setting + " needs " + t.cert_setting
                                           : t.cert_setting + " needs " + t.key_setting);
  if (t.cert.empty() && !t.ca.empty())
    return invalid_argument(t.ca_setting + " needs " + t.cert_setting);
  if (t.cert.empty() && client_auth)
    return invalid_argument("[tls] clientAuth (--tls-client-auth) needs " + t.cert_setting);
  if (t.handshake_timeout_ms < 1 || t.handshake_timeout_ms > 600'000)
    return invalid_argument("[tls] handshakeTimeoutMs must be from 1 to 600000 milliseconds");
  // Without a word on it, a CA means that certificates chained to it count, none that none do.
  t.client_auth = t.ca.empty() ? TlsClientAuth::kNone : TlsClientAuth::kRequest;
  if (client_auth) {
    auto mode = parse_client_auth(*client_auth);
    if (!mode.ok())
      return invalid_argument("[tls] clientAuth (--tls-client-auth) " + mode.error().message);
    t.client_auth = *mode;
  }
  if (t.client_auth != TlsClientAuth::kNone && t.ca.empty())
    return invalid_argument("[tls] clientAuth (--tls-client-auth) " +
                            std::string(tls_client_auth_name(t.client_auth)) + " needs " +
                            t.ca_setting + ": the CA that client certificates must chain to");
  return ok_status();
}

}  // namespace

Result<std::pair<std::string, std::uint16_t>> split_host_port(const std::string& address) {
  std::string host;
  std::string port;
  if (!address.empty() && address[0] == '[') {
    auto close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':')
      return invalid_argument("address \"" + address + "\" is not [host]:port");
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    auto colon = address.rfind(':');
    if (colon == std::string::npos)
      return invalid_argument("address \"" + address + "\" is not host:port");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  auto n = parse_int64(port);
  if (host.empty() || !n || *n < 0 || *n > 65535)
    return invalid_argument("address \"" + address +
                            "\" is not host:port with a port from 0 to 65535");
  return std::make_pair(host, static_cast<std::uint16_t>(*n));
}

Result<ServerConfig> load_config(const std::string& path, const ConfigOverrides& o) {
  ServerConfig c;
  bool unix_from_file = false;
  std::optional<std::string> client_auth;  // [tls] clientAuth or --tls-client-auth, if given
  if (!path.empty()) {
    toml::table doc;
    try {
      doc = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
      const auto& where = e.source().begin;
      return config_error(path, std::to_string(where.line) + ":" + std::to_string(where.column) +
                                    ": " + std::string(e.description()));
    }
    const fs::path base = fs::absolute(fs::path(path)).parent_path();
    for (const auto& [key, value] : doc) {
      std::string k(key.str());
      if (!is_table(k)) return config_error(path, "unknown table [" + k + "]");
      if (!value.is_table()) return config_error(path, "[" + k + "] must be a table");
    }
    if (auto* s = doc["server"].as_table()) {
      if (auto e = check_keys(path, *s, "server")) return *e;
      std::string fsync, log_level, log_format;
      for (auto [key, out] : {std::pair{"listen", &c.listen},
                              {"http", &c.http},
                              {"unix", &c.unix_path},
                              {"dataDir", &c.data_dir},
                              {"fsync", &fsync},
                              {"logLevel", &log_level},
                              {"logFormat", &log_format}}) {
        if (auto e = read_string(path, *s, "server", key, out)) return *e;
      }
      if (s->contains("logLevel")) {
        auto level = parse_log_level(log_level);
        if (!level.ok()) return config_error(path, "[server] logLevel: " + level.error().message);
        c.log_level = *level;
      }
      if (s->contains("logFormat")) {
        auto format = parse_log_format(log_format);
        if (!format.ok())
          return config_error(path, "[server] logFormat: " + format.error().message);
        c.log_format = *format;
      }
      if (auto e = read_int(path, *s, "server", "snapshotAfterBytes", &c.snapshot_after_bytes))
        return *e;
      if (auto e = read_duration(path, *s, "server", "idlePollUs", &c.idle_poll_us, kInMicros))
        return *e;
      if (auto e =
              read_string_list(path, *s, "server", "corsAllowedOrigins", &c.cors_allowed_origins))
        return *e;
      for (const auto& origin : c.cors_allowed_origins) {
        if (auto problem = http::cors::origin_problem(origin))
          return config_error(path, "[server] corsAllowedOrigins: " + *problem);
      }
      if (!fsync.empty()) {
        auto mode = parse_fsync(fsync);
        if (!mode.ok()) return config_error(path, "[server] " + mode.error().message);
        c.fsync = *mode;
      }
      c.data_dir = resolve(base, c.data_dir);
      if (!c.unix_path.empty()) {
        c.unix_path = resolve(base, c.unix_path);
        unix_from_file = true;
      }
    }
    if (auto* a = doc["auth"].as_table()) {
      if (auto e = check_keys(path, *a, "auth")) return *e;
      if (auto e = read_string(path, *a, "auth", "credentials", &c.credentials)) return *e;
      c.credentials = resolve(base, c.credentials);
    }
    if (auto* l = doc["limits"].as_table()) {
      if (auto e = check_keys(path, *l, "limits")) return *e;
      if (auto e = read_duration(path, *l, "limits", "scriptTimeLimitMs", &c.script_time_limit_ms))
        return *e;
      if (auto e =
              read_int(path, *l, "limits", "acquirePerUserPerHour", &c.acquire_per_user_per_hour))
        return *e;
      if (auto e = read_duration(path, *l, "limits", "maxLeaseMs", &c.max_lease_ms)) return *e;
      if (c.acquire_per_user_per_hour < 1)
        return config_error(path, "[limits] acquirePerUserPerHour must be at least 1");
      if (c.max_lease_ms < 1 || c.max_lease_ms > 86'400'000)
        return config_error(path,
                            "[limits] maxLeaseMs must be from 1 to 86400000 milliseconds "
                            "(1ms to 24h)");
    }
    if (auto* st = doc["store"].as_table()) {
      if (auto e = check_keys(path, *st, "store")) return *e;
      if (auto e = read_string(path, *st, "store", "url", &c.store_url)) return *e;
      if (auto e = read_duration(path, *st, "store", "sessionGraceMs", &c.session_grace_ms))
        return *e;
      if (auto e = read_int(path, *st, "store", "poolSize", &c.store_pool_size)) return *e;
      if (auto e = read_int(path, *st, "store", "commitLanes", &c.store_commit_lanes)) return *e;
      if (auto e =
              read_duration(path, *st, "store", "statementDeadlineMs", &c.statement_deadline_ms))
        return *e;
      if (auto e =
              read_bool(path, *st, "store", "requireSyncReplication", &c.require_sync_replication))
        return *e;
      if (c.store_pool_size < 1 || c.store_pool_size > 256)
        return config_error(path, "[store] poolSize must be from 1 to 256");
      if (c.store_commit_lanes < 0 || c.store_commit_lanes > 64)
        return config_error(path, "[store] commitLanes must be from 0 to 64");
    }
    if (auto* t = doc["tls"].as_table()) {
      if (auto e = check_keys(path, *t, "tls")) return *e;
      std::string mode;
      for (auto [key, out] : {std::pair{"cert", &c.tls.cert},
                              {"key", &c.tls.key},
                              {"ca", &c.tls.ca},
                              {"clientAuth", &mode}}) {
        if (auto e = read_string(path, *t, "tls", key, out)) return *e;
      }
      if (auto e =
              read_duration(path, *t, "tls", "handshakeTimeoutMs", &c.tls.handshake_timeout_ms))
        return *e;
      if (t->contains("clientAuth")) client_auth = mode;
      for (auto [file, setting, name] : {std::tuple{&c.tls.cert, &c.tls.cert_setting, "[tls] cert"},
                                         {&c.tls.key, &c.tls.key_setting, "[tls] key"},
                                         {&c.tls.ca, &c.tls.ca_setting, "[tls] ca"}}) {
        if (file->empty()) continue;
        *file = resolve(base, *file);
        *setting = name;
      }
    }
  }
  for (auto [flag, file, setting, name] :
       {std::tuple{&o.tls_cert, &c.tls.cert, &c.tls.cert_setting, "--tls-cert"},
        {&o.tls_key, &c.tls.key, &c.tls.key_setting, "--tls-key"},
        {&o.tls_ca, &c.tls.ca, &c.tls.ca_setting, "--tls-ca"}}) {
    if (!*flag) continue;
    *file = **flag;
    *setting = name;
  }
  if (o.tls_client_auth) client_auth = *o.tls_client_auth;
  if (auto st = check_tls(c.tls, client_auth); !st.ok()) return std::move(st).error();
  if (o.listen) c.listen = *o.listen;
  if (o.http) c.http = *o.http;
  if (o.data_dir) c.data_dir = *o.data_dir;
  if (o.unix_path) {
    c.unix_path = *o.unix_path;
    unix_from_file = true;
  }
  if (o.store_url) c.store_url = *o.store_url;
  if (auto e = check_store_url(c.store_url)) return *e;
  if (o.session_grace_ms) c.session_grace_ms = *o.session_grace_ms;
  if (c.session_grace_ms < 100 || c.session_grace_ms > 86'400'000)
    return invalid_argument(
        "[store] sessionGraceMs (--session-grace-ms) must be from 100 to 86400000 milliseconds "
        "(100ms to 24h)");
  if (o.statement_deadline_ms) c.statement_deadline_ms = *o.statement_deadline_ms;
  if (c.statement_deadline_ms < 100 || c.statement_deadline_ms > 60'000)
    return invalid_argument(
        "[store] statementDeadlineMs (--statement-deadline-ms) must be from 100 to 60000 "
        "milliseconds (100ms to 1m)");
  if (o.require_sync_replication) c.require_sync_replication = *o.require_sync_replication;
  if (o.script_time_limit_ms) c.script_time_limit_ms = *o.script_time_limit_ms;
  if (c.script_time_limit_ms < 1 || c.script_time_limit_ms > script::kMaxTimeLimitMs)
    return invalid_argument(
        "[limits] scriptTimeLimitMs (--script-time-limit-ms) must be from 1 to 3600000 "
        "milliseconds (1ms to 1h)");
  if (o.snapshot_after_bytes) c.snapshot_after_bytes = *o.snapshot_after_bytes;
  if (c.snapshot_after_bytes < kMinSnapshotAfterBytes ||
      c.snapshot_after_bytes > kMaxSnapshotAfterBytes)
    return invalid_argument(
        "[server] snapshotAfterBytes (--snapshot-after-bytes) must be from 4096 to 1099511627776 "
        "bytes");
  if (o.idle_poll_us) c.idle_poll_us = *o.idle_poll_us;
  if (c.idle_poll_us < 0 || c.idle_poll_us > kMaxIdlePollUs)
    return invalid_argument(
        "[server] idlePollUs (--idle-poll-us) must be from 0 to 10000 microseconds");
  if (o.fsync) {
    auto mode = parse_fsync(*o.fsync);
    if (!mode.ok()) return std::move(mode).error();
    c.fsync = *mode;
  }
  if (o.log_level) {
    auto level = parse_log_level(*o.log_level);
    if (!level.ok()) return std::move(level).error();
    c.log_level = *level;
  }
  if (o.log_format) {
    auto format = parse_log_format(*o.log_format);
    if (!format.ok()) return std::move(format).error();
    c.log_format = *format;
  }
  if (!unix_from_file) c.unix_path = (fs::path(c.data_dir) / "holdfast.sock").string();
  for (const std::string* addr : {&c.listen, &c.http}) {
    if (addr->empty()) continue;
    auto hp = split_host_port(*addr);
    if (!hp.ok()) return std::move(hp).error();
  }
  return c;
}

std::string_view tls_client_auth_name(TlsClientAuth mode) {
  switch (mode) {
    case TlsClientAuth::kNone:
      return "none";
    case TlsClientAuth::kRequest:
      return "request";
    case TlsClientAuth::kRequire:
      return "require";
  }
  return "none";
}

std::string_view fsync_name(FsyncMode mode) {
  switch (mode) {
    case FsyncMode::kAlways:
      return "always";
    case FsyncMode::kNever:
      return "never";
    case FsyncMode::kHorizon:
      return "horizon";
  }
  return "always";
}

}  // namespace holdfast
