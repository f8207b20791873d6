// redis-cli, unmodified, is a Holdfast client: RESP2, RESP3 (-3), TCP and the Unix socket.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "support/auth_config.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class RedisCli : public ::testing::Test {
 protected:
  ServerProcess server;
  RunResult cli(std::vector<std::string> args, bool unix_socket = false) {
    std::vector<std::string> argv = {REDIS_CLI_BIN};
    if (unix_socket) {
      argv.insert(argv.end(), {"-s", server.unix_path()});
    } else {
      argv.insert(argv.end(), {"-p", std::to_string(server.port())});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }
};

TEST_F(RedisCli, PingOverTcpAndUnixSocket) {
  EXPECT_EQ(cli({"PING"}).out, "PONG\n");
  EXPECT_EQ(cli({"PING"}, true).out, "PONG\n");
}

TEST_F(RedisCli, TryPrintsTheHoldAndThenNil) {
  auto first = cli({"LOCK.TRY", "jobs:nightly", "TTL", "60000"});
  EXPECT_EQ(first.out.substr(0, 17), "key\njobs:nightly\n");
  EXPECT_NE(first.out.find("\nhandle\n"), std::string::npos);
  auto second = cli({"LOCK.TRY", "jobs:nightly", "TTL", "60000"}, true);
  EXPECT_EQ(second.out, "\n");  // nil prints as an empty line when not on a terminal
}

TEST_F(RedisCli, Resp3PrintsMapsAndHelloSaysHoldfast) {
  auto hello = cli({"-3", "HELLO", "3"});
  EXPECT_NE(hello.out.find("server holdfast"), std::string::npos) << hello.out;
  EXPECT_NE(hello.out.find("proto 3"), std::string::npos);
  cli({"LOCK.TRY", "k", "TTL", "60000", "OWNER", "run-1"});
  auto status = cli({"-3", "LOCK.STATUS", "k"});
  EXPECT_NE(status.out.find("owner run-1"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("held 1"), std::string::npos) << status.out;
}

TEST_F(RedisCli, ErrorsStartWithTheirCode) {
  cli({"LOCK.TRY", "k", "TTL", "60000"});
  auto timeout = cli({"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", "50"});
  // redis-cli prints an error reply followed by an empty line when not on a terminal.
  EXPECT_EQ(timeout.out, "LOCK_TIMEOUT no grant within the timeout key=k timeoutMs=50\n\n");
  auto unknown = cli({"LOCK.FROB", "k"});
  EXPECT_EQ(unknown.out, "ERR unknown command 'LOCK.FROB'\n\n");
}

TEST_F(RedisCli, PipedCommandsRunInOrder) {
  auto r = run({REDIS_CLI_BIN, "-p", std::to_string(server.port())},
               "LOCK.TRY a TTL 60000\nLOCK.STATUS a\nPING\n");
  EXPECT_NE(r.out.find("held\n1\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 5), "PONG\n");
}

TEST_F(RedisCli, PipeModeEndsWithItsEchoMarkerAndCountsReplies) {
  // --pipe ends its input with ECHO <marker> and waits for the marker to come back.
  auto r =
      run({REDIS_CLI_BIN, "-p", std::to_string(server.port()), "--pipe", "--pipe-timeout", "20"},
          RespClient::encode({"LOCK.TRY", "pipe:a", "TTL", "60000"}) +
              RespClient::encode({"LOCK.TRY", "pipe:b", "TTL", "60000"}) +
              RespClient::encode({"LOCK.STATUS", "pipe:a"}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("errors: 0, replies: 3"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(server.client().call({"DBSIZE"}).integer, 2);
}

TEST_F(RedisCli, Resp3ShowsInfoAndSelectsDatabaseZero) {
  cli({"LOCK.TRY", "k", "TTL", "60000"});
  auto info = cli({"-3", "-n", "0", "INFO", "holdfast"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("holds:1"), std::string::npos) << info.out;
  auto other_db = cli({"-n", "1", "PING"});
  EXPECT_NE(other_db.err.find("SELECT 1 failed"), std::string::npos)
      << other_db.out << other_db.err;
}

TEST_F(RedisCli, StatPrintsOneLineOfFigures) {
  cli({"LOCK.TRY", "stat:a", "TTL", "60000"});
  // stdbuf: redis-cli writes its lines through stdio, which buffers them into a pipe.
  Child stat = Child::start(
      {"stdbuf", "-oL", REDIS_CLI_BIN, "-p", std::to_string(server.port()), "--stat", "-i", "0.1"});
  std::string header, columns, figures;
  ASSERT_TRUE(stat.read_line(&header));
  ASSERT_TRUE(stat.read_line(&columns));
  ASSERT_TRUE(stat.read_line(&figures));
  stat.signal(SIGTERM);
  stat.wait();
  EXPECT_NE(columns.find("keys"), std::string::npos) << columns;
  // keys mem clients blocked requests connections
  std::istringstream in(figures);
  std::string keys, mem, clients;
  in >> keys >> mem >> clients;
  EXPECT_EQ(keys, "1") << figures;
  EXPECT_EQ(clients, "1") << figures;
}

TEST_F(RedisCli, BenchmarkRunsWithoutWarnings) {
  auto r = run({"redis-benchmark", "-p", std::to_string(server.port()), "-n", "2000", "-c", "4",
                "-q", "-t", "ping"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.find("WARN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PING_MBULK: "), std::string::npos) << r.out;
  auto custom = run({"redis-benchmark", "-p", std::to_string(server.port()), "-n", "2000", "-c",
                     "4", "-q", "LOCK.STATUS", "bench:k"});
  EXPECT_EQ(custom.err, "");
  EXPECT_NE(custom.out.find("requests per second"), std::string::npos) << custom.out;
}

// Types into an interactive redis-cli in tmux: the hint after a command name comes from
// COMMAND DOCS.
TEST_F(RedisCli, InteractiveHintsComeFromCommandDocs) {
  const std::string socket = "holdfast-hints-" + std::to_string(::getpid());
  const std::vector<std::string> tmux = {"tmux", "-L", socket};
  auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = tmux;
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  ASSERT_EQ(with({"new-session", "-d", "-x", "200", "-y", "10",
                  std::string(REDIS_CLI_BIN) + " -p " + std::to_string(server.port())})
                .exit_code,
            0);
  // The terminal has no event to wait on: poll the screen for what should appear.
  auto screen_shows = [&](const std::string& text) {
    std::string screen;
    const auto deadline = std::chrono::steady_clock::now() + kEventually;
    while (screen.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
      screen = with({"capture-pane", "-p"}).out;
    }
    return screen;
  };
  const std::string prompt = "127.0.0.1:" + std::to_string(server.port()) + ">";
  screen_shows(prompt);  // keys typed before redis-cli reads the terminal would be lost
  with({"send-keys", "-l", "LOCK.TRY "});
  const std::string screen = screen_shows("TTL ms");
  with({"kill-server"});
  EXPECT_NE(screen.find("LOCK.TRY key TTL ms [OWNER owner] [SESSION]"), std::string::npos)
      << screen;
}

TEST(RedisCliAuth, PasswordAndUserOverBothProtocols) {
  AuthConfig config;
  ServerProcess server(config.flags());
  const std::string port = std::to_string(server.port());
  auto alice = run({REDIS_CLI_BIN, "-p", port, "--no-auth-warning", "-a", "alice-secret",
                    "LOCK.TRY", "user:alice:1", "TTL", "60000"});
  EXPECT_NE(alice.out.find("user:alice"), std::string::npos) << alice.out << alice.err;
  auto bob = run({REDIS_CLI_BIN, "-p", port, "-3", "--no-auth-warning", "--user", "bob", "--pass",
                  "bob-secret", "LOCK.STATUS", "user:alice:1"});
  EXPECT_NE(bob.out.find("heldBy user:alice"), std::string::npos) << bob.out << bob.err;
  auto wrong = run({REDIS_CLI_BIN, "-p", port, "--no-auth-warning", "-a", "nope", "PING"});
  EXPECT_NE((wrong.out + wrong.err).find("WRONGPASS"), std::string::npos) << wrong.out << wrong.err;
  auto bench =
      run({"redis-benchmark", "-p", port, "-a", "alice-secret", "-n", "500", "-q", "-t", "ping"});
  EXPECT_EQ(bench.err, "");
  EXPECT_NE(bench.out.find("PING_INLINE: "), std::string::npos) << bench.out;
}

}  // namespace
}  // namespace holdfast::testing
