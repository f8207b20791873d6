// The policy's rate gate and the embedded backend's waiters, on a fake clock: a blocking
// acquire or assign over the rate cap waits for its turn inside its timeout (docs/reference.md
// section 4), and a waiter whose connection goes away leaves nothing behind, not even a grant
// that was decided but not yet delivered (section 8, "a grant that raced with the disconnect
// is released"). Every call finishes exactly once: a call whose connection ended hears
// UNAVAILABLE, never a grant.
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

constexpr Millis kMinute = 60'000;
constexpr Millis kHour = 60 * kMinute;

class RateGate : public ::testing::Test {
 protected:
  void start(std::int64_t cap) {
    PolicyOptions options;
    options.acquire_per_user_per_hour = cap;
    node = std::make_unique<EmbeddedNode>(clock, store, options);
    ASSERT_TRUE(node->recover().ok());
  }

  // What the loop does when its timer fires; answers how many calls finished meanwhile.
  std::size_t tick(Millis ms) {
    const std::size_t before = finished();
    clock.advance(ms);
    node->advance();
    return finished() - before;
  }
  std::size_t finished() const {
    std::size_t n = 0;
    for (const Recorder* r : recorders) n += r->size();
    return n;
  }
  Recorder& recorder() {
    owned.push_back(std::make_unique<Recorder>());
    recorders.push_back(owned.back().get());
    return *owned.back();
  }

  AcquireArgs args(std::string_view key, Millis timeout_ms) {
    AcquireArgs a;
    a.key = key;
    a.ttl_ms = 10 * kHour;
    a.timeout_ms = timeout_ms;
    return a;
  }

  HoldState take(const Caller& caller, std::string_view key) {
    Recorder& r = recorder();
    EXPECT_EQ(node->policy.try_acquire(caller, args(key, 0), r), Issued::kApplied);
    node->dispatch();
    EXPECT_EQ(r.size(), 1u);
    EXPECT_TRUE(r.granted(0)) << key;
    return r.granted(0) ? r.hold(0) : HoldState{};
  }

  // Queued (parked by the cap, or behind a holder): nothing answered yet.
  void wait(const Caller& caller, std::string_view key, Millis timeout_ms, Recorder& r) {
    EXPECT_EQ(node->policy.acquire(caller, args(key, timeout_ms), r), Issued::kWaiting) << key;
    node->dispatch();
    EXPECT_TRUE(r.empty()) << key;
  }

  void release(const Caller& caller, const HoldState& hold) {
    Recorder& r = recorder();
    node->policy.release(caller, ReleaseArgs{hold.key, hold.handle.to_string()}, r);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_TRUE(r.at(0).ok());
    EXPECT_TRUE(std::get<ReleaseOutcome>(*r.at(0)).released);
  }

  StatusView status(std::string_view key) {
    auto s = node->answer([&](LockService& service, Completion& done) {
      return service.status(alice_caller, key, done);
    });
    EXPECT_TRUE(s.ok());
    return s.ok() ? std::get<StatusView>(*s) : StatusView{};
  }

  // Status as the table has it now, delivering nothing that waits for dispatch().
  bool held_now(std::string_view key) {
    Recorder r;
    node->policy.status(alice_caller, key, r);
    EXPECT_EQ(r.size(), 1u);
    return r.size() == 1 && std::get<StatusView>(*r.at(0)).held;
  }

  FakeClock clock;
  MemoryStore store;
  std::unique_ptr<EmbeddedNode> node;
  std::vector<std::unique_ptr<Recorder>> owned;
  std::vector<const Recorder*> recorders;
  Principal alice = member("alice");
  Principal bob = member("bob");
  Principal carol = member("carol");
  Caller alice_caller{&alice, 1};
  Caller bob_caller{&bob, 2};
  Caller carol_caller{&carol, 3};
};

TEST_F(RateGate, ABlockingAcquireOverTheCapGetsTheKeyWhenTheWindowFreesASlot) {
  start(2);
  take(alice_caller, "a");
  take(alice_caller, "b");
  Recorder& client = recorder();
  wait(alice_caller, "c", 2 * kHour, client);
  ASSERT_TRUE(node->policy.next_deadline().has_value());
  EXPECT_LE(*node->policy.next_deadline(), clock.now_ms() + kHour);

  EXPECT_EQ(tick(30 * kMinute), 0u);
  EXPECT_FALSE(status("c").held);
  EXPECT_EQ(tick(31 * kMinute), 1u);
  ASSERT_EQ(client.size(), 1u);
  ASSERT_TRUE(client.granted(0));
  EXPECT_EQ(client.hold(0).key, "c");
  EXPECT_EQ(client.hold(0).held_by, "user:alice");
  StatusView c = status("c");
  EXPECT_TRUE(c.held);
  EXPECT_EQ(c.hold.token, client.hold(0).token);
}

TEST_F(RateGate, TwoGatedAcquiresOfOneUserTakeTheSlotsAsTheyFreeOneAtATime) {
  start(1);
  take(alice_caller, "a");
  Recorder& first = recorder();
  Recorder& second = recorder();
  wait(alice_caller, "k1", 3 * kHour, first);
  wait(alice_caller, "k2", 3 * kHour, second);

  EXPECT_EQ(tick(61 * kMinute), 1u);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(first.granted(0));
  EXPECT_TRUE(second.empty());
  EXPECT_EQ(tick(30 * kMinute), 0u);
  EXPECT_EQ(tick(31 * kMinute), 1u);
  ASSERT_EQ(second.size(), 1u);
  ASSERT_TRUE(second.granted(0));
  EXPECT_EQ(second.hold(0).key, "k2");
}

TEST_F(RateGate, AGatedAcquireWhoseTimeoutPassesFirstTimesOutWithoutUsingASlot) {
  start(1);
  take(alice_caller, "a");
  Recorder& client = recorder();
  wait(alice_caller, "b", 10 * kMinute, client);

  EXPECT_EQ(tick(10 * kMinute), 1u);
  ASSERT_EQ(client.size(), 1u);
  ASSERT_FALSE(client.at(0).ok());
  EXPECT_EQ(client.code(0), ErrorCode::kLockTimeout);
  EXPECT_EQ(std::get<std::string>(client.detail(0, "key")), "b");
  EXPECT_EQ(std::get<std::int64_t>(client.detail(0, "timeoutMs")), 10 * kMinute);
  EXPECT_FALSE(status("b").held);

  // The hour after the first try: the one slot is free, the wait did not count.
  clock.advance(51 * kMinute);
  take(alice_caller, "b");
}

TEST_F(RateGate, AGatedAcquireThatFindsTheKeyHeldQueuesBehindTheHolder) {
  start(1);
  HoldState bobs = take(bob_caller, "k");
  take(alice_caller, "other");
  Recorder& client = recorder();
  wait(alice_caller, "k", 2 * kHour, client);

  EXPECT_EQ(tick(61 * kMinute), 0u);
  EXPECT_EQ(status("k").waiters, 1u);
  release(bob_caller, bobs);
  node->dispatch();
  ASSERT_EQ(client.size(), 1u);
  ASSERT_TRUE(client.granted(0));
  EXPECT_GT(client.hold(0).token, bobs.token);
  EXPECT_EQ(status("k").hold.held_by, "user:alice");
}

TEST_F(RateGate, EndingTheSessionOfAGatedWaiterThatQueuedSinceLeavesTheQueue) {
  start(1);
  HoldState bobs = take(bob_caller, "k");
  take(alice_caller, "other");
  Recorder& client = recorder();
  wait(alice_caller, "k", 2 * kHour, client);
  tick(61 * kMinute);
  ASSERT_EQ(status("k").waiters, 1u);

  node->policy.end_session(alice_caller.session);
  node->dispatch();
  EXPECT_EQ(status("k").waiters, 0u);
  release(bob_caller, bobs);
  node->dispatch();
  ASSERT_EQ(client.size(), 1u);  // told once that its connection closed, never granted
  EXPECT_EQ(client.code(0), ErrorCode::kUnavailable);
  EXPECT_FALSE(status("k").held);
}

TEST_F(RateGate, EndingTheSessionOfAGatedWaiterBeforeItsTurnMeansItNeverRuns) {
  start(1);
  take(alice_caller, "a");
  Recorder& client = recorder();
  wait(alice_caller, "k", 2 * kHour, client);
  node->policy.end_session(alice_caller.session);
  node->dispatch();

  EXPECT_FALSE(node->policy.next_deadline().has_value() &&
               *node->policy.next_deadline() <= clock.now_ms() + kHour)
      << "a call whose connection ended still has a timer";
  EXPECT_EQ(tick(2 * kHour), 0u);
  ASSERT_EQ(client.size(), 1u);
  EXPECT_EQ(client.code(0), ErrorCode::kUnavailable);
  EXPECT_FALSE(status("k").held);
  take(alice_caller, "k");  // its slot was never used
}

// A gated call whose slot comes while the key is free is granted and answered in the same
// step; one that then queues behind a holder can be granted by a release and not yet told.
TEST_F(RateGate, AGatedGrantWhoseConnectionEndedBeforeDeliveryIsReleased) {
  start(1);
  HoldState bobs = take(bob_caller, "k");
  take(alice_caller, "a");
  Recorder& client = recorder();
  wait(alice_caller, "k", 2 * kHour, client);
  tick(61 * kMinute);  // the slot frees: alice queues behind bob
  ASSERT_EQ(status("k").waiters, 1u);
  Recorder released;
  node->policy.release(bob_caller, ReleaseArgs{"k", bobs.handle.to_string()}, released);
  ASSERT_TRUE(held_now("k"));  // granted to alice, to be delivered by dispatch()

  node->policy.end_session(alice_caller.session);
  node->dispatch();
  EXPECT_FALSE(status("k").held);
  ASSERT_EQ(client.size(), 1u);
  EXPECT_EQ(client.code(0), ErrorCode::kUnavailable);
}

TEST_F(RateGate, EndingASessionEndsItsGatedCallsAndReleasesUndeliveredGrants) {
  start(1);
  HoldState bobs = take(bob_caller, "k1");
  take(alice_caller, "a");
  Recorder& decided = recorder();
  Recorder& other = recorder();
  Recorder& parked = recorder();
  Caller other_connection{&alice, 9};
  wait(alice_caller, "k1", 3 * kHour, decided);
  tick(61 * kMinute);                              // alice queues behind bob
  wait(other_connection, "k2", 3 * kHour, other);  // the slot is used again: parked
  wait(alice_caller, "k3", 3 * kHour, parked);
  Recorder released;
  node->policy.release(bob_caller, ReleaseArgs{"k1", bobs.handle.to_string()}, released);
  ASSERT_TRUE(held_now("k1"));

  node->policy.end_session(alice_caller.session);
  node->dispatch();
  EXPECT_FALSE(status("k1").held);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided.code(0), ErrorCode::kUnavailable);
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked.code(0), ErrorCode::kUnavailable);
  EXPECT_EQ(tick(2 * kHour), 1u);  // the other connection's call only
  ASSERT_EQ(other.size(), 1u);
  ASSERT_TRUE(other.granted(0));
  EXPECT_EQ(other.hold(0).key, "k2");
  EXPECT_FALSE(status("k3").held);
}

TEST_F(RateGate, AGrantThatRacedWithTheWaitersDepartureIsReleasedToTheNextWaiter) {
  start(0);
  HoldState bobs = take(bob_caller, "k");
  Recorder& alices = recorder();
  Recorder& carols = recorder();
  wait(alice_caller, "k", kMinute, alices);
  wait(carol_caller, "k", kMinute, carols);

  // The release grants alice's waiter; her connection goes before the grant is delivered.
  Recorder released;
  node->policy.release(bob_caller, ReleaseArgs{"k", bobs.handle.to_string()}, released);
  node->policy.end_session(alice_caller.session);
  node->dispatch();
  ASSERT_EQ(alices.size(), 1u);
  EXPECT_EQ(alices.code(0), ErrorCode::kUnavailable);
  ASSERT_EQ(carols.size(), 1u);
  EXPECT_TRUE(carols.granted(0));
  StatusView k = status("k");
  EXPECT_TRUE(k.held);
  EXPECT_EQ(k.hold.held_by, "user:carol");
  EXPECT_EQ(k.waiters, 0u);
}

TEST_F(RateGate, ABlockingAssignOverTheCapWaitsAndOneWithoutTimeoutIsRateLimited) {
  start(1);
  take(alice_caller, "a");
  AssignArgs once;
  once.key = "job";
  once.holder_id = "worker-1";
  Recorder& refused = recorder();
  node->policy.assign(alice_caller, once, refused);
  node->dispatch();
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused.code(0), ErrorCode::kRateLimited);
  EXPECT_GT(std::get<std::int64_t>(refused.detail(0, "retryAfterMs")), 0);

  AssignArgs waiting = once;
  waiting.timeout_ms = 2 * kHour;
  Recorder& client = recorder();
  EXPECT_EQ(node->policy.assign(alice_caller, waiting, client), Issued::kWaiting);
  EXPECT_EQ(tick(61 * kMinute), 1u);
  ASSERT_EQ(client.size(), 1u);
  ASSERT_TRUE(client.granted(0));
  EXPECT_EQ(client.hold(0).kind, HoldKind::kAssigned);
  auto holder = node->answer([&](LockService& service, Completion& done) {
    return service.holder(alice_caller, "job", done);
  });
  ASSERT_TRUE(holder.ok());
  const auto& view = std::get<HolderView>(*holder);
  ASSERT_TRUE(view.holder.has_value());
  EXPECT_EQ(*view.holder, "worker-1");
}

TEST_F(RateGate, AMalformedAcquireIsRefusedWithoutUsingASlot) {
  start(1);
  AcquireArgs bad = args("k", 0);
  bad.ttl_ms = 0;
  Recorder& out = recorder();
  node->policy.try_acquire(alice_caller, bad, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.code(0), ErrorCode::kInvalidArgument);
  take(alice_caller, "k");
}

TEST_F(RateGate, FunctionsAreNotCapped) {
  start(1);
  Principal importer{PrincipalKind::kFunction, "importer", Role::kMember, {}};
  Caller fn{&importer, 7};
  for (const char* key : {"f1", "f2", "f3"}) take(fn, key);
}

}  // namespace
}  // namespace holdfast::testing
