// The embedded backend over a log that cannot be synced: calls that would change state are
// refused with STORE_UNAVAILABLE and change nothing, reads answer at once (after the earlier
// answers of their own connection), answers that wait for the failed sync are not sent until
// a retry has made them durable, leases still end and waiters are still granted (their answers
// wait too), and after the retry a restart finds every answered change. A slow sync only
// delays answers.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/principal.h"
#include "service_fixture.h"
#include "store/wal/fake_file_system.h"
#include "store/wal/wal_store.h"

namespace holdfast::testing {
namespace {
namespace store_fault {

const char* kRules = R"toml([ruleSet]
name = "lock-policy"
resourceType = "lock"

[rules.lock]
acquire = "true"
)toml";

class StoreFault : public ::testing::Test {
 protected:
  struct Node {
    std::unique_ptr<wal::WalStore> store;
    std::unique_ptr<EmbeddedNode> service;
  };

  Node start() {
    wal::WalOptions options;
    options.data_dir = "/data";
    options.preallocate_segments = false;
    options.retry_interval_ms = 3'600'000;  // retries only when the test asks
    options.on_fault = [](const std::optional<Error>&) {};
    Node node;
    node.store = std::make_unique<wal::WalStore>(options, clock, fs);
    node.service = std::make_unique<EmbeddedNode>(clock, *node.store);
    const Status recovered = node.service->recover();
    EXPECT_TRUE(recovered.ok()) << recovered.error().message;
    return node;
  }

  static AcquireArgs args(std::string_view key, Millis ttl_ms = 60'000, Millis timeout_ms = 0) {
    AcquireArgs a;
    a.key = key;
    a.ttl_ms = ttl_ms;
    a.timeout_ms = timeout_ms;
    return a;
  }

  HoldState take(Node& node, std::string_view key, Millis ttl_ms = 60'000) {
    Result<Answer> out = node.service->answer([&](LockService& s, Completion& done) {
      return s.try_acquire(caller(9), args(key, ttl_ms), done);
    });
    EXPECT_TRUE(out.ok() && std::holds_alternative<HoldState>(*out)) << key;
    return out.ok() ? std::get<HoldState>(*out) : HoldState{};
  }

  StatusView status(Node& node, std::string_view key) {
    Result<Answer> out = node.service->answer(
        [&](LockService& s, Completion& done) { return s.status(caller(9), key, done); });
    EXPECT_TRUE(out.ok());
    return out.ok() ? std::get<StatusView>(*out) : StatusView{};
  }

  Caller caller(SessionId session) { return Caller{&owner, session}; }

  FakeClock clock;
  wal::FakeFileSystem fs;
  Principal owner = Principal::local_owner();
};

TEST_F(StoreFault, RefusesChangesServesReadsAndHoldsBackWhatTheFailedSyncCarried) {
  Node node = start();
  const HoldState a = take(node, "a");
  take(node, "w", /*ttl_ms=*/1'000);
  Recorder waiter;  // session 3 waits for "w"
  ASSERT_EQ(node.service->policy.acquire(caller(3), args("w", 60'000, 600'000), waiter),
            Issued::kWaiting);
  node.service->dispatch();

  fs.fail_syncs(true);
  Recorder first;  // session 1: its grant is in the batch whose sync fails
  ASSERT_EQ(node.service->policy.try_acquire(caller(1), args("b"), first), Issued::kApplied);
  ASSERT_TRUE(node.service->dispatch_until([&] { return node.store->fault().has_value(); }));
  node.service->dispatch();  // the backend takes the fault
  EXPECT_TRUE(first.empty()) << "answered a grant whose sync failed";

  // Another connection: changes are refused (and change nothing), reads answer at once.
  Recorder other;
  node.service->policy.try_acquire(caller(2), args("c"), other);
  const std::string handle = a.handle.to_string();
  ReleaseArgs release{"a", handle};
  node.service->policy.release(caller(2), release, other);
  node.service->policy.status(caller(2), "a", other);
  ASSERT_EQ(other.size(), 3u);
  EXPECT_EQ(other.code(0), ErrorCode::kStoreUnavailable);
  EXPECT_NE(other.at(0).error().message.find("injected sync error"), std::string::npos);
  EXPECT_EQ(other.code(1), ErrorCode::kStoreUnavailable);
  const StatusView a_now = std::get<StatusView>(*other.at(2));
  EXPECT_TRUE(a_now.held);
  EXPECT_EQ(a_now.hold.token, a.token);
  EXPECT_FALSE(status(node, "c").held);
  EXPECT_EQ(node.service->policy.stats().store.fault.has_value(), true);

  // The first connection's read follows its waiting grant.
  node.service->policy.status(caller(1), "a", first);
  EXPECT_TRUE(first.empty());

  // A lease ends on time; its waiter is granted in memory, but not answered.
  clock.advance(1'001);
  node.service->advance();
  EXPECT_TRUE(waiter.empty()) << "answered a grant the log does not have";
  const StatusView w_now = status(node, "w");
  EXPECT_TRUE(w_now.held);

  // The disk is back: one retry answers everything, in order, and changes are accepted.
  fs.fail_syncs(false);
  node.store->retry_now();
  // The syncer answers the batch, then leaves the fault: wait for both.
  ASSERT_TRUE(node.service->dispatch_until(
      [&] { return first.size() == 2 && waiter.size() == 1 && !node.store->fault().has_value(); }));
  ASSERT_TRUE(first.granted(0));
  EXPECT_EQ(first.hold(0).key, "b");
  EXPECT_TRUE(std::get<StatusView>(*first.at(1)).held);
  ASSERT_TRUE(waiter.granted(0));
  EXPECT_EQ(waiter.hold(0).token, w_now.hold.token);
  EXPECT_FALSE(node.store->fault().has_value());
  const HoldState c = take(node, "c");
  const HoldState b = first.hold(0);
  const HoldState w = waiter.hold(0);
  node.store->close();

  Node again = start();
  EXPECT_EQ(status(again, "a").hold.token, a.token);
  EXPECT_EQ(status(again, "b").hold.token, b.token);
  EXPECT_EQ(status(again, "c").hold.token, c.token);
  EXPECT_EQ(status(again, "w").hold.token, w.token);
  again.store->close();
}

TEST_F(StoreFault, RuleSetAndRedisIdiomChangesAreRefusedToo) {
  Node node = start();
  take(node, "k");
  fs.fail_writes(true);
  Recorder trigger;
  node.service->policy.try_acquire(caller(1), args("x"), trigger);
  ASSERT_TRUE(node.service->dispatch_until([&] { return node.store->fault().has_value(); }));
  node.service->dispatch();

  Recorder r;
  node.service->policy.set_rule_set(caller(2), kRules, r);
  const std::string_view keys[] = {"k"};
  node.service->backend.delete_keys(keys, std::nullopt, {}, r);
  node.service->backend.count_held(keys, r);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r.code(0), ErrorCode::kStoreUnavailable);
  EXPECT_EQ(r.code(1), ErrorCode::kStoreUnavailable);
  ASSERT_TRUE(r.at(2).ok());
  EXPECT_EQ(std::get<KeyCount>(*r.at(2)).count, 1);
  fs.fail_writes(false);
  node.store->retry_now();
  ASSERT_TRUE(node.service->dispatch_until([&] { return trigger.size() == 1; }));
  EXPECT_TRUE(trigger.granted(0));
  node.store->close();
}

// A slow disk is not a fault: nothing is refused, answers wait for their sync, and leases
// follow the clock: a renewal counts from its arrival, not from its sync.
TEST_F(StoreFault, ASlowSyncDelaysAnswersButNotLeases) {
  Node node = start();
  const HoldState held = take(node, "slow", /*ttl_ms=*/1'000);
  fs.block_syncs();  // a sync that takes as long as the test wants
  const std::string handle = held.handle.to_string();
  Recorder renewal;
  node.service->policy.renew(caller(9), RenewArgs{"slow", handle, 5'000}, renewal);
  node.service->dispatch();
  ASSERT_TRUE(fs.wait_for_blocked_syncs(1, std::chrono::seconds(10)));
  EXPECT_TRUE(renewal.empty());

  // Past the old lease end, the hold stands on the renewal that is still being synced; a
  // waiter keeps its place, and another change is accepted (its answer waits as well).
  clock.advance(2'000);
  node.service->advance();
  Recorder waiter, other;
  EXPECT_EQ(node.service->policy.acquire(caller(3), args("slow", 1'000, 60'000), waiter),
            Issued::kWaiting);
  node.service->policy.try_acquire(caller(4), args("other"), other);
  node.service->dispatch();
  EXPECT_TRUE(other.empty());
  EXPECT_FALSE(node.store->fault().has_value());

  fs.unblock_syncs();
  ASSERT_TRUE(node.service->dispatch_until([&] { return !renewal.empty() && !other.empty(); }));
  ASSERT_TRUE(renewal.at(0).ok());
  EXPECT_TRUE(std::get<RenewOutcome>(*renewal.at(0)).renewed);
  EXPECT_TRUE(other.granted(0));
  const StatusView st = status(node, "slow");
  EXPECT_EQ(st.hold.token, held.token);
  EXPECT_EQ(st.waiters, 1u);
  // The renewed lease ends on the clock, and the waiter is next.
  clock.advance(3'001);
  node.service->advance();
  ASSERT_TRUE(node.service->dispatch_until([&] { return !waiter.empty(); }));
  EXPECT_TRUE(waiter.granted(0));
  EXPECT_GT(waiter.hold(0).token, held.token);
  node.store->close();
}

}  // namespace store_fault
}  // namespace
}  // namespace holdfast::testing
