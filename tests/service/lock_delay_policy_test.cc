// Lock-delay through the policy (docs/lock-kinds.md, docs/auth.md): the range of a delay a
// request asks for, and the rule set's default for requests that ask for none.
#include <gtest/gtest.h>

#include <string>

#include "auth/rule_set.h"
#include "core/clock.h"
#include "core/principal.h"
#include "service_fixture.h"
#include "store/memory_store.h"

namespace holdfast::testing {
namespace {

std::string rules_with(std::string_view delay_line) {
  return "[ruleSet]\nname = \"delays\"\nresourceType = \"lock\"\n" + std::string(delay_line) +
         "\n[rules.lock]\nacquire = \"true\"\nassign = \"true\"\n";
}

TEST(LockDelayRuleSet, LockDelayMsIsReadFromTheRuleSetHead) {
  auto set = parse_rule_set(rules_with("lockDelayMs = 1500"));
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->lock_delay_ms, 1500);
  auto none = parse_rule_set(rules_with(""));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->lock_delay_ms, 0);
}

TEST(LockDelayRuleSet, ALockDelayOutsideTheRangeOrNotAnIntegerIsRefused) {
  for (const char* line :
       {"lockDelayMs = 60001", "lockDelayMs = -1", "lockDelayMs = \"5s\"", "lockDelayMs = 1.5"}) {
    auto set = parse_rule_set(rules_with(line));
    ASSERT_FALSE(set.ok()) << line;
    EXPECT_EQ(set.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(set.error().message,
              "rule set: [ruleSet] lockDelayMs must be an integer from 0 to 60000 (milliseconds)");
  }
}

class LockDelayPolicyTest : public NodeTest {
 protected:
  Result<Answer> try_acquire(std::string_view key, std::optional<Millis> delay,
                             const Caller* caller = nullptr) {
    AcquireArgs a;
    a.key = key;
    a.ttl_ms = 1000;
    a.lock_delay_ms = delay;
    const Caller& who = caller != nullptr ? *caller : owner_caller;
    return node.answer([&](LockService& s, Completion& d) { return s.try_acquire(who, a, d); });
  }
};

TEST_F(LockDelayPolicyTest, ADelayOutsideZeroToSixtySecondsIsInvalidAndChangesNothing) {
  for (Millis bad : {Millis{-1}, kMaxLockDelayMs + 1}) {
    auto out = try_acquire("k", bad);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(out.error().message, "lock-delay must be 0 to 60000 milliseconds");
    EXPECT_EQ(node.backend.table().held_count(), 0u);
  }
  auto max = try_acquire("k", kMaxLockDelayMs);
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(std::get<HoldState>(*max).lock_delay_ms, kMaxLockDelayMs);
}

TEST_F(LockDelayPolicyTest, TheRuleSetsDefaultAppliesWhenTheRequestAsksForNone) {
  set_rules(rules_with("lockDelayMs = 2000"));
  auto by_default = try_acquire("a", std::nullopt, &alice_caller);
  ASSERT_TRUE(by_default.ok());
  EXPECT_EQ(std::get<HoldState>(*by_default).lock_delay_ms, 2000);
  auto asked = try_acquire("b", 300, &alice_caller);
  EXPECT_EQ(std::get<HoldState>(*asked).lock_delay_ms, 300);
  auto zero = try_acquire("c", 0, &alice_caller);  // an explicit 0 is no delay
  EXPECT_EQ(std::get<HoldState>(*zero).lock_delay_ms, 0);
  // The default closes the key after an expiry, as an asked-for delay does.
  clock.advance(1000);
  node.advance();
  auto closed = try_acquire("a", std::nullopt, &alice_caller);
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*closed));  // nil: contended
  clock.advance(2000);
  EXPECT_TRUE(std::holds_alternative<HoldState>(*try_acquire("a", 0, &alice_caller)));
}

TEST_F(LockDelayPolicyTest, AssignTakesTheDefaultToo) {
  set_rules(rules_with("lockDelayMs = 700"));
  AssignArgs a;
  a.key = "k";
  a.holder_id = "w1";
  a.ttl_ms = 1000;
  auto out =
      node.answer([&](LockService& s, Completion& d) { return s.assign(owner_caller, a, d); });
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(std::get<HoldState>(*out).lock_delay_ms, 700);
}

}  // namespace
}  // namespace holdfast::testing
