// `holdfast serve` as an operator meets it: one ready line on stdout and the log on stderr,
// text or JSON records from a chosen level (by flag or holdfast.toml), bad client input that
// logs at most one line naming its connection, and help that gives every option's default.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "support/files.h"
#include "support/loopback.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// `holdfast serve` on free ports with stdout readable line by line and stderr in a file.
class Serve {
 public:
  explicit Serve(std::vector<std::string> extra) {
    std::vector<std::string> argv = {"sh",          "-c",         "exec \"$@\" 2>\"$0\"",
                                     log_path(),    HOLDFAST_BIN, "serve",
                                     "--data-dir",  dir_.path(),  "--listen",
                                     "127.0.0.1:0", "--http",     "127.0.0.1:0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    child_ = Child::start(argv);
    if (!child_.read_line(&ready_line_, 20000)) ADD_FAILURE() << "no ready line: " << log();
    const auto at = ready_line_.find("resp=127.0.0.1:");
    if (at != std::string::npos) port_ = std::stoi(ready_line_.substr(at + 15));
  }
  // SIGTERM; returns the exit code and appends what stdout still had to *rest.
  int stop(std::string* rest) {
    child_.signal(SIGTERM);
    for (std::string line; child_.read_line(&line, 10000);) *rest += line + "\n";
    return child_.wait();
  }
  std::string log() const { return read_file(log_path()); }
  const std::string& ready_line() const { return ready_line_; }
  const std::string& dir() const { return dir_.path(); }
  int port() const { return port_; }
  pid_t pid() const { return child_.pid(); }

 private:
  std::string log_path() const { return dir_.path() + "/stderr.log"; }
  TempDir dir_;
  Child child_;
  std::string ready_line_;
  int port_ = 0;
};

const std::regex kTextRecord(
    R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info|warn|error|critical) [^\n]+)");

TEST(ServeLog, OneReadyLineOnStdoutAndTheLogOnStderr) {
  Serve serve({});
  EXPECT_EQ(serve.ready_line().rfind("holdfast ready resp=127.0.0.1:", 0), 0u)
      << serve.ready_line();
  std::string rest;
  EXPECT_EQ(serve.stop(&rest), 0);
  EXPECT_EQ(rest, "") << "stdout carries the ready line and nothing else";
  const std::string log = serve.log();
  EXPECT_EQ(log.find("holdfast ready"), std::string::npos) << "the log does not repeat it:\n"
                                                           << log;
  EXPECT_NE(log.find(" info open files limit "), std::string::npos) << log;
  EXPECT_NE(log.find(" info recovered the log holds=0 nextToken=1\n"), std::string::npos) << log;
  EXPECT_NE(log.find(" info stopped\n"), std::string::npos) << log;
  for (const std::string& line : lines_of(log))
    EXPECT_TRUE(std::regex_match(line, kTextRecord)) << line;
}

TEST(ServeLog, JsonRecordsCarryTimeLevelMessageAndFields) {
  Serve serve({"--log-format", "json"});
  std::string rest;
  EXPECT_EQ(serve.stop(&rest), 0);
  const auto lines = lines_of(serve.log());
  ASSERT_GE(lines.size(), 3u);
  bool recovered = false;
  for (const std::string& line : lines) {
    json::object record = json::parse(line).as_object();  // throws if a line is not one object
    EXPECT_TRUE(std::regex_match(std::string(record["time"].as_string()),
                                 std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << line;
    EXPECT_EQ(record["level"].as_string(), "info") << line;
    EXPECT_FALSE(record["message"].as_string().empty()) << line;
    if (record["message"] == "recovered the log") {
      recovered = true;
      EXPECT_EQ(record["holds"].as_int64(), 0) << line;
      EXPECT_EQ(record["nextToken"].as_int64(), 1) << line;
    }
  }
  EXPECT_TRUE(recovered) << serve.log();
}

TEST(ServeLog, TheLevelDropsLessSevereRecords) {
  Serve serve({"--log-level", "warn"});
  std::string rest;
  EXPECT_EQ(serve.stop(&rest), 0);
  EXPECT_EQ(serve.log(), "") << "a clean start and stop has nothing at warn or above";
}

TEST(ServeLog, HoldfastTomlSetsTheFormatAndTheLevel) {
  TempDir dir;
  const std::string config = dir.path() + "/holdfast.toml";
  std::ofstream(config) << "[server]\nlogFormat = \"json\"\nlogLevel = \"info\"\n";
  Serve serve({"--config", config});
  std::string rest;
  EXPECT_EQ(serve.stop(&rest), 0);
  const auto lines = lines_of(serve.log());
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) EXPECT_TRUE(json::parse(line).is_object()) << line;
  // A flag overrides the file.
  Serve quiet({"--config", config, "--log-level", "error"});
  EXPECT_EQ(quiet.stop(&rest), 0);
  EXPECT_EQ(quiet.log(), "");
}

TEST(ServeLog, BadLogSettingsAreUsageErrors) {
  RunResult r = run({HOLDFAST_BIN, "serve", "--log-level", "loud"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "holdfast serve: log level must be debug, info, warn or error, not \"loud\"\n");
  r = run({HOLDFAST_BIN, "serve", "--log-format", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "holdfast serve: log format must be text or json, not \"xml\"\n");
}

// Today no bad input is logged at all; whatever is logged for it must be one record a line
// that names the connection.
TEST(ServeLog, BadInputLogsAtMostOneLineNamingTheConnection) {
  Serve serve({});
  RespClient resp = RespClient::tcp(serve.port());
  EXPECT_TRUE(resp.call({"LOCK.TRY", "k", "TTL", "-1"}).is_error());
  EXPECT_TRUE(resp.call({"LOCK.TRY", std::string("a\nb\x01"), "TTL", "1000"}).is_error());
  EXPECT_TRUE(resp.call({"LOCK.TRY", std::string(2000, 'k'), "TTL", "1000"}).is_error());
  const RespValue release = resp.call({"LOCK.RELEASE", "k", "\xff\xfe"});
  EXPECT_TRUE(release.is_error() || release.number("released") == 0) << release.debug();
  EXPECT_TRUE(resp.call({"NO.SUCH", "COMMAND\r\n"}).is_error());
  EXPECT_TRUE(resp.call({"RULES.SET", "[rules.lock]\nacquire = \"(((\"\n"}).is_error());
  RespClient garbage = RespClient::tcp(serve.port());
  garbage.send_raw("*2\r\n$3\r\nGET\r\n$-7\r\n");
  EXPECT_TRUE(garbage.wait_closed());
  const int http_port = [&] {
    const auto at = serve.ready_line().find("http=127.0.0.1:");
    return at == std::string::npos ? 0 : std::stoi(serve.ready_line().substr(at + 15));
  }();
  const int fd = tcp_connect(http_port);
  ASSERT_GE(fd, 0);
  send_all(fd,
           "POST /v1/locks/acquire HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n"
           "Connection: close\r\n\r\n{\"key\":\n}");
  EXPECT_NE(read_until_closed(fd).find(" 400 "), std::string::npos);
  const int bad_request = tcp_connect(http_port);
  send_all(bad_request, "GARBAGE\x01\r\n\r\n");
  read_until_closed(bad_request);
  EXPECT_EQ(resp.call({"PING"}).str, "PONG");
  std::string rest;
  EXPECT_EQ(serve.stop(&rest), 0);
  for (const std::string& line : lines_of(serve.log())) {
    const bool startup_or_stop = line.find(" open files limit ") != std::string::npos ||
                                 line.find(" recovered the log ") != std::string::npos ||
                                 line.find(" signal 15: shutting down") != std::string::npos ||
                                 line.ends_with(" stopped");
    if (startup_or_stop) continue;
    EXPECT_TRUE(std::regex_match(line, kTextRecord)) << line;
    EXPECT_NE(line.find("connection="), std::string::npos) << line;
  }
}

TEST(ServeHelp, EveryOptionGivesItsDefault) {
  RunResult r = run({HOLDFAST_BIN, "serve", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t options = 0;
  const std::vector<std::string> lines = lines_of(r.out);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (line.rfind("  -", 0) != 0) continue;
    ++options;
    if (line.find("--help") != std::string::npos) continue;
    // An option too wide for the name column has its description on the next line.
    if (i + 1 < lines.size() && lines[i + 1].rfind("      ", 0) == 0) line += lines[i + 1];
    EXPECT_NE(line.find("(default"), std::string::npos) << line;
  }
  EXPECT_EQ(options, 20u) << r.out;
  for (const char* option :
       {"--config", "--data-dir", "--listen", "--http", "--unix", "--fsync",
        "--snapshot-after-bytes", "--idle-poll-us", "--store", "--session-grace-ms",
        "--statement-deadline-ms", "--require-sync-replication", "--script-time-limit-ms",
        "--log-level", "--log-format", "--tls-cert", "--tls-key", "--tls-ca", "--tls-client-auth"})
    EXPECT_NE(r.out.find(std::string("  ") + option), std::string::npos) << option;
  EXPECT_NE(r.out.find("(default 127.0.0.1:7420)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(default 10s)"), std::string::npos) << "durations in units: " << r.out;
}

// Every setting of docs/configuration.md: a flag's help names the one it overrides, and those
// only the file has end the help, each with its default.
TEST(ServeHelp, EverySettingOfTheFileIsListed) {
  RunResult r = run({HOLDFAST_BIN, "serve", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* setting : {"[server] listen",
                              "[server] http",
                              "[server] unix",
                              "[server] dataDir",
                              "[server] fsync",
                              "[server] snapshotAfterBytes",
                              "[server] idlePollUs",
                              "[server] logLevel",
                              "[server] logFormat",
                              "[server] corsAllowedOrigins",
                              "[auth] credentials",
                              "[limits] acquirePerUserPerHour",
                              "[limits] maxLeaseMs",
                              "[limits] scriptTimeLimitMs",
                              "[store] url",
                              "[store] sessionGraceMs",
                              "[store] poolSize",
                              "[store] commitLanes",
                              "[store] statementDeadlineMs",
                              "[store] requireSyncReplication",
                              "[tls] cert",
                              "[tls] key",
                              "[tls] ca",
                              "[tls] clientAuth",
                              "[tls] handshakeTimeoutMs"})
    EXPECT_NE(r.out.find(setting), std::string::npos) << setting << "\n" << r.out;
  const std::string only_in_file = r.out.substr(r.out.find("Only in holdfast.toml"));
  for (const char* line :
       {"[server] corsAllowedOrigins", "[limits] maxLeaseMs", "[tls] handshakeTimeoutMs"}) {
    const std::string rest = only_in_file.substr(only_in_file.find(line));
    EXPECT_NE(rest.substr(0, rest.find('\n')).find("(default "), std::string::npos) << rest;
  }
  EXPECT_NE(only_in_file.find("(default 24h)"), std::string::npos) << only_in_file;
  EXPECT_NE(only_in_file.find("1500ms, 30s, 5m or 2h"), std::string::npos) << only_in_file;
}

TEST(ServeVersion, NamesTheCommitAndTheBuildDate) {
  RunResult r = run({HOLDFAST_BIN, "--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex(R"(holdfast \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,40}|unknown), built )"
                        R"(\d{4}-\d\d-\d\d\)\n)")))
      << r.out;
}

TEST(ServeStore, AnotherDatabaseIsAUsageErrorBeforeAnythingConnects) {
  TempDir dir;
  RunResult r = run({HOLDFAST_BIN, "serve", "--data-dir", dir.path(), "--store",
                     "mysql://holdfast:s3cret@127.0.0.1:1/locks"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "holdfast serve: [store] url (--store): mysql:// is not supported: Holdfast keeps its "
            "locks in PostgreSQL (postgres:// or postgresql://, or a libpq key=value string)\n");
  EXPECT_EQ(r.out, "") << "never ready";
  const std::string config = dir.path() + "/holdfast.toml";
  std::ofstream(config) << "[store]\nurl = \"redis://127.0.0.1:1\"\n";
  r = run({HOLDFAST_BIN, "serve", "--config", config});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("redis:// is not supported"), std::string::npos) << r.err;
}

TEST(ServeDurations, FlagsTakeUnitsAndNameThemWhenWrong) {
  RunResult r = run({HOLDFAST_BIN, "serve", "--session-grace-ms", "10x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--session-grace-ms: \"10x\" is not a duration (use a whole number of "
                       "milliseconds, or units ms, s, m, h: 1500ms, 30s, 5m, 2h)"),
            std::string::npos)
      << r.err;
  r = run({HOLDFAST_BIN, "serve", "--script-time-limit-ms", "2h"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "holdfast serve: [limits] scriptTimeLimitMs (--script-time-limit-ms) must be from 1 "
            "to 3600000 milliseconds (1ms to 1h)\n");
  // The one flag in microseconds: "us" beside the other units, a plain number in microseconds.
  r = run({HOLDFAST_BIN, "serve", "--idle-poll-us", "5x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--idle-poll-us: \"5x\" is not a duration (use a whole number of "
                       "microseconds, or units us, ms, s: 500us, 2ms)"),
            std::string::npos)
      << r.err;
  r = run({HOLDFAST_BIN, "serve", "--idle-poll-us", "11ms"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("idlePollUs (--idle-poll-us) must be from 0 to 10000 microseconds"),
            std::string::npos)
      << "11ms is 11000 us: " << r.err;
  Serve serve(
      {"--script-time-limit-ms", "2.5s", "--session-grace-ms", "1m", "--idle-poll-us", "500us"});
  EXPECT_EQ(serve.ready_line().rfind("holdfast ready ", 0), 0u) << serve.log();
  std::string rest;
  EXPECT_EQ(serve.stop(&rest), 0);
}

// Polls the server's log until it has `text` `times` times; false after 20 s.
bool await_log(const Serve& serve, const std::string& text, int times) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    const std::string log = serve.log();
    int seen = 0;
    for (auto at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++seen;
    if (seen >= times) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the server's pace, not a clock
  }
}

TEST(ServeCredentials, AnEmptyFileIsWarnedAboutAtStartAndOnReload) {
  TempDir dir;
  const std::string credentials = dir.path() + "/credentials.toml";
  std::ofstream(credentials) << "# nobody yet\n";
  std::ofstream(dir.path() + "/holdfast.toml") << "[auth]\ncredentials = \"credentials.toml\"\n";
  Serve serve({"--config", dir.path() + "/holdfast.toml"});
  const std::string warning =
      " warn the credentials file has no [[member]] or [[function]]: nobody can authenticate";
  EXPECT_NE(serve.log().find(warning), std::string::npos) << serve.log();
  EXPECT_NE(serve.log().find("path=" + credentials), std::string::npos) << serve.log();
  EXPECT_NE(serve.ready_line().find("mode=auth"), std::string::npos) << serve.ready_line();

  // A member: no warning on reload. Emptied again: the warning again.
  std::ofstream(credentials) << "[[member]]\nuserId = \"alice\"\ntokenSha256 = \""
                             << std::string(64, 'a') << "\"\n";
  ASSERT_EQ(::kill(serve.pid(), SIGHUP), 0);
  ASSERT_TRUE(await_log(serve, "SIGHUP: reloaded 1 credentials", 1)) << serve.log();
  std::ofstream(credentials) << "\n";
  ASSERT_EQ(::kill(serve.pid(), SIGHUP), 0);
  ASSERT_TRUE(await_log(serve, "SIGHUP: reloaded 0 credentials", 1)) << serve.log();
  EXPECT_TRUE(await_log(serve, warning, 2)) << serve.log();
  std::string rest;
  EXPECT_EQ(serve.stop(&rest), 0);
}

TEST(ServeHelp, TheTopLevelHelpListsEveryCommandsOptionsWithDefaults) {
  RunResult r = run({HOLDFAST_BIN, "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"serve", "--log-format", "locks", "run", "--conflict-exit-code",
                           "--session", "rules", "auth", "(default 1m)", "(default info)"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

}  // namespace
}  // namespace holdfast::testing
