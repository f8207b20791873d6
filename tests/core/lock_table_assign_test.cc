// Identity-aware holds: assign, transfer, unassign, holder (docs/reference.md sections 2 and 8).
#include <gtest/gtest.h>

#include "table_fixture.h"

namespace holdfast::testing {
namespace {

class AssignTest : public TableTest {
 protected:
  Result<AcquireOutcome> assign(std::string_view key, std::string_view holder,
                                std::optional<Millis> ttl = std::nullopt,
                                std::optional<Millis> timeout = std::nullopt) {
    AssignRequest r;
    r.key = key;
    r.holder_id = holder;
    r.ttl_ms = ttl;
    r.timeout_ms = timeout;
    r.session = 3;
    r.held_by = "user:game";
    return table.assign(r, now());
  }
};

TEST_F(AssignTest, AssignWithoutTtlNeverExpires) {
  auto out = assign("turn", "white");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->kind, AcquireOutcome::Kind::kGranted);
  EXPECT_EQ(out->hold.kind, HoldKind::kAssigned);
  EXPECT_EQ(out->hold.holder_id, "white");
  EXPECT_EQ(out->hold.held_by, "user:game");
  EXPECT_TRUE(out->hold.handle.is_null());
  EXPECT_EQ(out->hold.lease_expires_at, kNever);
  tick(10LL * 86'400'000);
  EXPECT_EQ(table.holder("turn", now())->holder, "white");
}

TEST_F(AssignTest, AssignToAnotherHolderIsLockHeldWithoutTimeout) {
  ASSERT_TRUE(assign("turn", "white").ok());
  auto out = assign("turn", "black");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kLockHeld);
  EXPECT_EQ(table.holder("turn", now())->holder, "white");
}

TEST_F(AssignTest, AssignOnAHandleHeldKeyIsLockHeld) {
  take("turn");
  EXPECT_EQ(assign("turn", "white").error().code, ErrorCode::kLockHeld);
}

TEST_F(AssignTest, ReassigningTheSameHolderRefreshesTheLeaseAndKeepsTheToken) {
  auto first = assign("turn", "white", 1000);
  clock.advance(800);
  auto again = assign("turn", "white", 1000);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->hold.token, first->hold.token);
  EXPECT_EQ(again->hold.lease_expires_at, now() + 1000);
  auto forever = assign("turn", "white");
  EXPECT_EQ(forever->hold.lease_expires_at, kNever);
  tick(5000);
  EXPECT_EQ(table.holder("turn", now())->holder, "white");
}

TEST_F(AssignTest, AssignWithTimeoutWaitsInTheSameFifoQueue) {
  HoldState h = take("turn");
  auto out = assign("turn", "white", std::nullopt, 5000);
  ASSERT_EQ(out->kind, AcquireOutcome::Kind::kQueued);
  ASSERT_TRUE(table.release("turn", h.handle.to_string(), now()).ok());
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(outs[0].granted);
  EXPECT_TRUE(outs[0].assign);
  EXPECT_EQ(outs[0].hold.holder_id, "white");
}

TEST_F(AssignTest, AssignWithTimeoutEndsInATimeout) {
  ASSERT_TRUE(assign("turn", "white").ok());
  ASSERT_EQ(assign("turn", "black", std::nullopt, 200)->kind, AcquireOutcome::Kind::kQueued);
  tick(200);
  auto outs = table.take_outcomes();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_FALSE(outs[0].granted);
  EXPECT_TRUE(outs[0].assign);
}

TEST_F(AssignTest, TryAcquireOnAnAssignedKeyIsContended) {
  ASSERT_TRUE(assign("turn", "white").ok());
  EXPECT_EQ(table.acquire(req("turn"), now())->kind, AcquireOutcome::Kind::kContended);
}

TEST_F(AssignTest, TransferMovesTheHoldAtomicallyAndMintsAToken) {
  auto first = assign("turn", "white", 60000);
  auto moved = table.transfer("turn", "black", "white", "user:game", now());
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->holder_id, "black");
  EXPECT_GT(moved->token, first->hold.token);
  EXPECT_EQ(moved->lease_expires_at, first->hold.lease_expires_at);
  EXPECT_EQ(table.holder("turn", now())->holder, "black");
}

TEST_F(AssignTest, TransferFromAnyoneButTheHolderIsNotHolder) {
  ASSERT_TRUE(assign("turn", "white").ok());
  EXPECT_EQ(table.transfer("turn", "black", "black", "user:game", now()).error().code,
            ErrorCode::kLockNotHolder);
  EXPECT_EQ(table.transfer("free", "black", "white", "user:game", now()).error().code,
            ErrorCode::kLockNotHolder);
  take("handle-held");
  EXPECT_EQ(table.transfer("handle-held", "b", "a", "user:game", now()).error().code,
            ErrorCode::kLockNotHolder);
  EXPECT_EQ(table.holder("turn", now())->holder, "white");
}

TEST_F(AssignTest, UnassignIsConditionalOnTheHolderId) {
  ASSERT_TRUE(assign("turn", "white").ok());
  EXPECT_EQ(table.unassign("turn", "black", now()).error().code, ErrorCode::kLockNotHolder);
  EXPECT_TRUE(table.unassign("turn", "white", now())->released);
  EXPECT_FALSE(table.unassign("turn", std::nullopt, now())->released);
  ASSERT_TRUE(assign("turn", "white").ok());
  EXPECT_TRUE(table.unassign("turn", std::nullopt, now())->released);
}

TEST_F(AssignTest, UnassignDoesNotFreeAHandleHold) {
  take("k");
  EXPECT_EQ(table.unassign("k", std::nullopt, now()).error().code, ErrorCode::kLockNotHolder);
  EXPECT_TRUE(table.status("k", now())->held);
}

TEST_F(AssignTest, HolderOfAHandleHeldKeyIsNullButHeld) {
  take("k");
  auto v = table.holder("k", now());
  EXPECT_TRUE(v->held);
  EXPECT_FALSE(v->holder.has_value());
  auto free = table.holder("free", now());
  EXPECT_FALSE(free->held);
  EXPECT_FALSE(free->holder.has_value());
}

}  // namespace
}  // namespace holdfast::testing
