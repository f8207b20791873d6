// The data dir belongs to one server at a time; what it holds survives a clean restart too.
#include <gtest/gtest.h>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

TEST(DataDir, ASecondServerOnTheSameDataDirRefusesToStart) {
  ServerProcess first;
  auto r = run({HOLDFAST_BIN, "serve", "--data-dir", first.data_dir(), "--listen", "127.0.0.1:0", "--http", "",
                "--unix", first.data_dir() + "/second.sock"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("is in use by another holdfast server"), std::string::npos) << r.err;
  EXPECT_EQ(first.client().call({"PING"}).str, "PONG");
}

TEST(DataDir, HoldsSurviveAGracefulRestartWithTheirHandlesAndTokens) {
  ServerProcess server;
  auto hold = server.client().call({"LOCK.TRY", "k", "TTL", "600000", "OWNER", "run-1"});
  EXPECT_EQ(server.stop(), 0);
  server.start();
  auto c = server.client();
  auto status = c.call({"LOCK.STATUS", "k"});
  EXPECT_EQ(status.number("token"), hold.number("token"));
  EXPECT_EQ(status.text("owner"), "run-1");
  EXPECT_EQ(status.number("leaseExpiresAt"), hold.number("leaseExpiresAt"));
  EXPECT_GT(c.call({"LOCK.TRY", "other", "TTL", "1000"}).number("token"), hold.number("token"));
  EXPECT_EQ(c.call({"LOCK.RELEASE", "k", hold.text("handle")}).number("released"), 1);
}

TEST(DataDir, SessionHoldsDoNotSurviveARestart) {
  ServerProcess server;
  auto c = server.client();
  c.call({"LOCK.TRY", "s", "TTL", "600000", "SESSION"});
  server.kill9();
  server.start();
  EXPECT_EQ(server.client().call({"LOCK.STATUS", "s"}).number("held"), 0);
}

}  // namespace
}  // namespace holdfast::testing
