// Pub/sub against a real redis-server, side by side: every command goes to both, and every reply
// and every message must be the same, byte for byte as far as RESP goes (type, length, content),
// in RESP2 and RESP3 (docs/resp.md, "Pub/sub"). Where Redis's order is that of its own hash
// tables (a message for several patterns), the messages are compared as a set; what names
// counts as it goes (UNSUBSCRIBE of everything) is asked with one name left.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "support/process.h"
#include "support/redis_server.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

// One connection to each server.
struct Twin {
  RespClient holdfast, redis;
};

class PubSubLikeRedis : public ::testing::Test {
 protected:
  ServerProcess server;
  RedisServer redis;
  std::vector<Twin> conns;

  void SetUp() override {
    for (int i = 0; i < 3; ++i) conns.push_back(Twin{server.client(), redis.client()});
  }

  // Sends `args` on connection `i` of both; compares the `replies` replies that follow.
  void same(int i, const std::vector<std::string>& args, int replies = 1, bool as_set = false) {
    conns[i].holdfast.send(args);
    conns[i].redis.send(args);
    expect_same(i, replies, as_set, args);
  }
  // The next `n` replies or messages of connection i, on both.
  void expect_same(int i, int n, bool as_set = false, const std::vector<std::string>& args = {}) {
    std::vector<std::string> h, r;
    for (int k = 0; k < n; ++k) {
      h.push_back(conns[i].holdfast.read().debug());
      r.push_back(conns[i].redis.read().debug());
    }
    if (as_set) {
      std::sort(h.begin(), h.end());
      std::sort(r.begin(), r.end());
    }
    std::string cmd;
    for (const auto& a : args) cmd += a + " ";
    EXPECT_EQ(h, r) << "after: " << cmd;
  }
};

TEST_F(PubSubLikeRedis, Resp2SubscribeModeMessagesAndCounts) {
  same(0, {"UNSUBSCRIBE"});
  same(0, {"PUNSUBSCRIBE"});
  same(0, {"SUBSCRIBE", "a", "b", "a"}, 3);
  same(0, {"GET", "x"});
  same(0, {"PING"});
  same(0, {"PING", "hi"});
  same(0, {"SUBSCRIBE"});
  same(0, {"PSUBSCRIBE", "a*", "[ab]"}, 2);
  same(1, {"PUBLISH", "a", "hello"});  // the channel and both patterns: 3
  expect_same(0, 3, /*as_set=*/true);
  same(1, {"PUBLISH", "b", std::string("bin\0\r\n\xff", 7)});
  expect_same(0, 2, /*as_set=*/true);
  same(1, {"PUBLISH", "nobody", "x"});
  same(1, {"PUBSUB", "NUMSUB", "a", "b", "zz"});
  same(1, {"PUBSUB", "NUMSUB"});
  same(1, {"PUBSUB", "NUMPAT"});
  same(1, {"PUBSUB", "CHANNELS", "a"});
  same(1, {"PUBSUB", "CHANNELS", "[a]*"});
  same(1, {"PUBSUB", "CHANNELS", "nothing*"});
  same(0, {"UNSUBSCRIBE", "zz"});
  same(0, {"UNSUBSCRIBE", "b"});
  same(0, {"UNSUBSCRIBE"});  // the one left
  same(0, {"PUNSUBSCRIBE", "a*"});
  same(0, {"PUNSUBSCRIBE"});
  same(0, {"GET", "x"});  // no longer subscribed
}

TEST_F(PubSubLikeRedis, Resp3PushesRunOtherCommandsToo) {
  conns[0].holdfast.call({"HELLO", "3"});
  conns[0].redis.call({"HELLO", "3"});
  same(0, {"UNSUBSCRIBE"});
  same(0, {"SUBSCRIBE", "ch"});
  same(0, {"PSUBSCRIBE", "c*", "*"}, 2);
  same(0, {"GET", "x"});
  same(0, {"PING"});
  same(1, {"PUBLISH", "ch", "hello"});
  expect_same(0, 3, /*as_set=*/true);
  same(0, {"PUBSUB", "NUMSUB", "ch"});
  same(0, {"UNSUBSCRIBE", "ch"});
  same(0, {"PUNSUBSCRIBE", "*"});
  same(0, {"PUNSUBSCRIBE"});
  same(0, {"RESET"});
  same(0, {"PSUBSCRIBE", "x"});
  same(0, {"QUIT"});
}

TEST_F(PubSubLikeRedis, ResetQuitTransactionsAndScripts) {
  same(2, {"SUBSCRIBE", "a"});
  same(2, {"SELECT", "0"});
  same(2, {"RESET"});
  same(2, {"GET", "a"});
  same(2, {"MULTI"});
  same(2, {"SUBSCRIBE", "q"});
  same(2, {"EXEC"});
  same(1, {"PUBLISH", "q", "in a transaction"});
  expect_same(2, 1);
  same(2, {"MULTI"});  // refused while subscribed
  same(2, {"QUIT"});
  same(1, {"PUBLISH", "q", "after quit"});
  same(1, {"EVAL", "return redis.call('PUBLISH', 'q', 'from lua')", "0"});
  same(1, {"PUBSUB"});
  same(1, {"PUBSUB", "FOO"});
  same(1, {"PUBSUB", "NUMPAT", "x"});
  same(1, {"PUBSUB", "channels", "a", "b"});
  same(1, {"PUBSUB", "ChAnNeLs", "a", "b"});  // Redis repeats the word as written
  same(1, {"PUBLISH", "q"});
  same(1, {"PUBLISH", "a", "b", "c"});
  same(1, {"PSUBSCRIBE"});
}

TEST_F(PubSubLikeRedis, ScriptsPublishAndAskWhoListens) {
  same(0, {"SUBSCRIBE", "q", "r"}, 2);
  same(0, {"PSUBSCRIBE", "q*"});
  same(1, {"EVAL", "return redis.call('PUBSUB', 'NUMSUB', 'q', 'r', 'none')", "0"});
  // Sorted: Redis lists channels in its hash table's order.
  same(1, {"EVAL", "local c = redis.call('PUBSUB', 'channels') table.sort(c) return c", "0"});
  same(1, {"EVAL", "return redis.call('PUBSUB', 'CHANNELS', 'q*')", "0"});
  same(1, {"EVAL", "return redis.call('pubsub', 'numpat')", "0"});
  // Errors as a script sees them (pcall: without the place in the script Redis adds).
  for (const char* script :
       {"return redis.pcall('PUBSUB')", "return redis.pcall('PUBSUB', 'FOO')",
        "return redis.pcall('PUBSUB', 'NUMPAT', 'x')",
        "return redis.pcall('PUBSUB', 'Channels', 'a', 'b')", "return redis.pcall('PUBLISH', 'q')",
        "return redis.pcall('PUBLISH', 'q', 'm', 'n')"})
    same(1, {"EVAL", script, "0"});
  // Several messages from one script, in order, each to the channel and the pattern.
  same(1, {"EVAL",
           "local n = redis.call('PUBLISH', KEYS[1], ARGV[1]) "
           "return n + redis.call('PUBLISH', KEYS[1], ARGV[2])",
           "1", "q", "first", "second"});
  expect_same(0, 2, /*as_set=*/true);
  expect_same(0, 2, /*as_set=*/true);
  // PUBLISH inside a transaction, as Redis queues and runs it.
  same(1, {"MULTI"});
  same(1, {"PUBLISH", "r", "queued"});
  same(1, {"EXEC"});
  expect_same(0, 1);
}

TEST_F(PubSubLikeRedis, ScriptsMayNotSubscribe) {
  // Redis adds where in the script it happened; the error itself is the same.
  for (Twin* t : {&conns[1]}) {
    const std::string h =
        t->holdfast.call({"EVAL", "return redis.call('SUBSCRIBE', 'q')", "0"}).str;
    const std::string r = t->redis.call({"EVAL", "return redis.call('SUBSCRIBE', 'q')", "0"}).str;
    const std::string common = "ERR This Redis command is not allowed from script";
    EXPECT_EQ(h.substr(0, common.size()), common) << h;
    EXPECT_EQ(r.substr(0, common.size()), common) << r;
  }
}

TEST(PubSub, ASubscriberThatNeverReadsIsClosedPastItsLimit) {
  ServerProcess server;
  RespClient slow = RespClient::tcp(server.port(), 4096);
  slow.call({"SUBSCRIBE", "flood"});
  RespClient publisher = server.client();
  // Small enough to go to the other nodes of a cluster too (docs/resp.md, "Pub/sub").
  const std::string message(4000, 'm');
  std::string batch;
  for (int i = 0; i < 50; ++i) batch += RespClient::encode({"PUBLISH", "flood", message});
  bool closed = false;
  // 32 MiB unread closes it at once (Redis's pubsub limit); a few more for the kernel's buffers.
  for (int round = 0; round < 400 && !closed; ++round) {
    publisher.send_raw(batch);
    for (int i = 0; i < 50; ++i) {
      const RespValue r = publisher.read();
      ASSERT_EQ(r.type, RespValue::Type::kInteger) << r.debug();
      if (r.integer == 0) closed = true;
    }
  }
  EXPECT_TRUE(closed);
  const auto m = run({"curl", "-s", server.http_url() + "/metrics"}).out;
  EXPECT_NE(m.find("holdfast_pubsub_subscribers_dropped_total 1"), std::string::npos) << m;
  EXPECT_TRUE(slow.wait_closed(10000));
}

}  // namespace
}  // namespace holdfast::testing
