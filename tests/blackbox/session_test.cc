// SESSION holds and waiters belong to their connection: a killed client frees them at once.
#include <signal.h>

#include <gtest/gtest.h>

#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class Sessions : public ::testing::Test {
 protected:
  ServerProcess server;
};

TEST_F(Sessions, ASessionHoldIsFreedWhenItsClientProcessIsKilled) {
  // redis-cli repeating the command keeps its connection (and so the session) open.
  Child cli = Child::start({REDIS_CLI_BIN, "-p", std::to_string(server.port()), "-r", "-1", "-i",
                            "60", "LOCK.TRY", "jobs:session", "TTL", "600000", "SESSION"});
  std::string line;
  ASSERT_TRUE(cli.read_line(&line));
  EXPECT_EQ(line, "key");
  auto watcher = server.client();
  auto status = watcher.call({"LOCK.STATUS", "jobs:session"});
  EXPECT_EQ(status.number("held"), 1);
  EXPECT_EQ(status.text("scope"), "session");

  auto waiter = server.client();
  // Its wait ends long before the ten-minute lease could: a grant means the kill freed the key.
  waiter.send(
      {"LOCK.ACQUIRE", "jobs:session", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
  cli.signal(SIGKILL);
  cli.wait();
  auto granted = waiter.read();
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_EQ(granted.text("key"), "jobs:session");
}

TEST_F(Sessions, AWaiterWhoseClientIsKilledLeavesTheQueue) {
  auto holder = server.client();
  auto h = holder.call({"LOCK.TRY", "k", "TTL", "60000"});
  Child cli = Child::start({REDIS_CLI_BIN, "-p", std::to_string(server.port()), "LOCK.ACQUIRE", "k",
                            "TTL", "1000", "TIMEOUT", "60000"});
  auto watcher = server.client();
  ASSERT_TRUE(await_waiters(watcher, "k", 1));
  cli.signal(SIGKILL);
  cli.wait();
  EXPECT_TRUE(await_waiters(watcher, "k", 0));
  // The released key goes to nobody: the dead waiter is not granted it.
  EXPECT_EQ(holder.call({"LOCK.RELEASE", "k", h.text("handle")}).number("released"), 1);
  EXPECT_EQ(watcher.call({"LOCK.STATUS", "k"}).number("held"), 0);
}

TEST_F(Sessions, ALeaseHoldOutlivesItsConnection) {
  {
    auto a = server.client();
    a.call({"LOCK.TRY", "k", "TTL", "60000"});
  }
  auto b = server.client();
  EXPECT_EQ(b.call({"LOCK.STATUS", "k"}).number("held"), 1);
}

}  // namespace
}  // namespace holdfast::testing
