// Typed values through the policy and the embedded backend: a write goes through the rule set
// as an acquire whose operation is "write", a read is open to everyone; the element limits are
// refused before anything changes; the keyspace keeps locks and values apart both ways; the
// EXPIRE family follows the key (a lease for a lock, Redis's expiry for a value); the edits
// reach the store like any change.
#include <gtest/gtest.h>

#include <string>

#include "core/values/limits.h"
#include "service_fixture.h"
#include "store/memory_store.h"

namespace holdfast::testing {
namespace {
namespace values_policy {

const char* kRules = R"toml([ruleSet]
name = "values"
resourceType = "lock"

[rules.lock]
acquire = "record.key.startsWith(user.userId + ':') && request.operation == 'write'"
)toml";

class ValuesPolicyTest : public NodeTest {
 protected:
  Result<Answer> value(const Caller& caller, ValueOp op, std::string_view key,
                       std::vector<std::string_view> items = {}, std::vector<double> scores = {}) {
    ValueRequest r;
    r.op = op;
    r.key = key;
    r.items = items;
    r.scores = scores;
    return node.answer([&](LockService& s, Completion& d) { return s.value(caller, r, d); });
  }
  Result<Answer> zadd(const Caller& caller, std::string_view key, std::string_view member) {
    return value(caller, ValueOp::kZAdd, key, {member}, {1});
  }
  static std::int64_t integer(const Result<Answer>& a) { return std::get<ValueReply>(*a).integer; }
};

TEST_F(ValuesPolicyTest, WritesGoThroughTheRulesAndReadsDoNot) {
  set_rules(kRules);
  ASSERT_TRUE(zadd(owner_caller, "bob:sem", "x").ok());
  auto denied = zadd(alice_caller, "bob:sem", "y");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kLockAccessDenied);
  EXPECT_EQ(integer(value(alice_caller, ValueOp::kZCard, "bob:sem")), 1);  // read: open
  EXPECT_TRUE(zadd(alice_caller, "alice:sem", "y").ok());
  // DEL skips a value the caller may not change, as it skips another principal's lock.
  const std::string_view keys[] = {"bob:sem", "alice:sem"};
  auto del = node.answer(
      [&](LockService& s, Completion& d) { return s.delete_keys(alice_caller, keys, d); });
  EXPECT_EQ(std::get<KeyCount>(*del).count, 1);
  EXPECT_EQ(integer(value(alice_caller, ValueOp::kZCard, "bob:sem")), 1);
}

TEST_F(ValuesPolicyTest, AnElementPastTheByteLimitChangesNothing) {
  const std::string big(kMaxElementBytes + 1, 'x');
  auto out = zadd(owner_caller, "k", big);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(out.error().message.find("at most 4096 bytes"), std::string::npos);
  EXPECT_TRUE(node.backend.values().empty());
  EXPECT_TRUE(zadd(owner_caller, "k", std::string(kMaxElementBytes, 'x')).ok());
}

TEST_F(ValuesPolicyTest, LocksAndValuesKeepToTheirOwnKeys) {
  ASSERT_TRUE(zadd(owner_caller, "z", "a").ok());
  AcquireArgs a;
  a.key = "z";
  a.ttl_ms = 1000;
  auto lock =
      node.answer([&](LockService& s, Completion& d) { return s.try_acquire(owner_caller, a, d); });
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.error().code, ErrorCode::kWrongType);
  a.key = "l";
  ASSERT_TRUE(
      node.answer([&](LockService& s, Completion& d) { return s.try_acquire(owner_caller, a, d); })
          .ok());
  auto typed = zadd(owner_caller, "l", "a");
  ASSERT_FALSE(typed.ok());
  EXPECT_EQ(typed.error().code, ErrorCode::kWrongType);
}

TEST_F(ValuesPolicyTest, ExpireMovesAValuesExpiryWithoutTheLeaseCap) {
  ASSERT_TRUE(zadd(owner_caller, "z", "a").ok());
  ExpireArgs e;
  e.key = "z";
  e.amount = 10LL * 86'400'000;  // ten days: more than any lease may last
  auto out =
      node.answer([&](LockService& s, Completion& d) { return s.expire(owner_caller, e, d); });
  EXPECT_EQ(std::get<KeyCount>(*out).count, 1);
  EXPECT_EQ(integer(value(owner_caller, ValueOp::kPTtl, "z")), 10LL * 86'400'000);
  clock.advance(10LL * 86'400'000);
  node.advance();
  EXPECT_EQ(integer(value(owner_caller, ValueOp::kPTtl, "z")), -2);
  EXPECT_TRUE(node.backend.values().empty());
}

// A script or a transaction sees one instant: the clock as it read when atomically() began,
// however far it moves meanwhile (as Redis judges expiry inside a script at its start).
TEST_F(ValuesPolicyTest, TimeStandsStillInsideAtomically) {
  ASSERT_TRUE(zadd(owner_caller, "z", "a").ok());
  ExpireArgs e;
  e.key = "z";
  e.amount = 100;
  ASSERT_TRUE(
      node.answer([&](LockService& s, Completion& d) { return s.expire(owner_caller, e, d); })
          .ok());
  std::int64_t first = 0, later = 0, card = 0;
  const auto st = node.policy.atomically([&] {
    clock.advance(60);
    first = integer(value(owner_caller, ValueOp::kPTtl, "z"));
    clock.advance(60);  // past the expiry: still there inside
    later = integer(value(owner_caller, ValueOp::kPTtl, "z"));
    card = integer(value(owner_caller, ValueOp::kZCard, "z"));
  });
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(first, 100);
  EXPECT_EQ(later, 100);
  EXPECT_EQ(card, 1);
  // Afterwards the clock runs again: 120 ms later the value has expired.
  EXPECT_EQ(integer(value(owner_caller, ValueOp::kPTtl, "z")), -2);
  // A transaction around a script: the outer instant holds for both.
  ASSERT_TRUE(zadd(owner_caller, "y", "a").ok());
  e.key = "y";
  ASSERT_TRUE(
      node.answer([&](LockService& s, Completion& d) { return s.expire(owner_caller, e, d); })
          .ok());
  std::int64_t nested = 0;
  ASSERT_TRUE(node.policy
                  .atomically([&] {
                    clock.advance(70);
                    ASSERT_TRUE(node.policy
                                    .atomically([&] {
                                      clock.advance(70);
                                      nested = integer(value(owner_caller, ValueOp::kPTtl, "y"));
                                    })
                                    .ok());
                  })
                  .ok());
  EXPECT_EQ(nested, 100);
  EXPECT_EQ(integer(value(owner_caller, ValueOp::kPTtl, "y")), -2);
}

TEST_F(ValuesPolicyTest, EveryEditIsAppendedAndReadsAppendNothing) {
  const auto before = store.stats().appended;
  ASSERT_TRUE(zadd(owner_caller, "z", "a").ok());
  ASSERT_TRUE(value(owner_caller, ValueOp::kZCard, "z").ok());
  ASSERT_TRUE(value(owner_caller, ValueOp::kZRem, "z", {"a", "b"}).ok());
  ASSERT_TRUE(value(owner_caller, ValueOp::kZRem, "z", {"a"}).ok());  // nothing left to remove
  EXPECT_EQ(store.stats().appended - before, 2u);
}

}  // namespace values_policy
}  // namespace
}  // namespace holdfast::testing
