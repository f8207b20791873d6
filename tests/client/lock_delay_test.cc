// Lock-delay through the public Client against the real server (docs/lock-kinds.md,
// "Lock-delay"): the option is sent on acquire, try_acquire, with_lock and assign; the hold and
// status read it back; a hold that expires keeps its key closed until the delay ends; a
// release closes nothing; an out-of-range delay is the server's InvalidArgumentError. The
// server's clock is real here, so the tests use short leases and poll status with a deadline.
#include <gtest/gtest.h>

#include <thread>

#include "holdfast/client.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using namespace std::chrono_literals;
using testing::ServerProcess;

class ClientLockDelay : public ::testing::Test {
 protected:
  // Polls status until the key is no longer held (its lease ended); that status. Fails the
  // test if it never is.
  LockStatus await_not_held(const std::string& key) {
    const auto deadline = std::chrono::steady_clock::now() + testing::kEventually;
    for (;;) {
      LockStatus s = client.status(key);
      if (!s.held()) return s;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << key << " still held";
        return s;
      }
      std::this_thread::sleep_for(10ms);
    }
  }

  ServerProcess server;
  Client client{server.url()};
  Client other{server.url()};
};

TEST_F(ClientLockDelay, AnExpiredHoldKeepsTheKeyClosedUntilTheDelayEnds) {
  LockHandle h = client.acquire("job", {.ttl = 200ms, .timeout = 0ms, .lock_delay = 1500ms});
  EXPECT_EQ(h.lock_delay, 1500ms);
  LockStatus held = client.status("job");
  ASSERT_TRUE(held.held());
  EXPECT_EQ(held.hold->lock_delay, 1500ms) << "status shows the hold's delay";
  EXPECT_FALSE(held.lock_delay_until) << "not closed while the hold lives";

  LockStatus closed = await_not_held("job");
  ASSERT_TRUE(closed.lock_delay_until) << "the expiry closed the key";
  EXPECT_EQ(*closed.lock_delay_until, h.lease_expires_at + 1500ms);
  // Closed to everyone, the expired holder included, until the delay ends.
  EXPECT_FALSE(other.try_acquire("job", {.ttl = 1s}));
  EXPECT_FALSE(client.try_acquire("job", {.ttl = 1s}));
  // A blocking acquire is granted once the key opens, not before.
  LockHandle next = other.acquire("job", {.ttl = 1s, .timeout = testing::kEventually});
  EXPECT_GE(next.acquired_at, *closed.lock_delay_until);
  EXPECT_EQ(next.lock_delay, 0ms) << "a hold that asked for no delay has none";
  EXPECT_FALSE(client.status("job").lock_delay_until);
}

TEST_F(ClientLockDelay, TryAcquireAndWithLockSendTheDelayAndAReleaseClosesNothing) {
  auto h = client.try_acquire("job", {.ttl = 60s, .lock_delay = 60s});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->lock_delay, 60s);
  EXPECT_TRUE(client.release(*h));
  auto again = other.try_acquire("job", {.ttl = 60s});
  ASSERT_TRUE(again) << "a release leaves the key open";
  EXPECT_TRUE(other.release(*again));

  client.with_lock("job", {.ttl = 60s, .timeout = 1s, .lock_delay = 250ms}, [&](LockContext& ctx) {
    EXPECT_EQ(ctx.lock_handle().lock_delay, 250ms);
    EXPECT_EQ(client.status("job").hold->lock_delay, 250ms);
  });
  EXPECT_TRUE(other.try_acquire("job", {.ttl = 1s})) << "with_lock released: nothing closed";
}

TEST_F(ClientLockDelay, AssignCarriesTheDelay) {
  Assignment a = client.assign("turn", "alice", {.ttl = 60s, .lock_delay = 2s});
  EXPECT_EQ(a.lock_delay, 2s);
  EXPECT_EQ(client.status("turn").hold->lock_delay, 2s);
}

TEST_F(ClientLockDelay, AnOutOfRangeDelayIsRefusedAndTakesNothing) {
  try {
    client.try_acquire("job", {.ttl = 1s, .lock_delay = 60001ms});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(e.code(), "INVALID_ARGUMENT");
    EXPECT_EQ(e.details().at("lockDelayMs"), "60001") << e.what();
  }
  EXPECT_THROW(client.acquire("job", {.ttl = 1s, .timeout = 0ms, .lock_delay = -1ms}),
               InvalidArgumentError);
  EXPECT_FALSE(client.status("job").held());
}

}  // namespace
}  // namespace holdfast
