// Lock events and pub/sub across nodes (docs/scale-out.md, "Lock events and pub/sub"): a
// reader on one node hears the grants made through the others, in each key's order, with the
// expiries the nodes tell themselves and other nodes' waiters; a message published on one node
// reaches the subscribers of every node; and with nobody watching, the triggers are off.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "cluster.h"
#include "support/eventually.h"
#include "support/sse_client.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

struct Ev {
  std::string kind, key;
  json::object data;
};

Ev next_event(SseClient& s) {
  const SseEvent e = s.next(15000);
  Ev ev{e.event, "", json::parse(e.data).as_object()};
  ev.key = std::string(ev.data.at("key").as_string());
  return ev;
}

// The triggers' state in the cluster's schema: true while they tell changes.
bool triggers_on(const Cluster& c) {
  const std::string v =
      sql_value(c.store_url(),
                "SELECT tgenabled FROM pg_trigger WHERE tgname = "
                "'holdfast_hold_events' AND tgrelid = 'holdfast_holds'::regclass");
  return v != "D";
}

class EventsAcrossNodes : public ::testing::Test {
 protected:
  Cluster cluster{2};
};

TEST_F(EventsAcrossNodes, AReaderOnOneNodeHearsEveryNodesChangesInEachKeysOrder) {
  EXPECT_FALSE(triggers_on(cluster));  // nobody watches: lock statements tell nothing
  SseClient stream = SseClient::open(cluster.node(0).http_port(), "/v1/events");
  ASSERT_EQ(stream.status(), 200);
  EXPECT_TRUE(triggers_on(cluster));
  RespClient other = cluster.node(1).client();
  auto hold = other.call({"LOCK.TRY", "k", "TTL", "60000", "OWNER", "o"});
  ASSERT_FALSE(hold.is_null());
  ASSERT_EQ(other.call({"LOCK.RENEW", "k", hold.text("handle"), "TTL", "90000"}).number("renewed"),
            1);
  ASSERT_EQ(other.call({"LOCK.RELEASE", "k", hold.text("handle")}).number("released"), 1);
  ASSERT_FALSE(other.call({"LOCK.TRY", "short", "TTL", "200"}).is_null());
  ASSERT_FALSE(other.call({"LOCK.ASSIGN", "turn", "white", "TTL", "60000"}).is_error());
  ASSERT_FALSE(other.call({"LOCK.TRANSFER", "turn", "black", "FROM", "white"}).is_error());
  ASSERT_FALSE(cluster.node(0).client().call({"LOCK.UNASSIGN", "turn"}).is_error());

  std::map<std::string, std::vector<std::string>> by_key;
  std::size_t seen = 0;
  while (seen < 8) {
    const Ev e = next_event(stream);
    by_key[e.key].push_back(e.kind);
    ++seen;
    if (e.key == "k" && e.kind == "acquired") {
      EXPECT_EQ(e.data.at("owner").as_string(), "o");
      EXPECT_EQ(e.data.at("token").as_int64(), hold.number("token"));
    }
  }
  EXPECT_EQ(by_key["k"], (std::vector<std::string>{"acquired", "renewed", "released"}));
  EXPECT_EQ(by_key["short"], (std::vector<std::string>{"acquired", "expired"}));
  EXPECT_EQ(by_key["turn"], (std::vector<std::string>{"assigned", "transferred", "unassigned"}));
}

TEST_F(EventsAcrossNodes, AnotherNodesWaiterIsQueuedAndDequeued) {
  SseClient stream = SseClient::open(cluster.node(0).http_port(), "/v1/events?prefix=w");
  ASSERT_EQ(stream.status(), 200);
  RespClient holder = cluster.node(0).client();
  ASSERT_FALSE(holder.call({"LOCK.TRY", "w", "TTL", "60000"}).is_null());
  // Told even if node 1 hears of the reader only after its waiter queued.
  auto waiter = std::make_unique<RespClient>(cluster.node(1).client());
  waiter->send({"LOCK.ACQUIRE", "w", "TTL", "1000", "TIMEOUT", "60000"});
  EXPECT_EQ(next_event(stream).kind, "acquired");
  const Ev queued = next_event(stream);
  EXPECT_EQ(queued.kind, "queued");
  EXPECT_EQ(queued.data.at("timeoutMs").as_int64(), 60000);
  waiter.reset();  // its connection closes
  const Ev dequeued = next_event(stream);
  EXPECT_EQ(dequeued.kind, "dequeued");
  EXPECT_EQ(dequeued.data.at("reason").as_string(), "cancelled");
  EXPECT_EQ(dequeued.data.at("waiter"), queued.data.at("waiter"));
}

TEST_F(EventsAcrossNodes, WaitersQueuedBeforeAnyoneWatchedAreToldWhenAReaderComes) {
  // Two keys whose names need quoting in an array's text: "w and w\.
  const std::vector<std::string> keys = {"w\"1", "w\\2"};
  RespClient holder = cluster.node(0).client();
  std::vector<std::unique_ptr<RespClient>> waiters;
  RespClient status = cluster.node(1).client();
  for (const std::string& key : keys) {
    ASSERT_FALSE(holder.call({"LOCK.TRY", key, "TTL", "60000"}).is_null());
    waiters.push_back(std::make_unique<RespClient>(cluster.node(1).client()));
    waiters.back()->send({"LOCK.ACQUIRE", key, "TTL", "1000", "TIMEOUT", "60000"});
    const auto deadline = std::chrono::steady_clock::now() + kEventually;
    while (status.call({"LOCK.STATUS", key}).number("waiters") < 1 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(status.call({"LOCK.STATUS", key}).number("waiters"), 1);
  }
  ASSERT_FALSE(triggers_on(cluster));  // nobody watched while they queued
  SseClient stream = SseClient::open(cluster.node(0).http_port(), "/v1/events?prefix=w");
  ASSERT_EQ(stream.status(), 200);
  std::set<std::string> queued_keys;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const Ev queued = next_event(stream);
    EXPECT_EQ(queued.kind, "queued");
    queued_keys.insert(queued.key);
  }
  EXPECT_EQ(queued_keys, std::set<std::string>(keys.begin(), keys.end()));
  waiters[0].reset();
  const Ev dequeued = next_event(stream);
  EXPECT_EQ(dequeued.kind, "dequeued");
  EXPECT_EQ(dequeued.key, keys[0]);
  EXPECT_EQ(dequeued.data.at("reason").as_string(), "cancelled");
}

TEST_F(EventsAcrossNodes, LockWatchOnAnotherNodeToo) {
  RespClient watcher = cluster.node(1).client();
  watcher.call({"HELLO", "3"});
  EXPECT_EQ(watcher.call({"LOCK.WATCH"}).debug(), ">[\"lock.watch\" \"\" :1]");
  ASSERT_FALSE(cluster.node(0).client().call({"LOCK.TRY", "x", "TTL", "60000"}).is_null());
  auto push = watcher.read(15000);
  ASSERT_EQ(push.items.size(), 3u) << push.debug();
  EXPECT_EQ(push.items[1].str, "acquired");
}

TEST_F(EventsAcrossNodes, TheTriggersGoOffWithTheLastReader) {
  {
    SseClient stream = SseClient::open(cluster.node(1).http_port(), "/v1/events");
    ASSERT_EQ(stream.status(), 200);
    EXPECT_TRUE(triggers_on(cluster));
  }
  // The node stops: its row goes, and with the last row the triggers.
  cluster.node(1).stop();
  EXPECT_FALSE(triggers_on(cluster));
}

TEST_F(EventsAcrossNodes, PubSubReachesTheSubscribersOfEveryNode) {
  RespClient a = cluster.node(0).client();
  RespClient b = cluster.node(1).client();
  a.call({"SUBSCRIBE", "news"});
  b.call({"PSUBSCRIBE", "n*"});
  RespClient publisher = cluster.node(1).client();
  EXPECT_EQ(publisher.call({"PUBLISH", "news", "hello"}).integer, 1);  // this node's
  const std::string binary("bin\0\xff", 5);
  EXPECT_EQ(publisher.call({"PUBLISH", "news", binary}).integer, 1);
  EXPECT_EQ(a.read(15000).debug(), "[\"message\" \"news\" \"hello\"]");
  EXPECT_EQ(a.read(15000).items.at(2).str, binary);
  EXPECT_EQ(b.read(15000).debug(), "[\"pmessage\" \"n*\" \"news\" \"hello\"]");
  EXPECT_EQ(b.read(15000).items.at(3).str, binary);
  // Too long for a notification: refused, and sent nowhere.
  const RespValue big = publisher.call({"PUBLISH", "news", std::string(8000, 'x')});
  EXPECT_TRUE(big.is_error());
  EXPECT_NE(big.str.find("message too long"), std::string::npos) << big.str;
}

}  // namespace
}  // namespace holdfast::testing
