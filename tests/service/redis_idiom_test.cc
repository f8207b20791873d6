// The Redis idiom's decisions, shared by both backends: what SET does to a key and where
// PEXPIRE and its kin move a lease.
#include "service/redis_idiom.h"

#include <gtest/gtest.h>

namespace holdfast {
namespace {

TEST(DecideSet, NxTakesOnlyAFreeKey) {
  EXPECT_EQ(decide_set(SetCondition::kIfAbsent, false, false, false, true), SetStep::kTake);
  EXPECT_EQ(decide_set(SetCondition::kIfAbsent, true, true, true, false), SetStep::kNothing);
  EXPECT_EQ(decide_set(SetCondition::kIfAbsent, false, false, false, false), SetStep::kNothing)
      << "a free key with queued waiters is theirs";
}

TEST(DecideSet, APlainSetRenewsReplacesOrRefuses) {
  EXPECT_EQ(decide_set(SetCondition::kAlways, false, false, false, true), SetStep::kTake);
  EXPECT_EQ(decide_set(SetCondition::kAlways, true, true, true, false), SetStep::kRenew);
  EXPECT_EQ(decide_set(SetCondition::kAlways, true, true, false, false), SetStep::kTakeOver);
  EXPECT_EQ(decide_set(SetCondition::kAlways, true, false, true, false), SetStep::kRefuse);
  EXPECT_EQ(decide_set(SetCondition::kAlways, false, false, false, false), SetStep::kRefuse);
}

TEST(DecideSet, XxActsOnlyOnAHeldKey) {
  EXPECT_EQ(decide_set(SetCondition::kIfPresent, false, false, false, true), SetStep::kNothing);
  EXPECT_EQ(decide_set(SetCondition::kIfPresent, true, true, false, false), SetStep::kTakeOver);
  EXPECT_EQ(decide_set(SetCondition::kIfPresent, true, false, false, false), SetStep::kRefuse);
}

ExpireArgs expire(Millis amount, ExpireCondition c, bool absolute = false) {
  ExpireArgs a;
  a.key = "k";
  a.amount = amount;
  a.condition = c;
  a.absolute = absolute;
  return a;
}

TEST(DecideSet, AnExpiryAlreadyPastLeavesTheKeyFree) {
  EXPECT_EQ(already_ended(SetStep::kTake), SetStep::kSetGone);
  EXPECT_EQ(already_ended(SetStep::kRenew), SetStep::kFreeOwn);
  EXPECT_EQ(already_ended(SetStep::kTakeOver), SetStep::kFreeOwn);
  EXPECT_EQ(already_ended(SetStep::kNothing), SetStep::kNothing);
  EXPECT_EQ(already_ended(SetStep::kRefuse), SetStep::kRefuse);
}

TEST(ExpireTo, ConditionsCompareWithTheCurrentEnd) {
  const Millis now = 1'000'000, cap = 86'400'000;
  EXPECT_EQ(expire_to(expire(500, ExpireCondition::kAlways), now + 100, now, cap), now + 500);
  EXPECT_EQ(expire_to(expire(500, ExpireCondition::kIfLater), now + 100, now, cap), now + 500);
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfLater), now + 100, now, cap), std::nullopt);
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfEarlier), now + 100, now, cap), now + 50);
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfEarlier), kNever, now, cap), now + 50);
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfLater), kNever, now, cap), std::nullopt);
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfNone), now + 100, now, cap), std::nullopt);
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfNone), kNever, now, cap), now + 50);
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfSome), now + 100, now, cap), now + 50);
  // XX LT: earlier, and only a hold that has an end (LT alone also moves one without).
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfSomeEarlier), now + 100, now, cap), now + 50);
  EXPECT_EQ(expire_to(expire(500, ExpireCondition::kIfSomeEarlier), now + 100, now, cap),
            std::nullopt);
  EXPECT_EQ(expire_to(expire(50, ExpireCondition::kIfSomeEarlier), kNever, now, cap), std::nullopt);
}

TEST(ExpireTo, InstantsCapsAndPersist) {
  const Millis now = 1'000'000, cap = 10'000;
  EXPECT_EQ(expire_to(expire(5, ExpireCondition::kAlways, true), now + 100, now, cap), 5)
      << "an instant already past: the key is to be freed";
  EXPECT_EQ(expire_to(expire(999'999, ExpireCondition::kAlways), now + 100, now, cap), now + cap);
  ExpireArgs persist;
  persist.persist = true;
  EXPECT_EQ(expire_to(persist, now + 100, now, cap), now + cap);
  EXPECT_EQ(expire_to(persist, kNever, now, cap), std::nullopt);
}

}  // namespace
}  // namespace holdfast
