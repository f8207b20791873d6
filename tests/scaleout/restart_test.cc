// A database restart (what a failover looks like to the nodes): while it is down, calls answer
// UNAVAILABLE and nothing hangs; when it is back, the pools reconnect on the next call, the
// LISTEN connections reconnect by themselves, and holds committed before are all there.
#include <gtest/gtest.h>

#include "support/eventually.h"
#include "support/postgres.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

TEST(DatabaseRestart, NodesAnswerUnavailableMeanwhileAndCarryOnAfterwards) {
  TestPostgres pg;  // its own: this test stops it
  const std::string url = fresh_store_url(pg.url());
  ServerProcess one({"--store", url});
  ServerProcess two({"--store", url});
  auto a = one.client();
  auto hold = a.call({"LOCK.TRY", "k", "TTL", "600000"});
  ASSERT_FALSE(hold.is_null());

  // Calls fail rather than hang (the client's wait for a reply is what a hang would run into).
  pg.stop();
  auto refused = a.call({"LOCK.TRY", "other", "TTL", "1000"});
  EXPECT_EQ(refused.error_code(), "UNAVAILABLE") << refused.debug();
  EXPECT_EQ(two.client().call({"LOCK.STATUS", "k"}).error_code(), "UNAVAILABLE");

  pg.start_again();
  auto b = two.client();
  auto status = b.call({"LOCK.STATUS", "k"});
  EXPECT_EQ(status.number("held"), 1) << status.debug();
  EXPECT_EQ(status.number("token"), hold.number("token"));
  // Tokens go on from where they were.
  auto next = a.call({"LOCK.TRY", "after", "TTL", "1000"});
  ASSERT_FALSE(next.is_error()) << next.debug();
  EXPECT_GT(next.number("token"), hold.number("token"));

  // A waiter on node two is woken by a release on node one: by the notification once node
  // two's LISTEN connection is back (it reconnects within a second), else by its periodic check.
  // The hold's lease (10 minutes) is far off: a grant at all means node two saw the release.
  b.send({"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
  auto watcher = two.client();
  ASSERT_TRUE(await_waiters(watcher, "k", 1)) << two.drain_output();
  ASSERT_EQ(a.call({"LOCK.RELEASE", "k", hold.text("handle")}).number("released"), 1);
  auto granted = b.read();
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_GT(granted.number("token"), next.number("token"));
}

}  // namespace
}  // namespace holdfast::testing
