// The lock commands over the wire: contention, FIFO, timeouts, re-take, expiry, pipelining.
#include <gtest/gtest.h>

#include <thread>

#include "support/eventually.h"
#include "support/loopback.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class LocksOverResp : public ::testing::Test {
 protected:
  ServerProcess server;
};

TEST_F(LocksOverResp, TryGrantsAHoldMapAndNilWhenHeld) {
  auto a = server.client();
  auto hold = a.call({"LOCK.TRY", "jobs:1", "TTL", "5000"});
  ASSERT_EQ(hold.type, RespValue::Type::kArray) << hold.debug();  // RESP2: flat key/value array
  for (const char* f : {"key", "handle", "token", "heldBy", "owner", "acquiredAt", "leaseExpiresAt",
                        "scope", "kind"})
    EXPECT_TRUE(hold.has(f)) << f;
  EXPECT_EQ(hold.text("key"), "jobs:1");
  EXPECT_GE(hold.text("handle").size(), 20u);
  EXPECT_EQ(hold.text("heldBy"), "user:local");
  EXPECT_TRUE(hold.get("owner")->is_null());
  EXPECT_EQ(hold.number("leaseExpiresAt") - hold.number("acquiredAt"), 5000);
  EXPECT_EQ(hold.text("scope"), "lease");
  EXPECT_EQ(hold.text("kind"), "handle");
  auto b = server.client();
  EXPECT_TRUE(b.call({"LOCK.TRY", "jobs:1", "TTL", "5000"}).is_null());
}

TEST_F(LocksOverResp, Resp3RepliesAreMaps) {
  auto a = server.client();
  auto hello = a.call({"HELLO", "3"});
  ASSERT_EQ(hello.type, RespValue::Type::kMap) << hello.debug();
  EXPECT_EQ(hello.text("server"), "holdfast");
  EXPECT_EQ(hello.number("proto"), 3);
  EXPECT_EQ(hello.text("mode"), "open");
  EXPECT_TRUE(hello.has("version"));
  EXPECT_TRUE(hello.has("id"));
  auto hold = a.call({"LOCK.TRY", "k", "TTL", "1000"});
  EXPECT_EQ(hold.type, RespValue::Type::kMap);
  auto again = a.call({"LOCK.TRY", "k", "TTL", "1000"});
  EXPECT_EQ(again.type, RespValue::Type::kNull);
  EXPECT_EQ(a.call({"HELLO", "4"}).error_code(), "NOPROTO");
  // SETNAME is accepted (client libraries send it); anything else is a usage error.
  EXPECT_EQ(a.call({"HELLO", "3", "SETNAME", "worker-7"}).text("server"), "holdfast");
  auto bogus = a.call({"HELLO", "3", "BOGUS"});
  EXPECT_EQ(bogus.error_code(), "INVALID_ARGUMENT");
  EXPECT_NE(bogus.str.find("usage: HELLO"), std::string::npos) << bogus.str;
}

TEST_F(LocksOverResp, QuitAnswersOkThenClosesAndLaterCommandsAreNotRun) {
  auto a = server.client();
  a.send_raw(RespClient::encode({"QUIT"}) + RespClient::encode({"LOCK.TRY", "k", "TTL", "60000"}));
  EXPECT_EQ(a.read().str, "OK");
  EXPECT_TRUE(a.wait_closed());
  EXPECT_EQ(server.client().call({"LOCK.STATUS", "k"}).number("held"), 0);
}

TEST_F(LocksOverResp, ThreeWaitersAreServedFirstInFirstOut) {
  auto holder = server.client();
  auto first = holder.call({"LOCK.TRY", "hot", "TTL", "60000"});
  std::vector<RespClient> waiters;
  auto watcher = server.client();
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(server.client());
    waiters.back().send({"LOCK.ACQUIRE", "hot", "TTL", "60000", "TIMEOUT", "10000", "OWNER",
                         "w" + std::to_string(i)});
    // Make the queue order unambiguous: wait until the server has queued this one.
    ASSERT_TRUE(await_waiters(watcher, "hot", i + 1));
  }
  std::string handle = first.text("handle");
  std::int64_t last_token = first.number("token");
  for (int i = 0; i < 3; ++i) {
    auto released = (i == 0 ? holder : waiters[static_cast<std::size_t>(i - 1)])
                        .call({"LOCK.RELEASE", "hot", handle});
    ASSERT_EQ(released.number("released"), 1) << released.debug();
    auto granted = waiters[static_cast<std::size_t>(i)].read();
    EXPECT_EQ(granted.text("owner"), "w" + std::to_string(i));
    EXPECT_GT(granted.number("token"), last_token);
    last_token = granted.number("token");
    handle = granted.text("handle");
  }
}

TEST_F(LocksOverResp, ABlockedAcquireBlocksOnlyItsOwnConnection) {
  auto a = server.client();
  a.call({"LOCK.TRY", "k", "TTL", "60000"});
  auto b = server.client();
  b.send({"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", "5000"});
  auto c = server.client();
  EXPECT_EQ(c.call({"PING"}).str, "PONG");
  EXPECT_TRUE(await_waiters(c, "k", 1));
}

TEST_F(LocksOverResp, TimeoutErrorNamesKeyAndTimeout) {
  auto a = server.client();
  a.call({"LOCK.TRY", "jobs:1", "TTL", "60000"});
  auto b = server.client();
  auto start = std::chrono::steady_clock::now();
  auto reply = b.call({"LOCK.ACQUIRE", "jobs:1", "TTL", "1000", "TIMEOUT", "300"});
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply.is_error());
  EXPECT_EQ(reply.str, "LOCK_TIMEOUT no grant within the timeout key=jobs:1 timeoutMs=300");
  EXPECT_GE(waited, std::chrono::milliseconds(290));
  EXPECT_EQ(b.call({"LOCK.STATUS", "jobs:1"}).number("waiters"), 0);
  // TIMEOUT 0 is one attempt that ends in the same error at once.
  EXPECT_EQ(b.call({"LOCK.ACQUIRE", "jobs:1", "TTL", "1000", "TIMEOUT", "0"}).str,
            "LOCK_TIMEOUT no grant within the timeout key=jobs:1 timeoutMs=0");
}

TEST_F(LocksOverResp, ErrorDetailsWithSpacesQuotesOrEqualsAreJsonQuoted) {
  const std::string key = R"(report "q4" = done\now)";
  auto a = server.client();
  ASSERT_FALSE(a.call({"LOCK.TRY", key, "TTL", "60000"}).is_null());
  auto reply = a.call({"LOCK.ACQUIRE", key, "TTL", "1000", "TIMEOUT", "0"});
  EXPECT_EQ(
      reply.str,
      R"(LOCK_TIMEOUT no grant within the timeout key="report \"q4\" = done\\now" timeoutMs=0)");
}

TEST_F(LocksOverResp, RetakeByOwnerFencesTheOldHandle) {
  auto a = server.client();
  auto old = a.call({"LOCK.TRY", "import:u1", "TTL", "60000", "OWNER", "run-42"});
  auto fresh = server.client().call({"LOCK.TRY", "import:u1", "TTL", "60000", "OWNER", "run-42"});
  ASSERT_FALSE(fresh.is_null());
  EXPECT_NE(fresh.text("handle"), old.text("handle"));
  EXPECT_GT(fresh.number("token"), old.number("token"));
  auto rel = a.call({"LOCK.RELEASE", "import:u1", old.text("handle")});
  EXPECT_EQ(rel.number("released"), 0);
  EXPECT_EQ(rel.text("reason"), "not_holder");
  auto ren = a.call({"LOCK.RENEW", "import:u1", old.text("handle"), "TTL", "1000"});
  EXPECT_EQ(ren.number("renewed"), 0);
  EXPECT_EQ(ren.text("reason"), "lease_lost");
  EXPECT_TRUE(a.call({"LOCK.TRY", "import:u1", "TTL", "1000", "OWNER", "run-43"}).is_null());
  auto status = a.call({"LOCK.STATUS", "import:u1"});
  EXPECT_EQ(status.text("owner"), "run-42");
  EXPECT_EQ(status.number("token"), fresh.number("token"));
}

// Nobody releases: the lease's end hands the key over, never before it. That the table ends a
// lease at its very millisecond is shown on a fake clock (tests/core); how soon a server acts on
// it is a speed, not asserted here.
TEST_F(LocksOverResp, ExpiryHandsTheKeyToAWaiterWithoutARelease) {
  auto a = server.client();
  auto first = a.call({"LOCK.TRY", "k", "TTL", "600"});
  auto b = server.client();
  auto granted =
      b.call({"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_GE(granted.number("acquiredAt"), first.number("leaseExpiresAt"));
  EXPECT_GT(granted.number("token"), first.number("token"));
}

TEST_F(LocksOverResp, RenewAndReleaseWithTheHandle) {
  auto a = server.client();
  auto h = a.call({"LOCK.TRY", "k", "TTL", "1000"});
  auto r = a.call({"LOCK.RENEW", "k", h.text("handle"), "TTL", "30000"});
  EXPECT_EQ(r.number("renewed"), 1);
  EXPECT_GE(r.number("leaseExpiresAt"), h.number("acquiredAt") + 30000);
  EXPECT_EQ(a.call({"LOCK.STATUS", "k"}).number("leaseExpiresAt"), r.number("leaseExpiresAt"));
  EXPECT_EQ(a.call({"LOCK.RELEASE", "k", h.text("handle")}).number("released"), 1);
  auto s = a.call({"LOCK.STATUS", "k"});
  EXPECT_EQ(s.number("held"), 0);
  EXPECT_EQ(s.text("key"), "k");
  EXPECT_TRUE(s.has("waiters"));
  EXPECT_FALSE(s.has("handle"));
}

TEST_F(LocksOverResp, TtlAboveOneDayIsCapped) {
  auto h = server.client().call({"LOCK.TRY", "k", "TTL", "999999999999"});
  EXPECT_EQ(h.number("leaseExpiresAt") - h.number("acquiredAt"), 86400000);
}

TEST_F(LocksOverResp, AListPageHoldsAtMostTenThousandHoldsAndALargerCountIsRefused) {
  auto a = server.client();
  constexpr int kHolds = 10005;
  std::string batch;
  for (int i = 0; i < kHolds; ++i)
    batch += RespClient::encode({"LOCK.TRY", "many:" + std::to_string(i), "TTL", "3600000"});
  a.send_raw(batch);
  for (int i = 0; i < kHolds; ++i) ASSERT_FALSE(a.read().is_null()) << "hold " << i;
  auto too_many = a.call({"LOCK.LIST", "COUNT", "10001"});
  EXPECT_EQ(too_many.error_code(), "INVALID_ARGUMENT") << too_many.debug();
  auto first = a.call({"LOCK.LIST", "COUNT", "10000"});
  ASSERT_EQ(first.items.size(), 2u) << first.debug();
  EXPECT_EQ(first.items[1].items.size(), 10000u);
  ASSERT_NE(first.items[0].str, "0");
  auto rest = a.call({"LOCK.LIST", "CURSOR", first.items[0].str, "COUNT", "10000"});
  EXPECT_EQ(rest.items[1].items.size(), 5u);
  EXPECT_EQ(rest.items[0].str, "0");
}

TEST_F(LocksOverResp, ListPagesWithMatchAndNeverShowsHandles) {
  auto a = server.client();
  for (int i = 0; i < 5; ++i) a.call({"LOCK.TRY", "user:" + std::to_string(i), "TTL", "60000"});
  a.call({"LOCK.TRY", "jobs:x", "TTL", "60000"});
  std::vector<std::string> keys;
  std::string cursor = "0";
  int pages = 0;
  do {
    auto page = a.call({"LOCK.LIST", "MATCH", "user:*", "CURSOR", cursor, "COUNT", "2"});
    ASSERT_EQ(page.type, RespValue::Type::kArray) << page.debug();
    ASSERT_EQ(page.items.size(), 2u);
    cursor = page.items[0].str;
    for (const auto& h : page.items[1].items) {
      EXPECT_FALSE(h.has("handle"));
      keys.push_back(h.text("key"));
    }
    ++pages;
  } while (cursor != "0" && pages < 10);
  EXPECT_EQ(keys, (std::vector<std::string>{"user:0", "user:1", "user:2", "user:3", "user:4"}));
  EXPECT_EQ(pages, 3);
}

TEST_F(LocksOverResp, AThousandPipelinedCommandsInOneWriteAllAnswerInOrder) {
  auto a = server.client();
  std::string batch;
  for (int i = 0; i < 1000; ++i)
    batch += RespClient::encode({"LOCK.TRY", "p:" + std::to_string(i), "TTL", "60000"});
  a.send_raw(batch);
  std::int64_t last = 0;
  for (int i = 0; i < 1000; ++i) {
    auto r = a.read();
    ASSERT_EQ(r.text("key"), "p:" + std::to_string(i));
    EXPECT_GT(r.number("token"), last);
    last = r.number("token");
  }
}

// Replies of about 16 MB for a client that does not read yet: the server stops taking that
// client's commands while its replies pile up (a few MB), serves everyone else meanwhile, and
// sends every reply, in order, once the client reads.
TEST_F(LocksOverResp, ASlowReaderGetsEveryReplyInOrderAndDoesNotStallOthers) {
  auto setup = server.client();
  const std::string pad(900, 'x');
  for (int i = 0; i < 100; ++i) {
    auto r = setup.call({"LOCK.TRY", "big:" + std::to_string(100 + i) + pad, "TTL", "600000"});
    ASSERT_FALSE(r.is_null()) << r.debug();
  }
  auto slow = server.client();
  std::string batch;
  const int kLists = 150;  // ~110 KB each
  for (int i = 0; i < kLists; ++i) batch += RespClient::encode({"LOCK.LIST", "MATCH", "big:*"});
  slow.send_raw(batch);

  auto other = server.client();
  for (int i = 0; i < 20; ++i) ASSERT_EQ(other.call({"PING"}, 2000).str, "PONG");

  for (int i = 0; i < kLists; ++i) {
    auto page = slow.read();
    ASSERT_EQ(page.items.size(), 2u) << "reply " << i;
    ASSERT_EQ(page.items[0].str, "0");
    ASSERT_EQ(page.items[1].items.size(), 100u) << "reply " << i;
    EXPECT_EQ(page.items[1].items[0].text("key"), "big:100" + pad);
    EXPECT_EQ(page.items[1].items[99].text("key"), "big:199" + pad);
  }
  EXPECT_EQ(slow.call({"PING"}).str, "PONG");
}

TEST_F(LocksOverResp, PipelinedCommandsAfterABlockingAcquireWaitForIt) {
  auto a = server.client();
  auto h = a.call({"LOCK.TRY", "k", "TTL", "60000"});
  auto b = server.client();
  b.send_raw(RespClient::encode({"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", "5000"}) +
             RespClient::encode({"PING", "after"}));
  ASSERT_TRUE(await_waiters(a, "k", 1));
  a.call({"LOCK.RELEASE", "k", h.text("handle")});
  auto granted = b.read();
  EXPECT_EQ(granted.text("key"), "k");
  EXPECT_EQ(b.read().str, "after");
  // The connection reads on as before: the next command is neither lost nor garbled (the input
  // buffer was once rewound under the read that was waiting meanwhile).
  EXPECT_EQ(b.call({"PING", "next"}, 2000).str, "next");
}

// While an acquire waits, the connection reads pipelined commands only until its input buffer
// (1 MiB + 64 KiB) is full. Once nothing but the waiter's plain pointer referred to the
// connection, it was freed, and the grant crashed the server. Now the connection keeps itself
// while it waits, and answers everything after the grant.
TEST_F(LocksOverResp,
       ABlockedAcquireWithMoreThanABufferPipelinedBehindItIsGrantedAndTheRestAnswered) {
  auto a = server.client();
  auto h = a.call({"LOCK.TRY", "k", "TTL", "60000"});
  const int fd = tcp_connect(server.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(
      send_all(fd, RespClient::encode({"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", "30000"})));
  ASSERT_TRUE(await_waiters(a, "k", 1));
  constexpr std::size_t kPings = 200000;
  std::string pipelined;
  for (std::size_t i = 0; i < kPings; ++i) pipelined += "PING\r\n";
  pipelined += "QUIT\r\n";
  std::jthread writer([&] { send_all(fd, pipelined); });  // joined also if a call below throws
  constexpr std::size_t kInputBuffer = 1024 * 1024 + 64 * 1024;
  const std::size_t left = pipelined.size() - kInputBuffer;
  const bool stopped = await_unread_by_server(server.port(), fd, left, left);
  a.call({"LOCK.RELEASE", "k", h.text("handle")});
  writer.join();
  const std::string replies = read_until_closed(fd);
  ::close(fd);
  ASSERT_TRUE(stopped) << "the connection did not stop reading where expected";
  EXPECT_EQ(replies.rfind("*18\r\n$3\r\nkey\r\n$1\r\nk\r\n", 0), 0u);  // the grant, first
  EXPECT_EQ(occurrences(replies, "+PONG\r\n"), kPings);
  EXPECT_TRUE(replies.ends_with("+PONG\r\n+OK\r\n"));
  EXPECT_EQ(a.call({"PING"}).str, "PONG");  // the server is still there
}

TEST_F(LocksOverResp, TheUnixSocketServesTheSameTable) {
  auto over_unix = RespClient::unix_socket(server.unix_path());
  auto h = over_unix.call({"LOCK.TRY", "shared", "TTL", "60000"});
  ASSERT_FALSE(h.is_null());
  EXPECT_TRUE(server.client().call({"LOCK.TRY", "shared", "TTL", "1000"}).is_null());
  EXPECT_EQ(server.client().call({"LOCK.STATUS", "shared"}).number("token"), h.number("token"));
}

TEST_F(LocksOverResp, SigtermAnswersBlockedAcquiresAndExitsCleanly) {
  auto a = server.client();
  a.call({"LOCK.TRY", "k", "TTL", "60000"});
  auto b = server.client();
  b.send({"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", "30000"});
  ASSERT_TRUE(await_waiters(a, "k", 1));
  EXPECT_EQ(server.stop(), 0);
  auto reply = b.read();
  EXPECT_EQ(reply.error_code(), "UNAVAILABLE");
}

}  // namespace
}  // namespace holdfast::testing
