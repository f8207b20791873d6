// Assigned holds over RESP, one check per sentence of docs/reference.md section 8, "Assigned
// holds".
#include <gtest/gtest.h>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class AssignedHolds : public ::testing::Test {
 protected:
  ServerProcess server;
  RespClient c = server.client();
};

TEST_F(AssignedHolds, HeldByIsWhoAssignedAndHolderIsTheHolderIdAlsoInStatus) {
  auto a = c.call({"LOCK.ASSIGN", "turn", "white", "TTL", "60000"});
  ASSERT_FALSE(a.is_error()) << a.debug();
  for (const char* f : {"key", "holder", "token", "heldBy", "acquiredAt", "leaseExpiresAt"})
    EXPECT_TRUE(a.has(f)) << f;
  EXPECT_FALSE(a.has("handle"));
  EXPECT_EQ(a.text("holder"), "white");
  EXPECT_EQ(a.text("heldBy"), "user:local");
  auto s = c.call({"LOCK.STATUS", "turn"});
  EXPECT_EQ(s.number("held"), 1);
  EXPECT_EQ(s.text("kind"), "assigned");
  EXPECT_EQ(s.text("holder"), "white");
  EXPECT_EQ(s.text("heldBy"), "user:local");
  EXPECT_EQ(s.number("token"), a.number("token"));
}

TEST_F(AssignedHolds, HolderOfAKeyHeldByAHandleIsNullWithHeldTrue) {
  ASSERT_FALSE(c.call({"LOCK.TRY", "k", "TTL", "60000"}).is_null());
  auto h = c.call({"LOCK.HOLDER", "k"});
  ASSERT_TRUE(h.has("holder"));
  EXPECT_TRUE(h.get("holder")->is_null()) << h.debug();
  EXPECT_EQ(h.number("held"), 1);
}

TEST_F(AssignedHolds, WithoutTimeoutOneAttemptIsLockHeldWhoeverHoldsTheKey) {
  ASSERT_FALSE(c.call({"LOCK.TRY", "by-handle", "TTL", "60000"}).is_null());
  EXPECT_EQ(c.call({"LOCK.ASSIGN", "by-handle", "white"}).error_code(), "LOCK_HELD");
  ASSERT_FALSE(c.call({"LOCK.ASSIGN", "by-holder", "white"}).is_error());
  EXPECT_EQ(c.call({"LOCK.ASSIGN", "by-holder", "black"}).error_code(), "LOCK_HELD");
}

TEST_F(AssignedHolds, WithTimeoutItWaitsInTheFifoQueueAndEndsInLockTimeout) {
  ASSERT_FALSE(c.call({"LOCK.ASSIGN", "turn", "white"}).is_error());
  EXPECT_EQ(c.call({"LOCK.ASSIGN", "turn", "black", "TIMEOUT", "0"}).str,
            "LOCK_TIMEOUT no grant within the timeout key=turn timeoutMs=0");
  EXPECT_EQ(c.call({"LOCK.ASSIGN", "turn", "black", "TIMEOUT", "100"}).str,
            "LOCK_TIMEOUT no grant within the timeout key=turn timeoutMs=100");

  // Two waiters, served in the order they came.
  auto first = server.client();
  auto second = server.client();
  first.send({"LOCK.ASSIGN", "turn", "black", "TIMEOUT", "10000"});
  ASSERT_TRUE(await_waiters(c, "turn", 1));
  second.send({"LOCK.ASSIGN", "turn", "green", "TIMEOUT", "10000"});
  ASSERT_TRUE(await_waiters(c, "turn", 2));
  EXPECT_EQ(c.call({"LOCK.UNASSIGN", "turn", "white"}).number("released"), 1);
  EXPECT_EQ(first.read().text("holder"), "black");
  EXPECT_EQ(c.call({"LOCK.UNASSIGN", "turn", "black"}).number("released"), 1);
  EXPECT_EQ(second.read().text("holder"), "green");
}

TEST_F(AssignedHolds, ATryAcquireOnAnAssignedKeyAnswersNil) {
  ASSERT_FALSE(c.call({"LOCK.ASSIGN", "turn", "white"}).is_error());
  EXPECT_TRUE(c.call({"LOCK.TRY", "turn", "TTL", "1000"}).is_null());
}

TEST_F(AssignedHolds, ReassigningToTheSameHolderRefreshesTheLeaseAndKeepsTheToken) {
  auto a = c.call({"LOCK.ASSIGN", "turn", "white", "TTL", "60000"});
  auto again = c.call({"LOCK.ASSIGN", "turn", "white", "TTL", "120000"});
  ASSERT_FALSE(again.is_error()) << again.debug();
  EXPECT_EQ(again.number("token"), a.number("token"));
  EXPECT_GE(again.number("leaseExpiresAt"), a.number("leaseExpiresAt") + 60000);
  auto forever = c.call({"LOCK.ASSIGN", "turn", "white"});  // no TTL: no expiry
  EXPECT_EQ(forever.number("token"), a.number("token"));
  ASSERT_TRUE(forever.has("leaseExpiresAt"));
  EXPECT_TRUE(forever.get("leaseExpiresAt")->is_null()) << forever.debug();
}

TEST_F(AssignedHolds, UnassignByAnotherHolderIsNotHolderAndOfAFreeKeyReleasesNothing) {
  ASSERT_FALSE(c.call({"LOCK.ASSIGN", "turn", "white"}).is_error());
  EXPECT_EQ(c.call({"LOCK.UNASSIGN", "turn", "black"}).error_code(), "LOCK_NOT_HOLDER");
  EXPECT_EQ(c.call({"LOCK.STATUS", "turn"}).text("holder"), "white");
  EXPECT_EQ(c.call({"LOCK.UNASSIGN", "turn"}).number("released"), 1);
  EXPECT_EQ(c.call({"LOCK.UNASSIGN", "turn"}).number("released"), 0);
  EXPECT_EQ(c.call({"LOCK.UNASSIGN", "never-held"}).number("released"), 0);
}

TEST_F(AssignedHolds, TransferMovesTheHoldWithANewTokenOnlyFromTheCurrentHolder) {
  auto a = c.call({"LOCK.ASSIGN", "turn", "white"});
  EXPECT_EQ(c.call({"LOCK.TRANSFER", "turn", "green", "FROM", "black"}).error_code(),
            "LOCK_NOT_HOLDER");
  auto t = c.call({"LOCK.TRANSFER", "turn", "black", "FROM", "white"});
  ASSERT_FALSE(t.is_error()) << t.debug();
  EXPECT_EQ(t.text("holder"), "black");
  EXPECT_GT(t.number("token"), a.number("token"));
  EXPECT_EQ(c.call({"LOCK.HOLDER", "turn"}).text("holder"), "black");
}

}  // namespace
}  // namespace holdfast::testing
