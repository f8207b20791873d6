// redis-cli, unmodified, is a Holdfast client: RESP2, RESP3 (-3), TCP and the Unix socket.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace holdfast::testing
