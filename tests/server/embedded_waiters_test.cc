// EmbeddedService's waiters on a fake clock: a blocking acquire or assign over the rate cap
// waits for its turn inside its timeout (SPEC section 4), and a waiter whose client goes away
// leaves nothing behind, not even a grant that was decided but not yet delivered (SPEC section
// 8, "a grant that raced with the disconnect is released").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/principal.h"
#include "server/embedded_service.h"
#include "store/memory_store.h"

namespace holdfast {
namespace {

constexpr Millis kMinute = 60'000;
constexpr Millis kHour = 60 * kMinute;

// What a connection would be told.
class Recorder final : public WaiterClient {
 public:
  void on_waiter_outcome(const WaiterOutcome& outcome) override { outcomes.push_back(outcome); }
  std::vector<WaiterOutcome> outcomes;
};

class EmbeddedWaiters : public ::testing::Test {
 protected:
  void start(std::int64_t cap) {
    ServiceOptions options;
    options.acquire_per_user_per_hour = cap;
    service = std::make_unique<EmbeddedService>(clock, store, options);
    ASSERT_TRUE(service->recover().ok());
  }

  // What the loop does after every event: due timers, then deliveries.
  std::size_t tick(Millis ms) {
    clock.advance(ms);
    service->advance();
    return service->dispatch_outcomes();
  }

  Result<AcquireOutcome> acquire(const Caller& caller, std::string_view key, Millis timeout_ms,
                                 WaiterClient* client) {
    AcquireArgs args;
    args.key = key;
    args.ttl_ms = 10 * kHour;
    args.timeout_ms = timeout_ms;
    return service->acquire(caller, args, client);
  }

  HoldState take(const Caller& caller, std::string_view key) {
    Result<AcquireOutcome> out = acquire(caller, key, 0, nullptr);
    EXPECT_TRUE(out.ok());
    EXPECT_EQ(out->kind, AcquireOutcome::Kind::kGranted) << key;
    return out->hold;
  }

  // Queued (deferred by the cap, or behind a holder): the waiter id.
  WaiterId wait(const Caller& caller, std::string_view key, Millis timeout_ms, WaiterClient* client) {
    Result<AcquireOutcome> out = acquire(caller, key, timeout_ms, client);
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
    if (!out.ok()) return 0;
    EXPECT_EQ(out->kind, AcquireOutcome::Kind::kQueued) << key;
    return out->waiter;
  }

  StatusView status(std::string_view key) {
    Result<StatusView> s = service->status(alice_caller, key);
    EXPECT_TRUE(s.ok());
    return *s;
  }

  FakeClock clock;
  MemoryStore store;
  std::unique_ptr<EmbeddedService> service;
  Principal alice{PrincipalKind::kMember, "alice", Role::kMember, {}};
  Principal bob{PrincipalKind::kMember, "bob", Role::kMember, {}};
  Principal carol{PrincipalKind::kMember, "carol", Role::kMember, {}};
  Caller alice_caller{&alice, 1};
  Caller bob_caller{&bob, 2};
  Caller carol_caller{&carol, 3};
};

TEST_F(EmbeddedWaiters, ABlockingAcquireOverTheCapGetsTheKeyWhenTheWindowFreesASlot) {
  start(2);
  take(alice_caller, "a");
  take(alice_caller, "b");
  Recorder client;
  wait(alice_caller, "c", 2 * kHour, &client);
  ASSERT_TRUE(service->next_deadline().has_value());
  EXPECT_LE(*service->next_deadline(), clock.now_ms() + kHour);

  EXPECT_EQ(tick(30 * kMinute), 0u);
  EXPECT_FALSE(status("c").held);
  EXPECT_EQ(tick(31 * kMinute), 1u);
  ASSERT_EQ(client.outcomes.size(), 1u);
  EXPECT_TRUE(client.outcomes[0].granted);
  EXPECT_EQ(client.outcomes[0].hold.key, "c");
  EXPECT_EQ(client.outcomes[0].hold.held_by, "user:alice");
  StatusView c = status("c");
  EXPECT_TRUE(c.held);
  EXPECT_EQ(c.hold.token, client.outcomes[0].hold.token);
}

TEST_F(EmbeddedWaiters, TwoDeferredAcquiresOfOneUserTakeTheSlotsAsTheyFreeOneAtATime) {
  start(1);
  take(alice_caller, "a");
  Recorder first, second;
  wait(alice_caller, "k1", 3 * kHour, &first);
  wait(alice_caller, "k2", 3 * kHour, &second);

  EXPECT_EQ(tick(61 * kMinute), 1u);
  ASSERT_EQ(first.outcomes.size(), 1u);
  EXPECT_TRUE(first.outcomes[0].granted);
  EXPECT_TRUE(second.outcomes.empty());
  EXPECT_EQ(tick(30 * kMinute), 0u);
  EXPECT_EQ(tick(31 * kMinute), 1u);
  ASSERT_EQ(second.outcomes.size(), 1u);
  EXPECT_TRUE(second.outcomes[0].granted);
  EXPECT_EQ(second.outcomes[0].hold.key, "k2");
}

TEST_F(EmbeddedWaiters, ADeferredAcquireWhoseTimeoutPassesFirstTimesOutWithoutUsingASlot) {
  start(1);
  take(alice_caller, "a");
  Recorder client;
  wait(alice_caller, "b", 10 * kMinute, &client);

  EXPECT_EQ(tick(10 * kMinute), 1u);
  ASSERT_EQ(client.outcomes.size(), 1u);
  EXPECT_FALSE(client.outcomes[0].granted);
  EXPECT_EQ(client.outcomes[0].key, "b");
  EXPECT_EQ(client.outcomes[0].timeout_ms, 10 * kMinute);
  EXPECT_FALSE(status("b").held);

  // The hour after the first try: the one slot is free, the wait did not count.
  clock.advance(51 * kMinute);
  take(alice_caller, "b");
}

TEST_F(EmbeddedWaiters, ADeferredAcquireThatFindsTheKeyHeldQueuesBehindTheHolder) {
  start(1);
  HoldState bobs = take(bob_caller, "k");
  take(alice_caller, "other");
  Recorder client;
  wait(alice_caller, "k", 2 * kHour, &client);

  EXPECT_EQ(tick(61 * kMinute), 0u);
  EXPECT_EQ(status("k").waiters, 1u);
  ASSERT_TRUE(service->release(bob_caller, "k", bobs.handle.to_string()).ok());
  EXPECT_EQ(service->dispatch_outcomes(), 1u);
  ASSERT_EQ(client.outcomes.size(), 1u);
  EXPECT_TRUE(client.outcomes[0].granted);
  EXPECT_GT(client.outcomes[0].hold.token, bobs.token);
  EXPECT_EQ(status("k").hold.held_by, "user:alice");
}

TEST_F(EmbeddedWaiters, CancellingADeferredWaiterThatQueuedSinceLeavesTheQueue) {
  start(1);
  HoldState bobs = take(bob_caller, "k");
  take(alice_caller, "other");
  Recorder client;
  WaiterId id = wait(alice_caller, "k", 2 * kHour, &client);
  tick(61 * kMinute);
  ASSERT_EQ(status("k").waiters, 1u);

  service->cancel_waiter(id);  // the id the caller was given, not the table's
  EXPECT_EQ(status("k").waiters, 0u);
  ASSERT_TRUE(service->release(bob_caller, "k", bobs.handle.to_string()).ok());
  EXPECT_EQ(service->dispatch_outcomes(), 0u);
  EXPECT_TRUE(client.outcomes.empty());
  EXPECT_FALSE(status("k").held);
}

TEST_F(EmbeddedWaiters, CancellingADeferredWaiterBeforeItsTurnMeansItNeverRuns) {
  start(1);
  take(alice_caller, "a");
  Recorder client;
  WaiterId id = wait(alice_caller, "k", 2 * kHour, &client);
  service->cancel_waiter(id);

  EXPECT_FALSE(service->next_deadline().has_value() &&
               *service->next_deadline() <= clock.now_ms() + kHour)
      << "a cancelled request still has a timer";
  EXPECT_EQ(tick(2 * kHour), 0u);
  EXPECT_FALSE(status("k").held);
  take(alice_caller, "k");  // its slot was never used
}

TEST_F(EmbeddedWaiters, ADeferredGrantWhoseClientLeftBeforeDeliveryIsReleased) {
  start(1);
  take(alice_caller, "a");
  Recorder client;
  WaiterId id = wait(alice_caller, "k", 2 * kHour, &client);
  clock.advance(61 * kMinute);
  service->advance();  // the grant is decided here and delivered by dispatch_outcomes()
  ASSERT_TRUE(status("k").held);

  service->cancel_waiter(id);
  EXPECT_FALSE(status("k").held);
  EXPECT_EQ(service->dispatch_outcomes(), 0u);
  EXPECT_TRUE(client.outcomes.empty());
}

TEST_F(EmbeddedWaiters, EndingASessionDropsItsDeferredRequestsAndReleasesUndeliveredGrants) {
  start(1);
  take(alice_caller, "a");
  Recorder decided, pending;
  Caller other_connection{&alice, 9};
  wait(alice_caller, "k1", 2 * kHour, &decided);
  clock.advance(61 * kMinute);
  service->advance();
  ASSERT_TRUE(status("k1").held);
  wait(other_connection, "k2", 2 * kHour, &pending);  // the slot is used again: deferred
  wait(alice_caller, "k3", 2 * kHour, &pending);

  service->end_session(alice_caller.session);
  EXPECT_FALSE(status("k1").held);
  EXPECT_EQ(tick(2 * kHour), 1u);  // the other connection's request only
  EXPECT_TRUE(decided.outcomes.empty());
  ASSERT_EQ(pending.outcomes.size(), 1u);
  EXPECT_EQ(pending.outcomes[0].key, "k2");
  EXPECT_FALSE(status("k3").held);
}

TEST_F(EmbeddedWaiters, AGrantThatRacedWithTheWaitersDepartureIsReleasedToTheNextWaiter) {
  start(0);
  HoldState bobs = take(bob_caller, "k");
  Recorder alices, carols;
  WaiterId alice_waits = wait(alice_caller, "k", kMinute, &alices);
  wait(carol_caller, "k", kMinute, &carols);

  // The release grants alice's waiter; her client goes before the grant is delivered.
  ASSERT_TRUE(service->release(bob_caller, "k", bobs.handle.to_string()).ok());
  service->cancel_waiter(alice_waits);
  EXPECT_EQ(service->dispatch_outcomes(), 1u);
  EXPECT_TRUE(alices.outcomes.empty());
  ASSERT_EQ(carols.outcomes.size(), 1u);
  EXPECT_TRUE(carols.outcomes[0].granted);
  StatusView k = status("k");
  EXPECT_TRUE(k.held);
  EXPECT_EQ(k.hold.held_by, "user:carol");
  EXPECT_EQ(k.waiters, 0u);
}

TEST_F(EmbeddedWaiters, ABlockingAssignOverTheCapWaitsAndOneWithoutTimeoutIsRateLimited) {
  start(1);
  take(alice_caller, "a");
  AssignArgs once;
  once.key = "job";
  once.holder_id = "worker-1";
  Result<AcquireOutcome> refused = service->assign(alice_caller, once, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kRateLimited);

  AssignArgs waiting = once;
  waiting.timeout_ms = 2 * kHour;
  Recorder client;
  Result<AcquireOutcome> queued = service->assign(alice_caller, waiting, &client);
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->kind, AcquireOutcome::Kind::kQueued);
  EXPECT_EQ(tick(61 * kMinute), 1u);
  ASSERT_EQ(client.outcomes.size(), 1u);
  EXPECT_TRUE(client.outcomes[0].granted);
  EXPECT_TRUE(client.outcomes[0].assign);
  Result<HolderView> holder = service->holder(alice_caller, "job");
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE(holder->holder.has_value());
  EXPECT_EQ(*holder->holder, "worker-1");
}

TEST_F(EmbeddedWaiters, AMalformedAcquireIsRefusedWithoutUsingASlot) {
  start(1);
  AcquireArgs bad;
  bad.key = "k";
  bad.ttl_ms = 0;
  Result<AcquireOutcome> out = service->acquire(alice_caller, bad, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  take(alice_caller, "k");
}

}  // namespace
}  // namespace holdfast
