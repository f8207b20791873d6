// Shared locks and semaphores over RESP (docs/lock-kinds.md), against the real server: the
// embedded one and, under run_with_postgres.sh, a node over PostgreSQL, with the same answers.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class LockKinds : public ::testing::Test {
 protected:
  ServerProcess server{{"--fsync", "always"}};
  RespClient c = server.client();
};

TEST_F(LockKinds, SharedHoldersEachGetAHandleAndStatusListsThem) {
  auto a = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
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
  ASSERT_FALSE(a.is_error()) << a.debug();
  EXPECT_EQ(a.text("mode"), "semaphore");
  EXPECT_EQ(a.number("take"), 2);
  EXPECT_EQ(a.number("permits"), 3);
  ASSERT_FALSE(c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  EXPECT_TRUE(c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  auto s = c.call({"LOCK.STATUS", "pool"});
  EXPECT_EQ(s.number("permits"), 3);
  EXPECT_EQ(s.number("freePermits"), 0);
  EXPECT_EQ(s.get("holders")->items.size(), 2u);
  EXPECT_EQ(c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "4"}).str,
            "INVALID_ARGUMENT the key is a semaphore of 3 permits, not 4 key=pool");
  EXPECT_EQ(c.call({"LOCK.TRY", "pool", "TTL", "60000"}).str,
            "INVALID_ARGUMENT the key is a semaphore of 3 permits; acquire it with PERMITS 3 "
            "key=pool");
  EXPECT_EQ(c.call({"LOCK.TRY", "pool", "TTL", "60000", "MODE", "SHARED"}).str,
            "INVALID_ARGUMENT the key is a semaphore of 3 permits; acquire it with PERMITS 3 "
            "key=pool");
  EXPECT_EQ(c.call({"LOCK.STATUS", "pool"}).get("holders")->items.size(), 2u);
  // And a lock key refuses permits.
  ASSERT_FALSE(c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"}).is_null());
  EXPECT_EQ(c.call({"LOCK.TRY", "doc", "TTL", "60000", "PERMITS", "2"}).str,
            "INVALID_ARGUMENT the key is a lock; it cannot be acquired as a semaphore key=doc");
}

TEST_F(LockKinds, ConsecutiveSharedWaitersAreGrantedTogetherAndAWriterStopsTheRest) {
  auto writer = c.call({"LOCK.TRY", "doc", "TTL", "60000"});
  ASSERT_FALSE(writer.is_null()) << writer.debug();
  auto r1 = server.client();
  auto r2 = server.client();
  auto w2 = server.client();
  auto r3 = server.client();
  r1.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "20000", "MODE", "SHARED"});
  ASSERT_TRUE(await_waiters(c, "doc", 1));
  r2.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "20000", "MODE", "SHARED"});
  ASSERT_TRUE(await_waiters(c, "doc", 2));
  w2.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "20000"});
  ASSERT_TRUE(await_waiters(c, "doc", 3));
  r3.send({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "20000", "MODE", "SHARED"});
  ASSERT_TRUE(await_waiters(c, "doc", 4));
  ASSERT_EQ(c.call({"LOCK.RELEASE", "doc", writer.text("handle")}).number("released"), 1);
  auto g1 = r1.read();
  auto g2 = r2.read();
  ASSERT_FALSE(g1.is_error() || g2.is_error()) << g1.debug() << g2.debug();
  EXPECT_EQ(g1.text("mode"), "shared");
  EXPECT_GT(g2.number("token"), g1.number("token"));
  // The waiting writer holds back the reader behind it.
  ASSERT_TRUE(await_waiters(c, "doc", 2));
  auto s = c.call({"LOCK.STATUS", "doc"});
  EXPECT_EQ(s.get("holders")->items.size(), 2u) << s.debug();
  ASSERT_EQ(c.call({"LOCK.RELEASE", "doc", g1.text("handle")}).number("released"), 1);
  ASSERT_EQ(c.call({"LOCK.RELEASE", "doc", g2.text("handle")}).number("released"), 1);
  auto gw = w2.read();
  ASSERT_FALSE(gw.is_error()) << gw.debug();
  EXPECT_FALSE(gw.has("mode"));
  EXPECT_GT(gw.number("token"), g2.number("token"));
  ASSERT_EQ(c.call({"LOCK.RELEASE", "doc", gw.text("handle")}).number("released"), 1);
  auto g3 = r3.read();
  ASSERT_FALSE(g3.is_error()) << g3.debug();
  EXPECT_GT(g3.number("token"), gw.number("token"));
}

TEST_F(LockKinds, ASemaphoreRequestIsNotOvertakenBySmallerOnes) {
  auto a = c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3", "TAKE", "2"});
  ASSERT_FALSE(a.is_null() || a.is_error()) << a.debug();
  auto big = server.client();
  big.send(
      {"LOCK.ACQUIRE", "pool", "TTL", "60000", "TIMEOUT", "20000", "PERMITS", "3", "TAKE", "2"});
  ASSERT_TRUE(await_waiters(c, "pool", 1));
  // One permit is free, but a request for it would overtake the waiting one.
  EXPECT_TRUE(c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
  EXPECT_EQ(c.call({"LOCK.STATUS", "pool"}).number("freePermits"), 1);
  ASSERT_EQ(c.call({"LOCK.RELEASE", "pool", a.text("handle")}).number("released"), 1);
  auto granted = big.read();
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_EQ(granted.number("take"), 2);
  auto s = c.call({"LOCK.STATUS", "pool"});
  EXPECT_EQ(s.number("freePermits"), 1);
  EXPECT_EQ(s.get("holders")->items.size(), 1u);
  EXPECT_FALSE(c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3"}).is_null());
}

TEST_F(LockKinds, ReTakeByOwnerWorksPerMode) {
  auto a = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED", "OWNER", "run-1"});
  ASSERT_FALSE(a.is_null() || a.is_error()) << a.debug();
  auto again = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED", "OWNER", "run-1"});
  ASSERT_FALSE(again.is_null() || again.is_error()) << again.debug();
  EXPECT_NE(again.text("handle"), a.text("handle"));
  EXPECT_GT(again.number("token"), a.number("token"));
  EXPECT_EQ(c.call({"LOCK.STATUS", "doc"}).get("holders")->items.size(), 1u);
  EXPECT_EQ(c.call({"LOCK.RELEASE", "doc", a.text("handle")}).number("released"), 0)
      << "the re-taken hold's handle is fenced";
  // The same owner asking exclusively is no re-take: there is no upgrade.
  EXPECT_TRUE(c.call({"LOCK.TRY", "doc", "TTL", "60000", "OWNER", "run-1"}).is_null());
  // A semaphore re-take for fewer permits gives the rest back.
  auto p = c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3", "TAKE", "3", "OWNER", "o"});
  ASSERT_FALSE(p.is_null() || p.is_error()) << p.debug();
  auto q = c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "3", "TAKE", "1", "OWNER", "o"});
  ASSERT_FALSE(q.is_null() || q.is_error()) << q.debug();
  EXPECT_EQ(c.call({"LOCK.STATUS", "pool"}).number("freePermits"), 2);
}

TEST_F(LockKinds, RenewAndSessionEndActOnOneHoldOfTheGroup) {
  auto a = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  ASSERT_FALSE(a.is_error() || a.is_null()) << a.debug();
  {
    auto other = server.client();
    auto b = other.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED", "SESSION"});
    ASSERT_FALSE(b.is_error() || b.is_null()) << b.debug();
    auto renewed = c.call({"LOCK.RENEW", "doc", a.text("handle"), "TTL", "120000"});
    EXPECT_EQ(renewed.number("renewed"), 1) << renewed.debug();
  }  // the connection closes
  // The session hold goes with its connection; the other hold stays.
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  std::size_t holders = 2;
  while (holders != 1 && std::chrono::steady_clock::now() < deadline) {
    holders = c.call({"LOCK.STATUS", "doc"}).get("holders")->items.size();
    if (holders != 1) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(holders, 1u);
  EXPECT_EQ(c.call({"LOCK.STATUS", "doc"}).get("holders")->items[0].number("token"),
            a.number("token"));
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

TEST_F(LockKinds, PexpireAndDelActOnEveryHoldOfTheKey) {
  auto a = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  auto b = c.call({"LOCK.TRY", "doc", "TTL", "120000", "MODE", "SHARED"});
  ASSERT_FALSE(a.is_null() || b.is_null() || a.is_error() || b.is_error()) << b.debug();
  EXPECT_EQ(c.call({"EXISTS", "doc"}).integer, 1);
  EXPECT_EQ(c.call({"PEXPIRE", "doc", "30000"}).integer, 1);
  auto s = c.call({"LOCK.STATUS", "doc"});
  const auto& holders = s.get("holders")->items;
  ASSERT_EQ(holders.size(), 2u) << s.debug();
  EXPECT_EQ(holders[0].number("leaseExpiresAt"), holders[1].number("leaseExpiresAt"));
  EXPECT_LT(holders[1].number("leaseExpiresAt"), b.number("leaseExpiresAt"));
  auto p = c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "2", "TAKE", "2"});
  ASSERT_FALSE(p.is_null() || p.is_error()) << p.debug();
  EXPECT_EQ(c.call({"DEL", "doc", "pool"}).integer, 2);
  EXPECT_EQ(c.call({"LOCK.STATUS", "doc"}).number("held"), 0);
  EXPECT_EQ(c.call({"EXISTS", "doc", "pool"}).integer, 0);
  EXPECT_EQ(c.call({"LOCK.RELEASE", "doc", a.text("handle")}).number("released"), 0);
  // Freed as a whole, the key is a lock again for anyone.
  EXPECT_FALSE(c.call({"LOCK.TRY", "pool", "TTL", "60000"}).is_null());
}

TEST_F(LockKinds, ListHolderAndAssignedHoldCommandsOnASharedOrSemaphoreKey) {
  auto a = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  auto b = c.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  auto p = c.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "2"});
  ASSERT_FALSE(a.is_null() || b.is_null() || p.is_null()) << p.debug();
  // LIST shows each hold, without handles.
  auto page = c.call({"LOCK.LIST"});
  ASSERT_EQ(page.items.size(), 2u) << page.debug();
  ASSERT_EQ(page.items[1].items.size(), 3u) << page.debug();
  EXPECT_EQ(page.items[1].items[0].number("token"), a.number("token"));
  EXPECT_EQ(page.items[1].items[1].number("token"), b.number("token"));
  EXPECT_EQ(page.items[1].items[2].text("mode"), "semaphore");
  EXPECT_FALSE(page.items[1].items[0].has("handle"));
  // HOLDER shows the newest hold.
  auto h = c.call({"LOCK.HOLDER", "doc"});
  EXPECT_EQ(h.number("held"), 1);
  EXPECT_EQ(h.number("token"), b.number("token"));
  // Assigned-hold commands: a semaphore is the wrong kind; a shared key is held, not assigned.
  EXPECT_EQ(c.call({"LOCK.ASSIGN", "pool", "white"}).str,
            "INVALID_ARGUMENT the key is a semaphore of 2 permits; acquire it with PERMITS 2 "
            "key=pool");
  EXPECT_EQ(c.call({"LOCK.ASSIGN", "doc", "white"}).error_code(), "LOCK_HELD");
  EXPECT_EQ(c.call({"LOCK.UNASSIGN", "doc"}).str,
            "LOCK_NOT_HOLDER the key is held in shared or semaphore mode, not assigned key=doc");
  EXPECT_EQ(c.call({"LOCK.TRANSFER", "doc", "black", "FROM", "white"}).str,
            "LOCK_NOT_HOLDER the key is held in shared or semaphore mode, not assigned key=doc");
  EXPECT_EQ(c.call({"LOCK.STATUS", "doc"}).get("holders")->items.size(), 2u);
}

// With --fsync always on the embedded server; over PostgreSQL the holds are rows that outlive
// the node.
TEST_F(LockKinds, SharedAndSemaphoreHoldsSurviveKillNine) {
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
