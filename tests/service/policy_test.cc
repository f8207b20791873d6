// The policy layer over the embedded backend: every check of the contract, once, in its order
// (access, validation, rate limit), and answers that leave only once the log has what they
// report, in the order they were made.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/principal.h"
#include "service_fixture.h"
#include "store/memory_store.h"

namespace holdfast::testing {
namespace {
namespace policy {

const char* kRules = R"toml([ruleSet]
name = "lock-policy"
resourceType = "lock"

[rules.lock]
acquire = "record.key.startsWith('user:' + user.userId + ':')"
)toml";

class PolicyTest : public NodeTest {
 protected:
  Result<Answer> call(const std::function<Issued(LockService&, Completion&)>& fn) {
    return node.answer(fn);
  }
  Result<Answer> try_acquire(const Caller& caller, AcquireArgs a) {
    return call([&](LockService& s, Completion& d) { return s.try_acquire(caller, a, d); });
  }
  Result<Answer> acquire(const Caller& caller, AcquireArgs a) {
    return call([&](LockService& s, Completion& d) { return s.acquire(caller, a, d); });
  }
  static AcquireArgs args(std::string_view key, Millis ttl = 1000, Millis timeout = 0) {
    AcquireArgs a;
    a.key = key;
    a.ttl_ms = ttl;
    a.timeout_ms = timeout;
    return a;
  }
  std::size_t held() const { return node.backend.table().held_count(); }
};

TEST_F(PolicyTest, TtlAboveOneDayIsCappedAndTheReplyShowsTheRealExpiry) {
  auto out = try_acquire(owner_caller, args("k", 10LL * 86'400'000));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(std::get<HoldState>(*out).lease_expires_at, clock.now_ms() + 86'400'000);
}

TEST_F(PolicyTest, TheLeaseCapIsConfigurable) {
  MemoryStore other_store;
  PolicyOptions options;
  options.max_lease_ms = 5000;
  EmbeddedNode capped(clock, other_store, options);
  ASSERT_TRUE(capped.recover().ok());
  auto out = capped.answer([&](LockService& s, Completion& d) {
    return s.try_acquire(owner_caller, args("k", 60'000), d);
  });
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(std::get<HoldState>(*out).lease_expires_at, clock.now_ms() + 5000);
}

TEST_F(PolicyTest, BadArgumentsAreInvalidAndChangeNothing) {
  std::vector<std::pair<AcquireArgs, std::string>> bad;
  bad.emplace_back(args("", 1000), "key");
  const std::string long_key(1025, 'k');
  bad.emplace_back(args(long_key, 1000), "key");
  bad.emplace_back(args("k", 0), "ttlMs");
  bad.emplace_back(args("k", -1), "ttlMs");
  bad.emplace_back(args("k", 1000, -1), "timeoutMs");
  auto empty_owner = args("k");
  empty_owner.owner = "";
  bad.emplace_back(empty_owner, "owner");
  const std::string long_owner(257, 'o');
  auto too_long = args("k");
  too_long.owner = long_owner;
  bad.emplace_back(too_long, "owner");
  for (const auto& [a, field] : bad) {
    auto out = acquire(owner_caller, a);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument) << out.error().message;
    ASSERT_FALSE(out.error().details.empty());
    EXPECT_EQ(out.error().details[0].first, "field");
    EXPECT_EQ(std::get<std::string>(out.error().details[0].second), field);
  }
  // A session hold needs a connection to belong to.
  auto sessionless = args("k");
  sessionless.session_scoped = true;
  auto out = try_acquire(Caller{&owner, 0}, sessionless);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(held(), 0u);
  EXPECT_EQ(node.backend.table().last_token(), 0u);
}

TEST_F(PolicyTest, BadHandlesHolderIdsAndListArgumentsAreInvalid) {
  auto release = call([&](LockService& s, Completion& d) {
    return s.release(owner_caller, ReleaseArgs{"k", ""}, d);
  });
  ASSERT_FALSE(release.ok());
  EXPECT_EQ(release.error().code, ErrorCode::kInvalidArgument);
  const std::string long_handle(65, 'h');
  auto renew = call([&](LockService& s, Completion& d) {
    return s.renew(owner_caller, RenewArgs{"k", long_handle, 1000}, d);
  });
  EXPECT_EQ(renew.error().code, ErrorCode::kInvalidArgument);
  AssignArgs assign;
  assign.key = "turn";
  assign.holder_id = "";
  auto empty_holder =
      call([&](LockService& s, Completion& d) { return s.assign(owner_caller, assign, d); });
  EXPECT_EQ(empty_holder.error().code, ErrorCode::kInvalidArgument);
  assign.holder_id = "w";
  assign.ttl_ms = 0;
  auto zero_ttl =
      call([&](LockService& s, Completion& d) { return s.assign(owner_caller, assign, d); });
  EXPECT_EQ(zero_ttl.error().code, ErrorCode::kInvalidArgument);
  auto transfer = call([&](LockService& s, Completion& d) {
    return s.transfer(owner_caller, TransferArgs{"turn", "", "w"}, d);
  });
  EXPECT_EQ(transfer.error().code, ErrorCode::kInvalidArgument);

  ListArgs list;
  list.cursor = "zz-not-hex";
  auto cursor = call([&](LockService& s, Completion& d) { return s.list(owner_caller, list, d); });
  EXPECT_EQ(cursor.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(cursor.error().message, "cursor is not one this server returned");
  list.cursor = "0";
  list.count = 0;
  auto none = call([&](LockService& s, Completion& d) { return s.list(owner_caller, list, d); });
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
  list.count = kMaxListPage + 1;
  auto too_many =
      call([&](LockService& s, Completion& d) { return s.list(owner_caller, list, d); });
  EXPECT_EQ(too_many.error().code, ErrorCode::kInvalidArgument);
  list.count = kMaxListPage;
  EXPECT_TRUE(
      call([&](LockService& s, Completion& d) { return s.list(owner_caller, list, d); }).ok());
}

TEST_F(PolicyTest, ListingAndRuleSetAdministrationNeedThePrivilegedRole) {
  auto list =
      call([&](LockService& s, Completion& d) { return s.list(alice_caller, ListArgs{}, d); });
  EXPECT_EQ(list.error().code, ErrorCode::kForbidden);
  auto set =
      call([&](LockService& s, Completion& d) { return s.set_rule_set(alice_caller, kRules, d); });
  EXPECT_EQ(set.error().code, ErrorCode::kForbidden);
  auto get = call([&](LockService& s, Completion& d) { return s.get_rule_set(alice_caller, d); });
  EXPECT_EQ(get.error().code, ErrorCode::kForbidden);
  auto del = call([&](LockService& s, Completion& d) {
    return s.delete_rule_set(alice_caller, "lock-policy", d);
  });
  EXPECT_EQ(del.error().code, ErrorCode::kForbidden);
}

TEST_F(PolicyTest, RulesComeBeforeValidation) {
  ASSERT_TRUE(call([&](LockService& s, Completion& d) {
                return s.set_rule_set(owner_caller, kRules, d);
              }).ok());
  // A key the rule refuses, with a bad TTL as well: the denial is what the caller hears.
  auto out = try_acquire(alice_caller, args("jobs:1", 0));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kLockAccessDenied);
  EXPECT_TRUE(try_acquire(alice_caller, args("user:alice:1")).ok());
  // Release is never gated; the owner role always passes.
  EXPECT_TRUE(try_acquire(owner_caller, args("jobs:1")).ok());
}

TEST_F(PolicyTest, RuleSetsAreStoredReplacedAndDeletedThroughTheBackend) {
  auto first =
      call([&](LockService& s, Completion& d) { return s.set_rule_set(owner_caller, kRules, d); });
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(std::get<RuleSetStored>(*first).name, "lock-policy");
  EXPECT_FALSE(std::get<RuleSetStored>(*first).replaced);
  auto again =
      call([&](LockService& s, Completion& d) { return s.set_rule_set(owner_caller, kRules, d); });
  EXPECT_TRUE(std::get<RuleSetStored>(*again).replaced);
  std::string other = kRules;
  other.replace(other.find("lock-policy"), 11, "other-name");
  auto conflict =
      call([&](LockService& s, Completion& d) { return s.set_rule_set(owner_caller, other, d); });
  EXPECT_EQ(conflict.error().code, ErrorCode::kRulesetConflict);
  auto bad = call([&](LockService& s, Completion& d) {
    return s.set_rule_set(
        owner_caller,
        "[ruleSet]\nname = \"x\"\nresourceType = \"lock\"\n[rules.lock]\nacquire = \"(\"\n", d);
  });
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  ASSERT_NE(node.policy.rules(), nullptr);
  EXPECT_EQ(node.policy.rules()->name, "lock-policy");
  auto missing = call(
      [&](LockService& s, Completion& d) { return s.delete_rule_set(owner_caller, "nope", d); });
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(call([&](LockService& s, Completion& d) {
                return s.delete_rule_set(owner_caller, "lock-policy", d);
              }).ok());
  EXPECT_EQ(node.policy.rules(), nullptr);
  EXPECT_TRUE(try_acquire(alice_caller, args("jobs:2")).ok());  // open again
}

TEST_F(PolicyTest, AnAcquireWithTimeoutZeroThatMeetsAHolderIsALockTimeout) {
  ASSERT_TRUE(try_acquire(owner_caller, args("k")).ok());
  auto tried = try_acquire(alice_caller, args("k"));
  ASSERT_TRUE(tried.ok());
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*tried));  // nil
  auto once = acquire(alice_caller, args("k", 1000, 0));
  ASSERT_FALSE(once.ok());
  EXPECT_EQ(once.error().code, ErrorCode::kLockTimeout);
}

// A store whose durable sequence moves only when the test says.
class HeldStore final : public Store {
 public:
  Result<DurableState> recover() override { return DurableState{}; }
  std::uint64_t append(const Change&) override { return ++appended; }
  void submit() override {}
  std::uint64_t durable_sequence() const override { return durable; }
  void set_on_durable(std::function<void(std::uint64_t)>) override {}
  void set_state_source(StateSource) override {}
  StoreStats stats() const override { return {}; }
  void close() override {}

  std::uint64_t appended = 0, durable = 0;
};

// With credentials (PolicyOptions::identities) a holder id left out is the member's userId,
// resolved before the rules, which see it as request.holderId.
TEST(PolicyIdentities, AHolderIdLeftOutIsTheMembersOwnAndTheRulesSeeIt) {
  FakeClock clock;
  MemoryStore store;
  EmbeddedNode node{clock, store, PolicyOptions{.identities = true}};
  ASSERT_TRUE(node.recover().ok());
  Principal admin = Principal::local_owner();
  Principal alice = member("alice");
  Principal bob = member("bob");
  Principal importer{PrincipalKind::kFunction, "importer", Role::kMember, {}};
  const Caller admin_caller{&admin, 1}, alice_caller{&alice, 2}, bob_caller{&bob, 3},
      fn_caller{&importer, 4};
  auto assign = [&](const Caller& c, std::optional<std::string_view> holder) {
    AssignArgs a;
    a.key = "turn";
    a.holder_id = holder;
    return node.answer([&](LockService& s, Completion& d) { return s.assign(c, a, d); });
  };
  auto check = [&](const Caller& c) {
    return node.answer([&](LockService& s, Completion& d) {
      return s.check(c, CheckArgs{"turn", {}}, d);
    });
  };

  auto fn = assign(fn_caller, std::nullopt);
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(fn.error().message, "holderId is required: a function has no holder id of its own");

  ASSERT_TRUE(node.answer([&](LockService& s, Completion& d) {
                    return s.set_rule_set(admin_caller, R"toml([ruleSet]
name = "own"
resourceType = "lock"

[rules.lock]
assign = "request.holderId == user.userId && !has(request.toId)"
)toml",
                                          d);
                  })
                  .ok());
  auto to_bob = assign(alice_caller, "bob");
  ASSERT_FALSE(to_bob.ok());
  EXPECT_EQ(to_bob.error().code, ErrorCode::kLockAccessDenied);
  auto own = assign(alice_caller, std::nullopt);
  ASSERT_TRUE(own.ok());
  const HoldState& hold = std::get<HoldState>(*own);
  EXPECT_EQ(hold.holder_id, "alice");

  auto mine = check(alice_caller);
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(std::get<HolderView>(*mine).token, hold.token);
  auto theirs = check(bob_caller);
  ASSERT_FALSE(theirs.ok());
  EXPECT_EQ(theirs.error().code, ErrorCode::kLockNotHolder);
  EXPECT_EQ(theirs.error().message,
            "the key is not held by bob (it is assigned to another holder)");
}

TEST(PolicyDurability, AnswersWaitForTheLogAndLeaveInTheOrderTheyWereMade) {
  FakeClock clock;
  HeldStore store;
  EmbeddedBackend backend(clock, store);
  Policy policy(backend, clock);
  ASSERT_TRUE(backend.recover().ok());
  Principal owner = Principal::local_owner();
  Caller caller{&owner, 1};
  Recorder r;
  AcquireArgs a;
  a.key = "k";
  a.ttl_ms = 1000;
  EXPECT_EQ(policy.try_acquire(caller, a, r), Issued::kApplied);  // took effect...
  EXPECT_EQ(policy.status(caller, "k", r), Issued::kApplied);
  a.ttl_ms = 0;
  policy.try_acquire(caller, a, r);  // refused by the policy, behind the two
  policy.dispatch();
  EXPECT_TRUE(r.empty()) << "...but nothing leaves before the log has the grant";

  store.durable = store.appended;
  policy.dispatch();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r.granted(0));
  EXPECT_TRUE(std::get<StatusView>(*r.at(1)).held);
  EXPECT_EQ(r.code(2), ErrorCode::kInvalidArgument);

  // With nothing waiting, an answer whose changes are durable leaves at once.
  Recorder now;
  policy.status(caller, "k", now);
  EXPECT_EQ(now.size(), 1u);
}

}  // namespace policy
}  // namespace
}  // namespace holdfast::testing
