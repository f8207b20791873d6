// Every call of the public Client against the real server: acquire, try_acquire, renew,
// release, status, list (paged), the assigned-hold calls, re-take, session holds, the timeout
// exception's fields and the typed errors.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "holdfast/client.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using namespace std::chrono_literals;
using testing::ServerProcess;

class ClientLocks : public ::testing::Test {
 protected:
  ServerProcess server;
  Client client{server.url()};
};

TEST_F(ClientLocks, AcquireReturnsAFullHandle) {
  auto before = Clock::now();
  LockHandle h = client.acquire("jobs:1", {.ttl = 5000ms, .timeout = 1000ms, .owner = "run-1"});
  EXPECT_EQ(h.key, "jobs:1");
  EXPECT_GE(h.handle.size(), 20u);
  EXPECT_GT(h.token, 0u);
  EXPECT_EQ(h.held_by, "user:local");
  EXPECT_EQ(h.owner, "run-1");
  EXPECT_EQ(h.scope, Scope::kLease);
  EXPECT_EQ(h.lease_expires_at - h.acquired_at, 5000ms);
  EXPECT_GE(h.acquired_at + 1s, before);
}

TEST_F(ClientLocks, TryAcquireIsNulloptWhenHeldAndReleaseFreesTheKey) {
  auto first = client.try_acquire("k", {.ttl = 60000ms});
  ASSERT_TRUE(first);
  Client other(server.url());
  EXPECT_FALSE(other.try_acquire("k", {.ttl = 60000ms}));
  ReleaseResult released = client.release(*first);
  EXPECT_TRUE(released.released);
  EXPECT_TRUE(released);
  auto second = other.try_acquire("k", {.ttl = 60000ms});
  ASSERT_TRUE(second);
  EXPECT_GT(second->token, first->token) << "fencing tokens only grow";
}

TEST_F(ClientLocks, ReleaseWithAStaleHandleSaysNotHolder) {
  auto h = client.acquire("k", {.ttl = 60000ms, .timeout = 0ms});
  ASSERT_TRUE(client.release(h));
  ReleaseResult again = client.release(h);
  EXPECT_FALSE(again.released);
  EXPECT_EQ(again.reason, "not_holder");
  EXPECT_FALSE(client.release("k", "not-a-handle-at-all-xxxxxx"));
}

TEST_F(ClientLocks, RenewMovesTheLeaseOrSaysLeaseLost) {
  auto h = client.acquire("k", {.ttl = 1000ms, .timeout = 0ms});
  RenewResult r = client.renew(h, 60000ms);
  ASSERT_TRUE(r.renewed);
  ASSERT_TRUE(r.lease_expires_at);
  EXPECT_GE(*r.lease_expires_at, h.lease_expires_at + 50s);
  EXPECT_EQ(client.status("k").hold->lease_expires_at, r.lease_expires_at);
  ASSERT_TRUE(client.release(h));
  RenewResult lost = client.renew(h.key, h.handle, 1000ms);
  EXPECT_FALSE(lost.renewed);
  EXPECT_FALSE(lost);
  EXPECT_EQ(lost.reason, "lease_lost");
}

TEST_F(ClientLocks, StatusOfAFreeAndAHeldKey) {
  LockStatus free = client.status("free");
  EXPECT_EQ(free.key, "free");
  EXPECT_FALSE(free.held());
  EXPECT_EQ(free.waiters, 0);
  auto h = client.acquire("held", {.ttl = 30000ms, .timeout = 0ms, .owner = "o"});
  LockStatus s = client.status("held");
  ASSERT_TRUE(s.held());
  EXPECT_EQ(s.hold->token, h.token);
  EXPECT_EQ(s.hold->owner, "o");
  EXPECT_EQ(s.hold->held_by, "user:local");
  EXPECT_EQ(s.hold->kind, HoldKind::kHandle);
  EXPECT_EQ(s.hold->lease_expires_at, h.lease_expires_at);
}

TEST_F(ClientLocks, ListPagesThroughMatchingHolds) {
  for (const char* k : {"list:a", "list:b", "list:c", "list:d", "list:e", "other:x"})
    ASSERT_TRUE(client.try_acquire(k, {.ttl = 60000ms}));
  std::set<std::string> seen;
  ListOptions page_options{.match = "list:*", .cursor = "0", .count = 2};
  int pages = 0;
  for (;;) {
    ListPage page = client.list(page_options);
    ++pages;
    EXPECT_LE(page.holds.size(), 2u);
    for (const auto& h : page.holds) EXPECT_TRUE(seen.insert(h.key).second) << "twice: " << h.key;
    if (page.last()) break;
    page_options.cursor = page.next_cursor;
    ASSERT_LT(pages, 10);
  }
  EXPECT_GE(pages, 3);
  EXPECT_EQ(seen, (std::set<std::string>{"list:a", "list:b", "list:c", "list:d", "list:e"}));
  EXPECT_EQ(client.list_all("list:*").size(), 5u);
  EXPECT_EQ(client.list_all().size(), 6u);
}

TEST_F(ClientLocks, ListAllFollowsTheCursorPastAFullPage) {
  // list_all asks for pages of 10 000: one more hold than that takes a second page, and the
  // first page (about 2.5 MB) arrives over many reads.
  constexpr int kHolds = 10'005;
  for (int i = 0; i < kHolds; ++i)
    ASSERT_TRUE(client.try_acquire("many:" + std::to_string(i), {.ttl = 60000ms}));
  ASSERT_TRUE(client.try_acquire("other", {.ttl = 60000ms}));
  ListPage first = client.list({.match = "many:*", .count = 10'000});
  EXPECT_EQ(first.holds.size(), 10'000u);
  EXPECT_FALSE(first.last());
  std::set<std::string> keys;
  for (const auto& h : client.list_all("many:*")) EXPECT_TRUE(keys.insert(h.key).second) << h.key;
  EXPECT_EQ(keys.size(), static_cast<std::size_t>(kHolds));
  EXPECT_EQ(keys.count("many:10004"), 1u);
  EXPECT_EQ(client.list_all().size(), static_cast<std::size_t>(kHolds) + 1);
}

TEST_F(ClientLocks, RetakeByOwnerFencesTheOldHandle) {
  auto first = client.acquire("import:u1", {.ttl = 60000ms, .timeout = 0ms, .owner = "run-7"});
  auto second = client.try_acquire("import:u1", {.ttl = 60000ms, .owner = "run-7"});
  ASSERT_TRUE(second);
  EXPECT_NE(second->handle, first.handle);
  EXPECT_GT(second->token, first.token);
  EXPECT_EQ(client.release(first).reason, "not_holder");
  EXPECT_EQ(client.renew(first, 1000ms).reason, "lease_lost");
  EXPECT_FALSE(client.try_acquire("import:u1", {.ttl = 60000ms, .owner = "run-8"}));
}

TEST_F(ClientLocks, BlockingAcquireWinsWhenTheHolderReleases) {
  auto holder = server.client();
  auto held = holder.call({"LOCK.TRY", "q", "TTL", "60000"});
  std::thread releaser([&] {
    auto watcher = server.client();
    ASSERT_TRUE(testing::await_waiters(watcher, "q", 1));
    holder.call({"LOCK.RELEASE", "q", held.text("handle")});
  });
  LockHandle h = client.acquire("q", {.ttl = 5000ms, .timeout = 10000ms});
  releaser.join();
  EXPECT_GT(h.token, static_cast<std::uint64_t>(held.number("token")));
}

TEST_F(ClientLocks, TimeoutThrowsLockTimeoutErrorWithKeyAndTimeout) {
  auto holder = server.client();
  holder.call({"LOCK.TRY", "busy", "TTL", "60000"});
  auto start = std::chrono::steady_clock::now();
  try {
    client.acquire("busy", {.ttl = 1000ms, .timeout = 300ms});
    FAIL() << "acquire of a held key returned";
  } catch (const LockTimeoutError& e) {
    EXPECT_EQ(e.code(), "LOCK_TIMEOUT");
    EXPECT_EQ(e.key(), "busy");
    EXPECT_EQ(e.timeout(), 300ms);
    EXPECT_EQ(e.details().at("key"), "busy");
    EXPECT_EQ(e.details().at("timeoutMs"), "300");
    EXPECT_NE(std::string(e.what()).find("LOCK_TIMEOUT"), std::string::npos);
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 290ms) << "it waited on the server";
  EXPECT_THROW(client.acquire("busy", {.ttl = 1000ms, .timeout = 0ms}), LockTimeoutError)
      << "0 = one attempt";
}

TEST_F(ClientLocks, ServerRefusalsAreTypedErrors) {
  try {
    client.try_acquire("bad\x01key", {.ttl = 1000ms});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(e.code(), "INVALID_ARGUMENT");
  }
  EXPECT_THROW(client.acquire("k", {.ttl = 0ms}), InvalidArgumentError);
  EXPECT_THROW(client.acquire("k", {.ttl = 1000ms, .timeout = -1ms}), InvalidArgumentError);
  EXPECT_THROW(client.try_acquire("k", {.ttl = 1000ms, .owner = ""}), InvalidArgumentError);
}

TEST_F(ClientLocks, AssignTransferUnassignHolderAndCheckHolder) {
  Assignment a = client.assign("doc:1", "alice");
  EXPECT_EQ(a.key, "doc:1");
  EXPECT_EQ(a.holder, "alice");
  EXPECT_EQ(a.held_by, "user:local");
  EXPECT_FALSE(a.lease_expires_at) << "no TTL: never expires";
  EXPECT_TRUE(client.check_holder("doc:1", "alice"));
  EXPECT_FALSE(client.check_holder("doc:1", "bob"));
  EXPECT_THROW(client.assign("doc:1", "bob"), LockHeldError);

  HolderInfo h = client.holder("doc:1");
  EXPECT_TRUE(h.held);
  EXPECT_EQ(h.holder, "alice");
  EXPECT_EQ(client.status("doc:1").hold->holder, "alice");

  TransferResult t = client.transfer("doc:1", "bob", "alice");
  EXPECT_EQ(t.holder, "bob");
  EXPECT_GT(t.token, a.token);
  EXPECT_THROW(client.transfer("doc:1", "carol", "alice"), NotHolderError);
  EXPECT_THROW(client.unassign("doc:1", "alice"), NotHolderError);
  EXPECT_TRUE(client.unassign("doc:1", "bob"));
  EXPECT_FALSE(client.unassign("doc:1"));
  EXPECT_TRUE(client.check_holder("doc:1", "anyone")) << "unassigned: everyone may";

  Assignment timed = client.assign("doc:2", "alice", {.ttl = 5000ms});
  ASSERT_TRUE(timed.lease_expires_at);
  EXPECT_EQ(*timed.lease_expires_at - timed.acquired_at, 5000ms);
  EXPECT_THROW(client.assign("doc:2", "bob", {.timeout = 100ms}), LockTimeoutError);

  ASSERT_TRUE(client.try_acquire("by-handle", {.ttl = 5000ms}));
  HolderInfo by_handle = client.holder("by-handle");
  EXPECT_TRUE(by_handle.held);
  EXPECT_FALSE(by_handle.holder);
  EXPECT_TRUE(client.check_holder("by-handle", "alice"));
}

TEST_F(ClientLocks, InOpenModeHolderIdsAreNamedAndAsHolderAsksTheServer) {
  EXPECT_THROW(client.assign("turn"), InvalidArgumentError) << "open mode: no caller identity";
  Assignment a = client.assign("turn", "white");
  EXPECT_EQ(client.as_holder("turn", "white", [](std::uint64_t token) { return token; }), a.token);
  EXPECT_THROW(client.as_holder("turn", "black", [] {}), NotHolderError);
  EXPECT_THROW(client.transfer("turn", "black"), InvalidArgumentError);
  EXPECT_EQ(client.verify_holder("turn", "white").holder, "white");
  EXPECT_THROW(client.verify_holder("turn", "black"), NotHolderError);
}

TEST_F(ClientLocks, SessionHoldEndsWhenTheClientIsGone) {
  auto session_client =
      std::make_unique<Client>(server.url(), ClientOptions{.max_idle_connections = 0});
  auto h = session_client->try_acquire("s", {.ttl = 60000ms, .session = true});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->scope, Scope::kSession);
  // Other calls, with no idle connections allowed: the session's connection is kept anyway.
  for (int i = 0; i < 3; ++i) session_client->status("x");
  EXPECT_TRUE(client.status("s").held()) << "the pinned connection must stay open";
  session_client.reset();
  // The server frees the key when the connection closes; wait for it on the server.
  LockHandle next = client.acquire("s", {.ttl = 1000ms, .timeout = 5000ms});
  EXPECT_GT(next.token, h->token);
}

TEST_F(ClientLocks, UnixSocketAndTokenInTheUrl) {
  Client over_unix("unix://" + server.unix_path());
  over_unix.ping();
  ASSERT_TRUE(over_unix.try_acquire("u", {.ttl = 5000ms}));
  EXPECT_TRUE(client.status("u").held()) << "one lock namespace across transports";
  // Open mode answers AUTH with OK, so a configured token does not get in the way.
  Client with_token("holdfast://:s3cr%40t@127.0.0.1:" + std::to_string(server.port()));
  with_token.ping();
  Client with_option(server.url(), {.token = "t0k"});
  EXPECT_FALSE(with_option.status("u").hold->owner);
  EXPECT_EQ(client.server(), "127.0.0.1:" + std::to_string(server.port()));
}

}  // namespace
}  // namespace holdfast
