// Shared and semaphore holds through the public Client against the real server: the mode and
// permits asked for, the reply and status fields read back, with_shared_lock / with_permits,
// the local queue skipped for these modes, and the server's refusals as typed errors.
#include <gtest/gtest.h>

#include <future>

#include "holdfast/client.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using namespace std::chrono_literals;
using testing::ServerProcess;

class ClientModes : public ::testing::Test {
 protected:
  ServerProcess server;
  Client client{server.url()};
};

TEST_F(ClientModes, SharedHoldsCoexistAndKeepAWriterOut) {
  LockHandle a = client.acquire("doc", {.ttl = 60s, .timeout = 1s, .mode = AcquireMode::shared()});
  auto b = client.try_acquire("doc", {.ttl = 60s, .mode = AcquireMode::shared()});
  ASSERT_TRUE(b) << "a second reader is granted beside the first";
  EXPECT_EQ(a.mode, LockMode::kShared);
  EXPECT_EQ(b->mode, LockMode::kShared);
  EXPECT_NE(a.handle, b->handle);
  EXPECT_GT(b->token, a.token);
  EXPECT_EQ(a.take, 0u);

  Client writer(server.url());
  EXPECT_FALSE(writer.try_acquire("doc", {.ttl = 60s}));
  EXPECT_THROW(writer.acquire("doc", {.ttl = 60s, .timeout = 100ms}), LockTimeoutError);

  LockStatus s = client.status("doc");
  ASSERT_TRUE(s.held());
  EXPECT_EQ(s.mode, LockMode::kShared);
  ASSERT_EQ(s.holders.size(), 2u);
  EXPECT_EQ(s.holders[0].token, a.token);
  EXPECT_EQ(s.holders[1].token, b->token);
  EXPECT_EQ(s.holders[1].mode, LockMode::kShared);
  EXPECT_EQ(s.hold->token, b->token) << "hold is the newest";

  EXPECT_TRUE(client.release(a));
  EXPECT_TRUE(client.release(*b));
  auto w = writer.try_acquire("doc", {.ttl = 60s});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->mode, LockMode::kExclusive);
  LockStatus e = client.status("doc");
  EXPECT_EQ(e.mode, LockMode::kExclusive);
  ASSERT_EQ(e.holders.size(), 1u);
  EXPECT_EQ(e.holders[0].token, w->token);
}

TEST_F(ClientModes, SemaphorePermitsAreCountedInRepliesAndStatus) {
  LockHandle two = client.acquire("gpus", {.ttl = 60s, .mode = AcquireMode::semaphore(3, 2)});
  EXPECT_EQ(two.mode, LockMode::kSemaphore);
  EXPECT_EQ(two.take, 2u);
  EXPECT_EQ(two.permits, 3u);
  auto one = client.try_acquire("gpus", {.ttl = 60s, .mode = AcquireMode::semaphore(3)});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->take, 1u);
  EXPECT_FALSE(client.try_acquire("gpus", {.ttl = 60s, .mode = AcquireMode::semaphore(3)}))
      << "all three permits are taken";

  LockStatus s = client.status("gpus");
  EXPECT_EQ(s.mode, LockMode::kSemaphore);
  EXPECT_EQ(s.permits, 3u);
  EXPECT_EQ(s.free_permits, 0u);
  ASSERT_EQ(s.holders.size(), 2u);
  EXPECT_EQ(s.holders[0].take, 2u);
  EXPECT_EQ(s.holders[0].permits, 3u);

  EXPECT_TRUE(client.release(two));
  s = client.status("gpus");
  EXPECT_EQ(s.free_permits, 2u);
  ASSERT_EQ(s.holders.size(), 1u);
  EXPECT_EQ(s.hold->token, one->token);

  ListPage page = client.list({.match = "gpus"});
  ASSERT_EQ(page.holds.size(), 1u);
  EXPECT_EQ(page.holds[0].mode, LockMode::kSemaphore);
  EXPECT_EQ(page.holds[0].take, 1u);
}

TEST_F(ClientModes, MismatchedModesAndPermitsAreInvalidArgumentsAndChangeNothing) {
  auto held = client.try_acquire("sem", {.ttl = 60s, .mode = AcquireMode::semaphore(3)});
  ASSERT_TRUE(held);
  EXPECT_THROW(client.try_acquire("sem", {.ttl = 60s, .mode = AcquireMode::semaphore(4)}),
               InvalidArgumentError);
  EXPECT_THROW(client.acquire("sem", {.ttl = 60s, .mode = AcquireMode::shared()}),
               InvalidArgumentError);
  EXPECT_THROW(client.try_acquire("other", {.ttl = 60s, .mode = AcquireMode::semaphore(2, 3)}),
               InvalidArgumentError);
  EXPECT_THROW(client.try_acquire("other", {.ttl = 60s, .mode = AcquireMode::semaphore(0)}),
               InvalidArgumentError);
  LockStatus s = client.status("sem");
  EXPECT_EQ(s.holders.size(), 1u);
  EXPECT_EQ(s.free_permits, 2u);
  EXPECT_FALSE(client.status("other").held());
}

TEST_F(ClientModes, SharedScopesOfOneClientRunTogether) {
  // Exclusive scopes of one Client take turns on the local queue; shared ones must not, or a
  // reader would wait for another reader of its own process.
  std::promise<void> first_inside, second_inside;
  auto first = std::async(std::launch::async, [&] {
    client.with_shared_lock("catalog", {.ttl = 10s, .timeout = 5s}, [&](LockContext& ctx) {
      EXPECT_EQ(ctx.lock_handle().mode, LockMode::kShared);
      first_inside.set_value();
      EXPECT_EQ(second_inside.get_future().wait_for(5s), std::future_status::ready);
    });
  });
  ASSERT_EQ(first_inside.get_future().wait_for(5s), std::future_status::ready);
  client.with_shared_lock("catalog", {.ttl = 10s, .timeout = 1s}, [&] {
    EXPECT_EQ(client.status("catalog").holders.size(), 2u);
    second_inside.set_value();
  });
  first.get();
  EXPECT_FALSE(client.status("catalog").held());
}

TEST_F(ClientModes, WithPermitsHoldsItsPermitsAndReleasesThem) {
  int value = client.with_permits("pool", 4, 3, [&](LockContext& ctx) {
    EXPECT_EQ(ctx.lock_handle().take, 3u);
    LockStatus s = client.status("pool");
    EXPECT_EQ(s.free_permits, 1u);
    EXPECT_FALSE(client.try_acquire("pool", {.ttl = 1s, .mode = AcquireMode::semaphore(4, 2)}));
    return 7;
  });
  EXPECT_EQ(value, 7);
  EXPECT_FALSE(client.status("pool").held());
}

TEST_F(ClientModes, AWriterQueuedBehindReadersIsGrantedWhenTheyLeave) {
  LockHandle reader =
      client.acquire("doc", {.ttl = 60s, .timeout = 1s, .mode = AcquireMode::shared()});
  Client writer_client(server.url());
  auto writer = std::async(std::launch::async, [&] {
    return writer_client.acquire("doc", {.ttl = 60s, .timeout = testing::kEventually});
  });
  // Wait until the writer is in the server's queue, then a new reader must queue behind it.
  const auto deadline = std::chrono::steady_clock::now() + testing::kEventually;
  while (client.status("doc").waiters == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(2ms);
  ASSERT_EQ(client.status("doc").waiters, 1);
  EXPECT_FALSE(client.try_acquire("doc", {.ttl = 60s, .mode = AcquireMode::shared()}))
      << "no reader overtakes a waiting writer";
  EXPECT_TRUE(client.release(reader));
  LockHandle w = writer.get();
  EXPECT_EQ(w.mode, LockMode::kExclusive);
  EXPECT_GT(w.token, reader.token);
}

}  // namespace
}  // namespace holdfast
