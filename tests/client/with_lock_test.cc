// with_lock, LockScope and locked(): release on every path, background renewal that outlives
// several TTLs and stops with fn, and the lost-lease signal.
#include <gtest/gtest.h>

#include <future>
#include <stdexcept>

#include "holdfast/client.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using namespace std::chrono_literals;
using testing::ServerProcess;

class WithLock : public ::testing::Test {
 protected:
  ServerProcess server;
  Client client{server.url()};
};

TEST_F(WithLock, ReturnsFnsValueAndReleases) {
  int value = client.with_lock("k", [&] {
    EXPECT_TRUE(client.status("k").held());
    return 42;
  });
  EXPECT_EQ(value, 42);
  EXPECT_FALSE(client.status("k").held());
}

TEST_F(WithLock, VoidFnAndTheContextShowsTheFencingToken) {
  std::uint64_t seen = 0;
  client.with_lock("k", {.ttl = 5000ms, .timeout = 1000ms, .owner = "run-1"},
                   [&](LockContext& ctx) {
                     seen = ctx.token();
                     EXPECT_EQ(ctx.key(), "k");
                     EXPECT_EQ(ctx.lock_handle().owner, "run-1");
                     EXPECT_EQ(client.status("k").hold->token, ctx.token());
                     EXPECT_FALSE(ctx.lost());
                   });
  EXPECT_GT(seen, 0u);
  EXPECT_FALSE(client.status("k").held());
}

TEST_F(WithLock, ReleasesWhenFnThrowsAndTheExceptionPropagates) {
  EXPECT_THROW(client.with_lock("k",
                                [&]() -> int {
                                  EXPECT_TRUE(client.status("k").held());
                                  throw std::runtime_error("boom");
                                }),
               std::runtime_error);
  EXPECT_FALSE(client.status("k").held());
  EXPECT_EQ(client.stats().renewing_scopes, 0u);
}

TEST_F(WithLock, DoesNotRunFnWhenTheKeyIsNotWon) {
  auto holder = server.client();
  holder.call({"LOCK.TRY", "k", "TTL", "60000"});
  bool ran = false;
  EXPECT_THROW(client.with_lock("k", {.ttl = 1000ms, .timeout = 100ms}, [&] { ran = true; }),
               LockTimeoutError);
  EXPECT_FALSE(ran);
}

TEST_F(WithLock, BackgroundRenewalKeepsTheHoldPastThreeTtlsAndStopsWhenFnReturns) {
  const auto ttl = 600ms;
  std::uint64_t token = 0;
  client.with_lock("long", {.ttl = ttl, .timeout = 1000ms}, [&](LockContext& ctx) {
    token = ctx.token();
    const auto acquired_at = ctx.lock_handle().acquired_at;
    // Work for more than three TTLs; the lease must never be lost meanwhile.
    EXPECT_FALSE(ctx.wait_lost(3 * ttl + 600ms));
    LockStatus s = client.status("long");
    ASSERT_TRUE(s.held());
    EXPECT_EQ(s.hold->token, token) << "the same grant, renewed, not re-acquired";
    EXPECT_GT(*s.hold->lease_expires_at, acquired_at + 3 * ttl);
    EXPECT_GE(client.stats().renewals, 5u);
    Client other(server.url());
    EXPECT_FALSE(other.try_acquire("long", {.ttl = 1000ms})) << "still held by us";
  });
  // Renewal has stopped before with_lock returned, and the hold is gone at once.
  EXPECT_EQ(client.stats().renewing_scopes, 0u);
  const auto renewals = client.stats().renewals;
  EXPECT_FALSE(client.status("long").held());
  Client other(server.url());
  EXPECT_TRUE(other.try_acquire("long", {.ttl = 1000ms}));
  EXPECT_EQ(client.stats().renewals, renewals);
}

TEST_F(WithLock, WithoutRenewalTheLeaseEndsAndFnSeesItLost) {
  client.with_lock("short", {.ttl = 300ms, .timeout = 1000ms, .renew = false},
                   [&](LockContext& ctx) {
                     EXPECT_FALSE(ctx.lost());
                     EXPECT_TRUE(ctx.wait_lost(5000ms));
                     EXPECT_TRUE(ctx.lost());
                     // The client errs on the early side; the server ends the lease at most a
                     // moment later.
                     Client other(server.url());
                     EXPECT_NO_THROW(other.acquire("short", {.ttl = 1000ms, .timeout = 1000ms}));
                   });
}

TEST_F(WithLock, LostLeaseSignalFiresWhenTheHoldIsRetakenByOwnerElsewhere) {
  std::promise<LockHandle> lost_promise;
  auto lost_future = lost_promise.get_future();
  WithLockOptions options{.ttl = 1500ms, .timeout = 1000ms, .owner = "run-42"};
  options.on_lost = [&](const LockHandle& h) { lost_promise.set_value(h); };
  std::uint64_t retaken_token = 0;
  client.with_lock("job", options, [&](LockContext& ctx) {
    // Another process of the same principal restarts the run and re-takes its hold.
    Client elsewhere(server.url());
    auto retaken = elsewhere.try_acquire("job", {.ttl = 60000ms, .owner = "run-42"});
    ASSERT_TRUE(retaken);
    retaken_token = retaken->token;
    EXPECT_TRUE(ctx.wait_lost(5000ms)) << "the next renewal answers lease_lost";
    EXPECT_TRUE(ctx.lost());
    ASSERT_EQ(lost_future.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(lost_future.get().token, ctx.token());
  });
  // with_lock's own release was refused (not_holder): the re-taken hold is untouched.
  LockStatus s = client.status("job");
  ASSERT_TRUE(s.held());
  EXPECT_EQ(s.hold->token, retaken_token);
}

TEST_F(WithLock, LockedBuildsTheKeyFromATemplate) {
  std::string seen_key;
  auto moved = client.locked("task:{}:{}", "board", 7).run([&](LockContext& ctx) {
    seen_key = ctx.key();
    EXPECT_TRUE(client.status("task:board:7").held());
    return std::string("moved");
  });
  EXPECT_EQ(moved, "moved");
  EXPECT_EQ(seen_key, "task:board:7");
  EXPECT_FALSE(client.status("task:board:7").held());
  EXPECT_EQ(client.locked("payment:{}", 9).key(), "payment:9");
  client.locked("payment:{}", 9).options({.ttl = 2000ms, .renew = false}).run([&] {
    auto s = client.status("payment:9");
    EXPECT_EQ(*s.hold->lease_expires_at - s.hold->acquired_at, 2000ms);
  });
  const std::string order_id = "ord-5";
  EXPECT_EQ(client.locked("payment:{orderId}", {{"orderId", order_id}}).run([&] {
    return client.status("payment:ord-5").held();
  }),
            true);
  EXPECT_FALSE(client.status("payment:ord-5").held());
}

TEST_F(WithLock, LockScopeCanReleaseEarlyOnce) {
  LockScope scope(client, "scoped", {.ttl = 5000ms, .timeout = 1000ms});
  EXPECT_TRUE(client.status("scoped").held());
  EXPECT_TRUE(scope.release().released);
  EXPECT_FALSE(client.status("scoped").held());
  EXPECT_EQ(scope.release().reason, "already_released");
}

TEST_F(WithLock, BadRenewFractionIsRefusedBeforeAcquiring) {
  EXPECT_THROW(client.with_lock("k", {.renew_fraction = 1.5}, [] {}), InvalidArgumentError);
  EXPECT_FALSE(client.status("k").held());
}

}  // namespace
}  // namespace holdfast
