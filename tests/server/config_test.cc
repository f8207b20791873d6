#include "server/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace holdfast {
namespace {

class ConfigFile : public ::testing::Test {
 protected:
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("holdfast-config-" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const std::string& text) {
    auto p = dir / "holdfast.toml";
    std::ofstream(p) << text;
    return p.string();
  }
};

TEST_F(ConfigFile, DefaultsWithoutAFile) {
  auto c = load_config("", {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->listen, "127.0.0.1:7420");
  EXPECT_EQ(c->http, "127.0.0.1:7421");
  EXPECT_EQ(c->data_dir, "data");
  EXPECT_EQ(c->unix_path, "data/holdfast.sock");
  EXPECT_EQ(c->fsync, FsyncMode::kAlways);
  EXPECT_EQ(c->acquire_per_user_per_hour, 600);
  EXPECT_EQ(c->snapshot_after_bytes, 64 << 20);
  EXPECT_EQ(c->idle_poll_us, 0);
  EXPECT_EQ(c->log_level, LogLevel::kInfo);
  EXPECT_EQ(c->log_format, LogFormat::kText);
  EXPECT_TRUE(c->cors_allowed_origins.empty());
}

TEST_F(ConfigFile, ReadsEveryNameAndResolvesPathsAgainstTheFile) {
  auto path = write(R"(
[server]
listen = "127.0.0.1:9000"
http = ""
unix = "run/h.sock"
dataDir = "state"
fsync = "never"
snapshotAfterBytes = 1048576
idlePollUs = 0
logLevel = "warn"
logFormat = "json"
corsAllowedOrigins = ["https://app.example.com", "http://localhost:5173"]
[auth]
credentials = "creds.toml"
[limits]
acquirePerUserPerHour = 5
maxLeaseMs = 60000
scriptTimeLimitMs = 250
[store]
url = "postgres://db/locks"
)");
  auto c = load_config(path, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->listen, "127.0.0.1:9000");
  EXPECT_EQ(c->http, "");
  EXPECT_EQ(c->unix_path, (dir / "run/h.sock").string());
  EXPECT_EQ(c->data_dir, (dir / "state").string());
  EXPECT_EQ(c->fsync, FsyncMode::kNever);
  EXPECT_EQ(c->snapshot_after_bytes, 1 << 20);
  EXPECT_EQ(c->idle_poll_us, 0);
  EXPECT_EQ(c->log_level, LogLevel::kWarn);
  EXPECT_EQ(c->log_format, LogFormat::kJson);
  EXPECT_EQ(c->cors_allowed_origins,
            (std::vector<std::string>{"https://app.example.com", "http://localhost:5173"}));
  EXPECT_EQ(c->credentials, (dir / "creds.toml").string());
  EXPECT_EQ(c->acquire_per_user_per_hour, 5);
  EXPECT_EQ(c->max_lease_ms, 60000);
  EXPECT_EQ(c->script_time_limit_ms, 250);
  EXPECT_EQ(c->store_url, "postgres://db/locks");
}

TEST_F(ConfigFile, FsyncHorizonFromTheFileOrAFlag) {
  auto c = load_config(write("[server]\nfsync = \"horizon\"\n"), {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->fsync, FsyncMode::kHorizon);
  EXPECT_EQ(fsync_name(c->fsync), "horizon");
  ConfigOverrides o;
  o.fsync = "horizon";
  c = load_config("", o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->fsync, FsyncMode::kHorizon);
}

TEST_F(ConfigFile, FlagsOverrideTheFile) {
  auto path = write(
      "[server]\nlisten = \"127.0.0.1:9000\"\nfsync = \"never\"\nidlePollUs = 50\n"
      "logLevel = \"error\"\nlogFormat = \"json\"\n");
  ConfigOverrides o;
  o.log_level = "debug";
  o.log_format = "text";
  o.listen = "127.0.0.1:9100";
  o.fsync = "always";
  o.data_dir = "/var/lib/holdfast";
  o.snapshot_after_bytes = 65536;
  o.idle_poll_us = 10000;
  o.script_time_limit_ms = 100;
  auto c = load_config(path, o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->idle_poll_us, 10000);
  EXPECT_EQ(c->script_time_limit_ms, 100);
  EXPECT_EQ(c->listen, "127.0.0.1:9100");
  EXPECT_EQ(c->snapshot_after_bytes, 65536);
  EXPECT_EQ(c->fsync, FsyncMode::kAlways);
  EXPECT_EQ(c->unix_path, "/var/lib/holdfast/holdfast.sock");
  EXPECT_EQ(c->log_level, LogLevel::kDebug);
  EXPECT_EQ(c->log_format, LogFormat::kText);
}

TEST_F(ConfigFile, BadLogFlagsAreNamed) {
  ConfigOverrides level;
  level.log_level = "verbose";
  auto r = load_config("", level);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "log level must be debug, info, warn or error, not \"verbose\"");
  ConfigOverrides format;
  format.log_format = "logfmt";
  r = load_config("", format);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "log format must be text or json, not \"logfmt\"");
}

TEST_F(ConfigFile, MistakesAreNamed) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"[server]\nlisen = \"x\"\n", "unknown key 'lisen' in [server]"},
      {"[servers]\n", "unknown table [servers]"},
      {"[server]\nfsync = \"sometimes\"\n",
       "fsync must be \"always\", \"never\" or \"horizon\", not \"sometimes\""},
      {"[server]\nlisten = 7420\n", "[server] listen must be a string"},
      {"[server]\nlisten = \"nohostport\"\n", "is not host:port"},
      {"[limits]\nacquirePerUserPerHour = \"many\"\n", "acquirePerUserPerHour must be an integer"},
      {"[limits]\nmaxLeaseMs = 0\n", "maxLeaseMs must be from 1 to 86400000 milliseconds"},
      {"[limits]\nmaxLeaseMs = \"25h\"\n",
       "[limits] maxLeaseMs must be from 1 to 86400000 milliseconds (1ms to 24h)"},
      {"[limits]\nmaxLeaseMs = \"30x\"\n",
       "[limits] maxLeaseMs: \"30x\" is not a duration (use a whole number of milliseconds, or "
       "units ms, s, m, h: 1500ms, 30s, 5m, 2h)"},
      {"[limits]\nmaxLeaseMs = \"1.5ms\"\n",
       "[limits] maxLeaseMs: \"1.5ms\" is not a whole number of milliseconds"},
      {"[limits]\nmaxLeaseMs = \"-1h\"\n", "[limits] maxLeaseMs: \"-1h\" is negative"},
      {"[limits]\nmaxLeaseMs = true\n",
       "[limits] maxLeaseMs must be a duration: an integer of milliseconds or a string"},
      {"[limits]\nscriptTimeLimitMs = \"2h\"\n",
       "scriptTimeLimitMs (--script-time-limit-ms) must be from 1 to 3600000 milliseconds (1ms "
       "to 1h)"},
      {"[limits]\nscriptTimeLimitMs = 0\n",
       "scriptTimeLimitMs (--script-time-limit-ms) must be from 1 to 3600000 milliseconds"},
      {"[limits]\nscriptTimeLimitMs = 3600001\n",
       "scriptTimeLimitMs (--script-time-limit-ms) must be from 1 to 3600000"},
      {"[server]\nsnapshotAfterBytes = 4095\n",
       "snapshotAfterBytes (--snapshot-after-bytes) must be from 4096"},
      {"[server]\nsnapshotAfterBytes = \"64MiB\"\n",
       "[server] snapshotAfterBytes must be an integer"},
      {"[server]\nidlePollUs = -1\n",
       "idlePollUs (--idle-poll-us) must be from 0 to 10000 microseconds"},
      {"[server]\nidlePollUs = 10001\n",
       "idlePollUs (--idle-poll-us) must be from 0 to 10000 microseconds"},
      {"[server]\nidlePollUs = 1.5\n",
       "[server] idlePollUs must be a duration: an integer of microseconds or a string such as "
       "\"500us\" (use a whole number of microseconds, or units us, ms, s: 500us, 2ms)"},
      {"[server]\nidlePollUs = \"11ms\"\n",
       "idlePollUs (--idle-poll-us) must be from 0 to 10000 microseconds"},
      {"[server]\nidlePollUs = \"1.5us\"\n",
       "[server] idlePollUs: \"1.5us\" is not a whole number of microseconds"},
      {"[server]\nidlePollUs = \"5x\"\n",
       "[server] idlePollUs: \"5x\" is not a duration (use a whole number of microseconds, or "
       "units us, ms, s: 500us, 2ms)"},
      {"[server\n", "holdfast.toml: 1:"},
      {"[server]\nlogLevel = \"loud\"\n",
       "[server] logLevel: log level must be debug, info, warn or error, not \"loud\""},
      {"[server]\nlogLevel = 3\n", "[server] logLevel must be a string"},
      {"[server]\nlogFormat = \"xml\"\n",
       "[server] logFormat: log format must be text or json, not \"xml\""},
      {"[server]\ncorsAllowedOrigins = \"https://app.example.com\"\n",
       "[server] corsAllowedOrigins must be a list of strings"},
      {"[server]\ncorsAllowedOrigins = [7421]\n",
       "[server] corsAllowedOrigins must be a list of strings"},
      {"[server]\ncorsAllowedOrigins = [\"https://app.example.com/\"]\n",
       "corsAllowedOrigins: \"https://app.example.com/\" is an origin only"},
  };
  for (const auto& c : cases) {
    auto r = load_config(write(c.text), {});
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

TEST_F(ConfigFile, TlsFromTheFileResolvesPathsAndDefaultsClientAuthByTheCa) {
  auto path = write(
      "[tls]\ncert = \"certs/server.pem\"\nkey = \"certs/server.key\"\n"
      "ca = \"/etc/ca.pem\"\nhandshakeTimeoutMs = \"2.5s\"\n");
  auto c = load_config(path, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->tls.enabled());
  EXPECT_EQ(c->tls.cert, (dir / "certs/server.pem").string());
  EXPECT_EQ(c->tls.key, (dir / "certs/server.key").string());
  EXPECT_EQ(c->tls.ca, "/etc/ca.pem");
  EXPECT_EQ(c->tls.cert_setting, "[tls] cert");
  EXPECT_EQ(c->tls.client_auth, TlsClientAuth::kRequest);  // a CA without a word: request
  EXPECT_EQ(c->tls.handshake_timeout_ms, 2500);

  // Without a CA nothing is asked of clients; flags override the file and name themselves.
  ConfigOverrides o;
  o.tls_key = "k.pem";
  o.tls_client_auth = "require";
  auto flagged = load_config(path, o);
  ASSERT_TRUE(flagged.ok()) << flagged.error().message;
  EXPECT_EQ(flagged->tls.key, "k.pem");
  EXPECT_EQ(flagged->tls.key_setting, "--tls-key");
  EXPECT_EQ(flagged->tls.client_auth, TlsClientAuth::kRequire);
  auto plain = load_config(write("[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n"), {});
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->tls.client_auth, TlsClientAuth::kNone);
  EXPECT_FALSE(load_config("", {})->tls.enabled());
}

TEST_F(ConfigFile, TlsMistakesAreNamed) {
  struct Case {
    std::string text;
    ConfigOverrides flags;
    std::string message;
  } cases[] = {
      {"[tls]\ncert = \"c.pem\"\n", {}, "[tls] cert needs --tls-key"},
      {"[tls]\nkey = \"k.pem\"\n", {}, "[tls] key needs --tls-cert"},
      {"[tls]\nca = \"ca.pem\"\n", {}, "[tls] ca needs --tls-cert"},
      {"[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nclientAuth = \"maybe\"\n",
       {},
       "clientAuth (--tls-client-auth) must be \"none\", \"request\" or \"require\", not "
       "\"maybe\""},
      {"[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nclientAuth = \"require\"\n",
       {},
       "clientAuth (--tls-client-auth) require needs --tls-ca"},
      {"[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nhandshakeTimeoutMs = 0\n",
       {},
       "handshakeTimeoutMs must be from 1 to 600000"},
      {"[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\npassword = \"x\"\n",
       {},
       "unknown key 'password' in [tls]"},
      {"[tls]\ncert = 7\n", {}, "[tls] cert must be a string"},
  };
  for (auto& c : cases) {
    auto r = load_config(write(c.text), c.flags);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
  ConfigOverrides only_ca;
  only_ca.tls_ca = "ca.pem";
  auto r = load_config("", only_ca);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--tls-ca needs --tls-cert");
}

TEST_F(ConfigFile, DurationsTakeAnIntegerOfMillisecondsOrUnits) {
  auto c = load_config(write("[limits]\nmaxLeaseMs = \"2h\"\nscriptTimeLimitMs = \"1.5s\"\n"
                             "[store]\nsessionGraceMs = \"1m\"\n"),
                       {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->max_lease_ms, 7'200'000);
  EXPECT_EQ(c->script_time_limit_ms, 1500);
  EXPECT_EQ(c->session_grace_ms, 60'000);
  auto plain =
      load_config(write("[limits]\nmaxLeaseMs = 90000\nscriptTimeLimitMs = \"250\"\n"), {});
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->max_lease_ms, 90'000);
  EXPECT_EQ(plain->script_time_limit_ms, 250) << "a string without a unit is milliseconds too";
}

TEST_F(ConfigFile, IdlePollUsIsADurationInMicroseconds) {
  for (const auto& [text, us] :
       std::vector<std::pair<std::string, std::int64_t>>{{"250", 250},
                                                         {"\"250\"", 250},
                                                         {"\"500us\"", 500},
                                                         {"\"2ms\"", 2000},
                                                         {"\"1.5ms\"", 1500},
                                                         {"\"0.01s\"", 10'000}}) {
    auto c = load_config(write("[server]\nidlePollUs = " + text + "\n"), {});
    ASSERT_TRUE(c.ok()) << text << ": " << c.error().message;
    EXPECT_EQ(c->idle_poll_us, us) << text;
  }
}

// The one list of settings is what the loader accepts: each of them is a known key.
TEST_F(ConfigFile, EveryListedSettingIsAKeyTheLoaderKnows) {
  for (const ConfigSetting& s : config_settings()) {
    auto r =
        load_config(write("[" + std::string(s.table) + "]\n" + std::string(s.key) + " = {}\n"), {});
    ASSERT_FALSE(r.ok()) << s.key << ": a table is no setting's type";
    EXPECT_EQ(r.error().message.find("unknown"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(std::string(s.key)), std::string::npos)
        << "the error names the setting: " << r.error().message;
  }
}

TEST(SplitHostPort, AcceptsHostPortAndBracketedIpv6) {
  EXPECT_EQ(split_host_port("127.0.0.1:7420")->second, 7420);
  EXPECT_EQ(split_host_port("[::1]:80")->first, "::1");
  EXPECT_FALSE(split_host_port("127.0.0.1").ok());
  EXPECT_FALSE(split_host_port("h:99999").ok());
  EXPECT_FALSE(split_host_port(":80").ok());
}

}  // namespace
}  // namespace holdfast
