// Several keys at once through the public Client against the real server (docs/lock-kinds.md,
// "Several keys at once"): acquire_all / try_acquire_all are all or nothing, the group's one
// handle renews and releases every key, with_locks runs fn with every key held and releases
// them all on every way out, and refusals are typed errors that leave nothing held.
#include <gtest/gtest.h>

#include <future>
#include <stdexcept>

#include "holdfast/client.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using namespace std::chrono_literals;
using testing::ServerProcess;

class ClientMultiKey : public ::testing::Test {
 protected:
  bool held(const std::string& key) { return client.status(key).held(); }

  ServerProcess server;
  Client client{server.url()};
  Client other{server.url()};
};

TEST_F(ClientMultiKey, AcquireAllHoldsEveryKeyInItsModeUnderOneHandle) {
  LockGroup g = client.acquire_all({{.key = "b"},
                                    {.key = "a", .mode = AcquireMode::shared()},
                                    {.key = "pool", .mode = AcquireMode::semaphore(4, 2)}},
                                   {.ttl = 60s, .timeout = 1s, .owner = "job-7"});
  ASSERT_EQ(g.holds.size(), 3u);
  // Key order (sorted as bytes), tokens from the one counter in that order.
  EXPECT_EQ(g.holds[0].key, "a");
  EXPECT_EQ(g.holds[1].key, "b");
  EXPECT_EQ(g.holds[2].key, "pool");
  EXPECT_LT(g.holds[0].token, g.holds[1].token);
  EXPECT_LT(g.holds[1].token, g.holds[2].token);
  for (const LockHandle& h : g.holds) {
    EXPECT_EQ(h.handle, g.handle);
    EXPECT_EQ(h.lease_expires_at, g.lease_expires_at);
    EXPECT_EQ(h.owner, "job-7");
  }
  EXPECT_EQ(g.holds[0].mode, LockMode::kShared);
  EXPECT_EQ(g.holds[1].mode, LockMode::kExclusive);
  EXPECT_EQ(g.holds[2].mode, LockMode::kSemaphore);
  EXPECT_EQ(g.holds[2].take, 2u);
  EXPECT_EQ(g.holds[2].permits, 4u);
  ASSERT_NE(g.find("b"), nullptr);
  EXPECT_EQ(g.find("b")->token, client.status("b").hold->token);
  EXPECT_EQ(g.find("c"), nullptr);

  EXPECT_FALSE(other.try_acquire("b", {.ttl = 1s}));
  EXPECT_TRUE(other.try_acquire("a", {.ttl = 1s, .mode = AcquireMode::shared()}))
      << "a is held shared by the group";
}

TEST_F(ClientMultiKey, ReleasingTheGroupFreesEveryKey) {
  LockGroup g = client.acquire_all({{"a"}, {"b"}, {"c"}}, {.ttl = 60s});
  ASSERT_TRUE(held("a") && held("b") && held("c"));
  ReleaseResult r = client.release(g);
  EXPECT_TRUE(r.released);
  EXPECT_FALSE(held("a"));
  EXPECT_FALSE(held("b"));
  EXPECT_FALSE(held("c"));
  ReleaseResult again = client.release(g);
  EXPECT_FALSE(again.released);
  EXPECT_EQ(again.reason, "not_holder");
}

TEST_F(ClientMultiKey, RenewingTheGroupMovesEveryKeysLease) {
  LockGroup g = client.acquire_all({{"a"}, {"b"}}, {.ttl = 2s});
  RenewResult r = client.renew(g, 60s);
  ASSERT_TRUE(r.renewed);
  ASSERT_TRUE(r.lease_expires_at);
  EXPECT_GT(*r.lease_expires_at, g.lease_expires_at + 50s);
  EXPECT_EQ(client.status("a").hold->lease_expires_at, r.lease_expires_at);
  EXPECT_EQ(client.status("b").hold->lease_expires_at, r.lease_expires_at);
}

TEST_F(ClientMultiKey, ATryWithOneConflictingKeyGetsNothingAndHoldsNothing) {
  LockHandle b = other.acquire("b", {.ttl = 60s});
  EXPECT_FALSE(client.try_acquire_all({{"a"}, {"b"}, {"c"}}, {.ttl = 60s}));
  EXPECT_FALSE(held("a"));
  EXPECT_FALSE(held("c"));
  EXPECT_EQ(client.status("b").hold->token, b.token);
  // A blocking acquire times out naming the first key in key order; nothing is held then.
  try {
    client.acquire_all({{"c"}, {"b"}, {"a"}}, {.ttl = 60s, .timeout = 150ms});
    FAIL() << "expected LockTimeoutError";
  } catch (const LockTimeoutError& e) {
    EXPECT_EQ(e.key(), "a");
    EXPECT_EQ(e.timeout(), 150ms);
  }
  EXPECT_FALSE(held("a"));
  EXPECT_FALSE(held("c"));
  // Once b is free the whole group is granted.
  ASSERT_TRUE(other.release(b));
  auto g = client.try_acquire_all({{"a"}, {"b"}, {"c"}}, {.ttl = 60s});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->holds.size(), 3u);
}

TEST_F(ClientMultiKey, AWaitingGroupIsGrantedWhenItsLastKeyFrees) {
  LockHandle b = other.acquire("b", {.ttl = 60s});
  auto waiting = std::async(std::launch::async, [&] {
    return client.acquire_all({{"a"}, {"b"}}, {.ttl = 60s, .timeout = 10s});
  });
  auto resp = server.client();
  ASSERT_TRUE(testing::await_waiters(resp, "b", 1));
  EXPECT_FALSE(held("a")) << "a waiting group holds none of its keys";
  ASSERT_TRUE(other.release(b));
  LockGroup g = waiting.get();
  EXPECT_EQ(client.status("a").hold->token, g.find("a")->token);
  EXPECT_EQ(client.status("b").hold->token, g.find("b")->token);
}

TEST_F(ClientMultiKey, WithLocksRunsFnWithEveryKeyHeldAndReleasesAll) {
  int value =
      client.with_locks({{"accounts/1"}, {"accounts/2"}, {"catalog", AcquireMode::shared()}},
                        {.ttl = 10s, .timeout = 1s}, [&](LockGroupContext& ctx) {
                          const LockGroup g = ctx.group();
                          EXPECT_EQ(g.holds.size(), 3u);
                          for (const char* key : {"accounts/1", "accounts/2", "catalog"}) {
                            LockStatus s = client.status(key);
                            EXPECT_TRUE(s.held()) << key;
                            EXPECT_EQ(s.hold->token, ctx.token(key)) << key;
                          }
                          EXPECT_EQ(client.status("catalog").mode, LockMode::kShared);
                          EXPECT_FALSE(other.try_acquire("accounts/2", {.ttl = 1s}));
                          EXPECT_THROW(ctx.token("nope"), InvalidArgumentError);
                          EXPECT_FALSE(ctx.lost());
                          return 7;
                        });
  EXPECT_EQ(value, 7);
  EXPECT_FALSE(held("accounts/1"));
  EXPECT_FALSE(held("accounts/2"));
  EXPECT_FALSE(held("catalog"));
}

TEST_F(ClientMultiKey, WithLocksReleasesWhenFnThrowsAndDoesNotRunFnWhenNotWon) {
  EXPECT_THROW(client.with_locks({{"a"}, {"b"}}, [] { throw std::runtime_error("boom"); }),
               std::runtime_error);
  EXPECT_FALSE(held("a"));
  EXPECT_FALSE(held("b"));

  LockHandle b = other.acquire("b", {.ttl = 60s});
  bool ran = false;
  EXPECT_THROW(client.with_locks({{"a"}, {"b"}}, {.timeout = 0ms}, [&] { ran = true; }),
               LockTimeoutError);
  EXPECT_FALSE(ran);
  EXPECT_FALSE(held("a"));
}

TEST_F(ClientMultiKey, WithLocksRenewsTheGroupPastItsTtl) {
  client.with_locks({{"a"}, {"b"}}, {.ttl = 300ms}, [&](LockGroupContext& ctx) {
    const auto first_end = ctx.group().lease_expires_at;
    // Three TTLs later both keys are still held by this group: the monitor renewed them.
    EXPECT_FALSE(ctx.wait_lost(900ms));
    EXPECT_EQ(client.status("a").hold->token, ctx.token("a"));
    EXPECT_EQ(client.status("b").hold->token, ctx.token("b"));
    EXPECT_GT(ctx.group().lease_expires_at, first_end);
    EXPECT_GE(client.stats().renewals, 2u);
  });
  EXPECT_FALSE(held("a"));
}

TEST_F(ClientMultiKey, TheServersRefusalsAreTypedErrorsAndTakeNothing) {
  EXPECT_THROW(client.acquire_all({{"a"}, {"a"}}), InvalidArgumentError) << "a key twice";
  EXPECT_THROW(client.acquire_all({}), InvalidArgumentError) << "no keys";
  EXPECT_THROW(client.try_acquire_all({{"a"}, {"b"}}, {.ttl = 0ms}), InvalidArgumentError);
  EXPECT_THROW(client.acquire_all({{"a"}}, {.timeout = -1ms}), InvalidArgumentError);
  EXPECT_THROW(client.release(LockGroup{}), InvalidArgumentError);
  EXPECT_FALSE(held("a"));
}

}  // namespace
}  // namespace holdfast
