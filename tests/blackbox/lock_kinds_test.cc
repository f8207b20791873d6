// Shared locks and semaphores over RESP (docs/lock-kinds.md), against the real server. A node
// over PostgreSQL does not have them yet: there every mode request must answer that precisely
// and change nothing.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class LockKinds : public ::testing::Test {
 protected:
  ServerProcess server{{"--fsync", "always"}};
  RespClient c = server.client();
  bool over_postgres() const { return !server.store_url().empty(); }
};

constexpr const char* kNotOnPostgres =
    "INVALID_ARGUMENT shared and semaphore modes are not supported on a node over PostgreSQL yet";

TEST_F(LockKinds, SharedHoldersEachGetAHandleAndStatusListsThem) {
  auto a = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  if (over_postgres()) {
    EXPECT_EQ(a.str, kNotOnPostgres);
    EXPECT_EQ(c.call({"LOCK.STATUS", "doc"}).number("held"), 0);
    return;
  }
  ASSERT_FALSE(a.is_error()) << a.debug();
  EXPECT_EQ(a.text("mode"), "shared");
  auto b = c.call({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "0", "MODE", "shared"});
  ASSERT_FALSE(b.is_error()) << b.debug();
  EXPECT_NE(a.text("handle"), b.text("handle"));
  EXPECT_GT(b.number("token"), a.number("token"));
  // An exclusive try is contended while readers hold the key.
  EXPECT_TRUE(c.call({"LOCK.TRY", "doc", "TTL", "60000"}).is_null());
  auto s = c.call({"LOCK.STATUS", "doc"});
  EXPECT_EQ(s.number("held"), 1);
  EXPECT_EQ(s.text("mode"), "shared");
  const RespValue* holders = s.get("holders");
  ASSERT_NE(holders, nullptr);
  ASSERT_EQ(holders->items.size(), 2u) << s.debug();
  EXPECT_FALSE(holders->items[0].has("handle"));
  EXPECT_EQ(holders->items[0].number("token"), a.number("token"));
  // Each releases its own hold.
  auto r = c.call({"LOCK.RELEASE", "doc", a.text("handle")});
  EXPECT_EQ(r.number("released"), 1);
  EXPECT_EQ(c.call({"LOCK.STATUS", "doc"}).get("holders")->items.size(), 1u);
}

TEST_F(LockKinds, AWaitingWriterGoesBeforeLaterReaders) {
  if (over_postgres()) GTEST_SKIP() << "modes are refused on a node (checked above)";
  auto reader = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  ASSERT_FALSE(reader.is_error()) << reader.debug();
  auto writer = server.client();
  writer.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "10000"});
  ASSERT_TRUE(await_waiters(c, "doc", 1));
  // A later reader does not overtake the waiting writer.
  EXPECT_TRUE(c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"}).is_null());
  ASSERT_EQ(c.call({"LOCK.RELEASE", "doc", reader.text("handle")}).number("released"), 1);
  auto granted = writer.read();
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_FALSE(granted.has("mode"));  // an exclusive hold's reply is as it always was
  EXPECT_GT(granted.number("token"), reader.number("token"));
}

TEST_F(LockKinds, SemaphoreCountsPermitsAndRefusesAnotherLimit) {
  auto a = c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3", "TAKE", "2"});
  if (over_postgres()) {
    EXPECT_EQ(a.str, kNotOnPostgres);
    return;
  }
  ASSERT_FALSE(a.is_error()) << a.debug();
  EXPECT_EQ(a.text("mode"), "semaphore");
  EXPECT_EQ(a.number("permits"), 2);
  EXPECT_EQ(a.number("limit"), 3);
  ASSERT_FALSE(c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  EXPECT_TRUE(c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  auto s = c.call({"LOCK.STATUS", "pool"});
  EXPECT_EQ(s.number("permits"), 3);
  EXPECT_EQ(s.number("freePermits"), 0);
  EXPECT_EQ(s.get("holders")->items.size(), 2u);
  EXPECT_EQ(c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "4"}).str,
            "INVALID_ARGUMENT the key is a semaphore of 3 permits, not 4 key=pool");
  EXPECT_EQ(c.call({"LOCK.TRY", "pool", "TTL", "60000"}).error_code(), "INVALID_ARGUMENT");
  EXPECT_EQ(c.call({"LOCK.STATUS", "pool"}).get("holders")->items.size(), 2u);
}

TEST_F(LockKinds, BadModeOptionsArePreciseErrors) {
  EXPECT_EQ(c.call({"LOCK.TRY", "k", "TTL", "1000", "MODE", "READ"}).str,
            "INVALID_ARGUMENT MODE must be SHARED or EXCLUSIVE");
  EXPECT_EQ(c.call({"LOCK.TRY", "k", "TTL", "1000", "TAKE", "2"}).str,
            "INVALID_ARGUMENT TAKE needs PERMITS");
  EXPECT_EQ(c.call({"LOCK.TRY", "k", "TTL", "1000", "PERMITS", "2", "MODE", "SHARED"}).str,
            "INVALID_ARGUMENT PERMITS makes a semaphore; it cannot go with MODE");
  EXPECT_EQ(c.call({"LOCK.TRY", "k", "TTL", "1000", "PERMITS", "0"}).str,
            "INVALID_ARGUMENT PERMITS must be a positive integer");
  EXPECT_EQ(c.call({"LOCK.TRY", "k", "TTL", "1000", "PERMITS", "2", "TAKE", "3"}).str,
            "INVALID_ARGUMENT a grant takes 1 to 2 permits (the semaphore's PERMITS), not 3");
  EXPECT_EQ(c.call({"LOCK.STATUS", "k"}).number("held"), 0);
  // MODE EXCLUSIVE is the plain lock, on every backend.
  auto x = c.call({"LOCK.TRY", "k", "TTL", "1000", "MODE", "EXCLUSIVE"});
  ASSERT_FALSE(x.is_error()) << x.debug();
  EXPECT_FALSE(x.has("mode"));
}

TEST_F(LockKinds, SharedAndSemaphoreHoldsSurviveKillNine) {
  if (over_postgres()) GTEST_SKIP() << "modes are refused on a node (checked above)";
  auto a = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  auto b = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  auto p = c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "5", "TAKE", "4"});
  ASSERT_FALSE(a.is_error() || b.is_error() || p.is_error()) << p.debug();
  server.kill9();
  server.start();
  RespClient again = server.client();
  auto s = again.call({"LOCK.STATUS", "doc"});
  ASSERT_EQ(s.get("holders")->items.size(), 2u) << s.debug();
  EXPECT_EQ(s.get("holders")->items[1].number("token"), b.number("token"));
  auto pool = again.call({"LOCK.STATUS", "pool"});
  EXPECT_EQ(pool.number("freePermits"), 1);
  // The handles still work after the restart, and the next token is larger.
  EXPECT_EQ(again.call({"LOCK.RELEASE", "doc", a.text("handle")}).number("released"), 1);
  auto c2 = again.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  EXPECT_GT(c2.number("token"), p.number("token"));
}

}  // namespace
}  // namespace holdfast::testing
