// Grants closed after an unclean stop in the horizon durability mode (core/lock_table.h, step
// 5): nothing new is granted until the state's grants_closed_until, everything else goes on.
#include <gtest/gtest.h>

#include "table_fixture.h"

namespace holdfast::testing {
namespace {

class QuarantineTest : public TableTest {
 protected:
  static constexpr Millis kQuarantine = 5'000;

  // Restores a state with one live hold on "kept" (token 7) and grants closed for kQuarantine.
  HoldState restore_closed() {
    HoldState kept;
    kept.key = "kept";
    kept.handle = HandleSource().next();
    kept.owner = "w1";
    kept.token = 7;
    kept.held_by = "user:alice";
    kept.acquired_at = now();
    kept.lease_expires_at = now() + 60'000;
    DurableState state;
    state.last_token = 100;
    state.holds.push_back(kept);
    state.grants_closed_until = now() + kQuarantine;
    table.restore(state, now());
    return kept;
  }
};

TEST_F(QuarantineTest, ATryOnAFreeKeyIsContendedUntilTheQuarantineEnds) {
  restore_closed();
  auto out = table.acquire(req("free"), now());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->kind, AcquireOutcome::Kind::kContended);
  EXPECT_FALSE(table.status("free", now())->held);
  EXPECT_EQ(table.grants_closed_until(), now() + kQuarantine);
  tick(kQuarantine);
  EXPECT_EQ(table.grants_closed_until(), 0);
  EXPECT_EQ(take("free").token, 101u);  // above the recovered reservation
}

TEST_F(QuarantineTest, ABlockingAcquireWaitsAndIsGrantedWhenTheQuarantineEnds) {
  restore_closed();
  const WaiterId w = wait("free", 60'000);
  tick(kQuarantine - 1);
  EXPECT_FALSE(table.has_outcomes());
  EXPECT_EQ(table.next_deadline(), now() + 1);
  tick(1);
  auto outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].waiter, w);
  EXPECT_TRUE(outcomes[0].granted);
  EXPECT_EQ(outcomes[0].hold.token, 101u);
}

TEST_F(QuarantineTest, AWaiterWhoseTimeoutComesFirstTimesOut) {
  restore_closed();
  wait("free", 1'000);
  tick(1'000);
  auto outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].granted);
}

TEST_F(QuarantineTest, ARecoveredHoldRenewsAndReleasesButIsNotHandedOn) {
  const HoldState kept = restore_closed();
  const std::string handle = kept.handle.to_string();
  wait("kept", 60'000);
  EXPECT_TRUE(table.renew("kept", handle, 30'000, now())->renewed);
  EXPECT_TRUE(table.release("kept", handle, now())->released);
  EXPECT_FALSE(table.has_outcomes());  // freed, but nobody gets it yet
  EXPECT_FALSE(table.status("kept", now())->held);
  tick(kQuarantine);
  auto outcomes = table.take_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].granted);
}

TEST_F(QuarantineTest, ReTakeAndTransferAreNotGranted) {
  restore_closed();
  AcquireRequest retake = req("kept");
  retake.owner = "w1";  // would re-take it while granting
  EXPECT_EQ(table.acquire(retake, now())->kind, AcquireOutcome::Kind::kContended);
  auto moved = table.transfer("kept", "b", "a", "user:alice", now());
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().code, ErrorCode::kUnavailable);
}

TEST_F(QuarantineTest, AnAssignWithoutTimeoutMeetsAFreeKeyAsHeld) {
  restore_closed();
  AssignRequest r;
  r.key = "turn";
  r.holder_id = "white";
  r.held_by = "user:game";
  auto out = table.assign(r, now());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kLockHeld);
  tick(kQuarantine);
  EXPECT_EQ(table.assign(r, now())->kind, AcquireOutcome::Kind::kGranted);
}

TEST_F(QuarantineTest, AQuarantineThatEndedBeforeTheRestoreClosesNothing) {
  DurableState state;
  state.grants_closed_until = now();
  table.restore(state, now());
  EXPECT_EQ(table.grants_closed_until(), 0);
  take("free");
}

}  // namespace
}  // namespace holdfast::testing
