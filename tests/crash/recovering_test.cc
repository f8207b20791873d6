// After kill -9 in the horizon durability mode: the quarantine is visible everywhere a client
// or an operator looks (/readyz, INFO, HELLO, /metrics), nothing new is granted
// until it ends, blocking acquires wait for its end, and a clean stop needs none.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "support/eventually.h"
#include "support/server_process.h"
#include "support/wall_time.h"

namespace holdfast::testing {
namespace {

// Long enough that everything the test does between the restart and the end of the quarantine
// (a dozen calls, two curl processes) fits in it on a machine busy with other builds.
constexpr std::int64_t kLeaseMs = 8'000;

struct Killed {
  std::vector<std::string> handles;
  std::int64_t last_lease_end = 0;  // the latest leaseExpiresAt answered
};

// Takes a few keys with kLeaseMs leases (answered ahead of the disk) and kills the server once
// the log has them.
Killed hold_and_kill(ServerProcess& server) {
  auto c = server.client();
  Killed killed;
  for (int i = 0; i < 5; ++i) {
    RespValue hold =
        c.call({"LOCK.TRY", "job:" + std::to_string(i), "TTL", std::to_string(kLeaseMs)});
    EXPECT_FALSE(hold.is_null());
    killed.handles.push_back(hold.text("handle"));
    killed.last_lease_end = std::max(killed.last_lease_end, hold.number("leaseExpiresAt"));
  }
  // The grants were answered ahead of the disk. An assignment without a lease waits for it, and
  // the log is written in order: once it is answered, the grants are on disk too (killed
  // sooner, the restart could find them gone, which the quarantine covers, but this test looks
  // at the holds it restored).
  EXPECT_FALSE(c.call({"LOCK.ASSIGN", "barrier", "worker"}).is_error());
  server.kill9();
  return killed;
}

TEST(Recovering, AfterKill9NothingIsGrantedUntilTheHorizonAndEveryoneCanSeeIt) {
  ServerProcess server({"--fsync", "horizon"});
  const Killed killed = hold_and_kill(server);
  const std::vector<std::string>& handles = killed.handles;
  server.start();
  const std::int64_t restarted_by = wall_ms();
  auto c = server.client();

  const std::string info = c.call({"INFO", "holdfast"}).str;
  ASSERT_NE(info.find("recovering:1"), std::string::npos) << info;
  const std::size_t at = info.find("recovering_until_ms:");
  ASSERT_NE(at, std::string::npos);
  const std::int64_t until = std::stoll(info.substr(at + 20));
  // Every acknowledged lease ends by then, and the wait is no longer than it needs to be: at
  // most the longest lease from the restart (docs/horizon.md, "After a crash").
  EXPECT_GE(until, killed.last_lease_end);
  EXPECT_LE(until, restarted_by + kLeaseMs);

  const std::string ready = http_get(server, "/readyz");
  EXPECT_NE(ready.find("503"), std::string::npos) << ready;
  EXPECT_NE(ready.find("recoveringUntil"), std::string::npos) << ready;
  EXPECT_NE(ready.find(std::to_string(until)), std::string::npos) << ready;
  EXPECT_EQ(c.call({"HELLO", "3"}).number("recoveringUntil"), until);
  EXPECT_NE(http_get(server, "/metrics").find("\nholdfast_recovering_until_seconds 1"),
            std::string::npos);

  // A try on a key nobody holds answers nil; the recovered holds renew and release.
  EXPECT_TRUE(c.call({"LOCK.TRY", "free", "TTL", "1000"}).is_null());
  EXPECT_EQ(c.call({"LOCK.STATUS", "job:0"}).number("held"), 1);
  EXPECT_EQ(c.call({"LOCK.RENEW", "job:0", handles[0], "TTL", "1000"}).number("renewed"), 1);
  EXPECT_EQ(c.call({"LOCK.RELEASE", "job:1", handles[1]}).number("released"), 1);

  // A blocking acquire of the released key waits for the end of the quarantine.
  auto waiter = server.client();
  RespValue granted = waiter.call(
      {"LOCK.ACQUIRE", "job:1", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
  ASSERT_FALSE(granted.is_error()) << granted.str;
  EXPECT_GE(wall_ms(), until);
  EXPECT_GE(granted.number("acquiredAt"), until);
  EXPECT_NE(http_get(server, "/readyz").find("200"), std::string::npos);
  EXPECT_NE(c.call({"INFO", "holdfast"}).str.find("recovering:0"), std::string::npos);
  EXPECT_FALSE(c.call({"LOCK.TRY", "free", "TTL", "1000"}).is_null());
}

TEST(Recovering, ACleanStopNeedsNoQuarantine) {
  ServerProcess server({"--fsync", "horizon"});
  {
    auto c = server.client();
    ASSERT_FALSE(c.call({"LOCK.TRY", "job", "TTL", "60000"}).is_null());
  }
  server.restart();  // SIGTERM, then start
  auto c = server.client();
  EXPECT_NE(c.call({"INFO", "holdfast"}).str.find("recovering:0"), std::string::npos);
  EXPECT_EQ(c.call({"LOCK.STATUS", "job"}).number("held"), 1);
  EXPECT_FALSE(c.call({"LOCK.TRY", "other", "TTL", "1000"}).is_null());
}

}  // namespace
}  // namespace holdfast::testing
