// Lock events from the outside (docs/events.md): GET /v1/events and LOCK.WATCH against the real
// server, on both stores (run_with_postgres.sh runs this suite again over PostgreSQL). Every kind
// arrives with its fields and in each key's order, nothing is lost under concurrent clients,
// Last-Event-ID resumes or resets, prefixes and rules filter, and a watcher that never reads is
// reset, closed and counted, its buffer all the memory it costs.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "support/auth_config.h"
#include "support/server_process.h"
#include "support/sse_client.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

struct Ev {
  std::uint64_t id = 0;
  std::string kind;
  json::object data;
  std::string key() const { return std::string(data.at("key").as_string()); }
};

Ev parse(const SseEvent& e) {
  Ev ev;
  ev.id = e.id.empty() ? 0 : std::stoull(e.id);
  ev.kind = e.event;
  ev.data = json::parse(e.data).as_object();
  return ev;
}

// Reads events until `done` says the list is complete (or fails after timeout_ms).
std::vector<Ev> read_until(SseClient& s, const std::function<bool(const std::vector<Ev>&)>& done,
                           int timeout_ms = 15000) {
  std::vector<Ev> seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done(seen)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      std::string got;
      for (const Ev& e : seen) got += e.kind + " " + e.key() + "; ";
      ADD_FAILURE() << "timed out; got: " << got;
      return seen;
    }
    auto e = s.next_within(static_cast<int>(left.count()));
    if (e) seen.push_back(parse(*e));
  }
  return seen;
}

// The kinds of `events` for `key`, in order.
std::vector<std::string> kinds_of(const std::vector<Ev>& events, const std::string& key,
                                  bool waiters = true) {
  std::vector<std::string> k;
  for (const Ev& e : events) {
    if (e.key() != key) continue;
    if (!waiters && (e.kind == "queued" || e.kind == "dequeued")) continue;
    k.push_back(e.kind);
  }
  return k;
}

std::size_t count(const std::vector<Ev>& events, const std::string& kind) {
  return static_cast<std::size_t>(
      std::count_if(events.begin(), events.end(), [&](const Ev& e) { return e.kind == kind; }));
}

const Ev& find(const std::vector<Ev>& events, const std::string& key, const std::string& kind) {
  for (const Ev& e : events)
    if (e.key() == key && e.kind == kind) return e;
  throw std::runtime_error("no " + kind + " for " + key);
}

class Events : public ::testing::Test {
 protected:
  ServerProcess server;
  RespClient c = server.client();

  // 20 clients, each trying and releasing `rounds` times over the five keys <prefix>0 to 4;
  // `grants` counts the grants. Join the threads to wait for them.
  std::vector<std::thread> churn(const std::string& prefix, int rounds, std::atomic<int>& grants) {
    std::vector<std::thread> clients;
    for (int i = 0; i < 20; ++i) {
      clients.emplace_back([this, &grants, prefix, rounds, i] {
        RespClient mine = server.client();
        for (int n = 0; n < rounds; ++n) {
          const std::string key = prefix + std::to_string((i + n) % 5);
          auto r = mine.call({"LOCK.TRY", key, "TTL", "60000"});
          if (r.is_null()) continue;
          ++grants;
          mine.call({"LOCK.RELEASE", key, r.text("handle")});
        }
      });
    }
    return clients;
  }

  SseClient stream(const std::string& target = "/v1/events", const SseClient::Headers& h = {}) {
    SseClient s = SseClient::open(server.http_port(), target, h);
    EXPECT_EQ(s.status(), 200);
    return s;
  }
  std::string try_lock(const std::string& key, int ttl = 60000) {
    auto r = c.call({"LOCK.TRY", key, "TTL", std::to_string(ttl)});
    EXPECT_FALSE(r.is_null()) << key;
    return r.text("handle");
  }
  std::string metrics() {
    auto r = run({"curl", "-s", server.http_url() + "/metrics"});
    return r.out;
  }
};

TEST_F(Events, TheStreamIsServerSentEvents) {
  SseClient s = stream();
  EXPECT_EQ(s.header("Content-Type"), "text/event-stream");
  EXPECT_EQ(s.header("Cache-Control"), "no-cache");
  EXPECT_EQ(s.header("Transfer-Encoding"), "chunked");
  try_lock("hello");
  const Ev e = parse(s.next());
  EXPECT_EQ(e.kind, "acquired");
  EXPECT_EQ(e.key(), "hello");
  EXPECT_GT(e.id, 0u);
  EXPECT_EQ(e.data.at("id").as_int64(), static_cast<std::int64_t>(e.id));
  EXPECT_EQ(e.data.at("event").as_string(), "acquired");
  EXPECT_FALSE(s.comments().empty());  // the first comment: the stream is on
}

TEST_F(Events, EveryKindArrivesInEachKeysOrderWithItsFields) {
  SseClient s = stream();
  const std::string h = try_lock("k");
  ASSERT_EQ(c.call({"LOCK.RENEW", "k", h, "TTL", "90000"}).number("renewed"), 1);
  ASSERT_EQ(c.call({"LOCK.RELEASE", "k", h}).number("released"), 1);
  try_lock("short", 50);  // expires
  ASSERT_FALSE(c.call({"LOCK.ASSIGN", "turn", "white", "TTL", "60000"}).is_error());
  ASSERT_FALSE(c.call({"LOCK.TRANSFER", "turn", "black", "FROM", "white"}).is_error());
  ASSERT_EQ(c.call({"LOCK.UNASSIGN", "turn"}).number("released"), 1);
  const std::string q = try_lock("q");
  RespClient waiter = server.client();
  waiter.send({"LOCK.ACQUIRE", "q", "TTL", "60000", "TIMEOUT", "10000"});
  ASSERT_TRUE(await_waiters(c, "q", 1));
  ASSERT_EQ(c.call({"LOCK.RELEASE", "q", q}).number("released"), 1);
  ASSERT_FALSE(waiter.read().is_null());
  RespClient late = server.client();
  EXPECT_EQ(late.call({"LOCK.ACQUIRE", "q", "TTL", "1000", "TIMEOUT", "100"}).error_code(),
            "LOCK_TIMEOUT");

  auto events = read_until(s, [](const std::vector<Ev>& seen) {
    return count(seen, "expired") >= 1 && count(seen, "dequeued") >= 2 &&
           count(seen, "unassigned") >= 1 && count(seen, "acquired") >= 3;
  });
  std::uint64_t last = 0;
  for (const Ev& e : events) {
    EXPECT_GT(e.id, last);
    last = e.id;
    for (const char* f : {"key", "token", "heldBy", "leaseExpiresAt", "at"})
      EXPECT_TRUE(e.data.contains(f)) << e.kind << " has no " << f;
    EXPECT_GT(e.data.at("at").as_int64(), 1'600'000'000'000);
  }
  EXPECT_EQ(kinds_of(events, "k"), (std::vector<std::string>{"acquired", "renewed", "released"}));
  EXPECT_EQ(kinds_of(events, "short"), (std::vector<std::string>{"acquired", "expired"}));
  EXPECT_EQ(kinds_of(events, "turn"),
            (std::vector<std::string>{"assigned", "transferred", "unassigned"}));
  // q: the first hold, its release and the waiter's grant, in that order; the waiters' own
  // events around them (on a node over PostgreSQL a grant is told before its dequeued).
  EXPECT_EQ(kinds_of(events, "q", false),
            (std::vector<std::string>{"acquired", "released", "acquired"}));
  auto q_all = kinds_of(events, "q");
  EXPECT_EQ(std::count(q_all.begin(), q_all.end(), "queued"), 2);
  EXPECT_EQ(std::count(q_all.begin(), q_all.end(), "dequeued"), 2);

  const Ev& acquired = find(events, "k", "acquired");
  EXPECT_EQ(acquired.data.at("heldBy").as_string(), "user:local");
  EXPECT_GT(acquired.data.at("token").as_int64(), 0);
  EXPECT_EQ(find(events, "k", "renewed").data.at("token"), acquired.data.at("token"));
  EXPECT_GT(find(events, "k", "renewed").data.at("leaseExpiresAt").as_int64(),
            acquired.data.at("leaseExpiresAt").as_int64());
  const Ev& assigned = find(events, "turn", "assigned");
  EXPECT_EQ(assigned.data.at("holder").as_string(), "white");
  const Ev& transferred = find(events, "turn", "transferred");
  EXPECT_EQ(transferred.data.at("holder").as_string(), "black");
  EXPECT_GT(transferred.data.at("token").as_int64(), assigned.data.at("token").as_int64());
  const Ev& queued = find(events, "q", "queued");
  EXPECT_TRUE(queued.data.at("token").is_null());
  EXPECT_TRUE(queued.data.at("leaseExpiresAt").is_null());
  std::multiset<std::string> reasons;
  for (const Ev& e : events)
    if (e.kind == "dequeued") reasons.insert(std::string(e.data.at("reason").as_string()));
  EXPECT_EQ(reasons, (std::multiset<std::string>{"granted", "timeout"}));
}

TEST_F(Events, NoEventIsLostUnderTwentyClients) {
  SseClient s = stream();
  std::atomic<int> grants{0};
  std::vector<std::thread> clients = churn("busy:", 30, grants);
  for (auto& t : clients) t.join();
  const int granted = grants.load();
  ASSERT_GT(granted, 0);
  auto events = read_until(s, [&](const std::vector<Ev>& seen) {
    return count(seen, "released") >= static_cast<std::size_t>(granted);
  });
  EXPECT_EQ(count(events, "acquired"), static_cast<std::size_t>(granted));
  EXPECT_EQ(count(events, "released"), static_cast<std::size_t>(granted));
  // Per key: acquired and released alternate, with the same token.
  std::map<std::string, std::int64_t> held;
  for (const Ev& e : events) {
    const std::int64_t token = e.data.at("token").as_int64();
    if (e.kind == "acquired") {
      EXPECT_EQ(held.count(e.key()), 0u) << e.key();
      held[e.key()] = token;
    } else {
      ASSERT_EQ(held.count(e.key()), 1u) << e.key();
      EXPECT_EQ(held[e.key()], token);
      held.erase(e.key());
    }
  }
  EXPECT_TRUE(held.empty());
}

// Streams get their events in batches (events/push_batch.h, as LOCK.WATCH does): with 20 streams
// open and 20 clients taking and releasing, plus a burst of 200 changes sent at once, every
// stream gets every event, in the server's order, and fewer writes (chunks) than events.
TEST_F(Events, TwentyStreamsGetEveryEventInOrderInBatches) {
  std::vector<SseClient> streams;
  for (int i = 0; i < 20; ++i) streams.push_back(stream());
  std::atomic<int> grants{0};
  std::vector<std::thread> clients = churn("batch:", 20, grants);
  // The burst: 100 keys set and deleted, all in one write.
  std::string burst;
  for (int i = 0; i < 100; ++i)
    burst += RespClient::encode({"SET", "burst:" + std::to_string(i), "v", "PX", "60000"}) +
             RespClient::encode({"DEL", "burst:" + std::to_string(i)});
  RespClient busy = server.client();
  busy.send_raw(burst);
  for (int i = 0; i < 200; ++i) busy.read();
  for (auto& t : clients) t.join();
  const std::size_t pairs = static_cast<std::size_t>(grants.load()) + 100;
  std::vector<std::uint64_t> first_ids;
  for (SseClient& s : streams) {
    auto events = read_until(
        s, [&](const std::vector<Ev>& seen) { return count(seen, "released") >= pairs; });
    EXPECT_EQ(count(events, "acquired"), pairs);
    EXPECT_EQ(count(events, "released"), pairs);
    // In the server's order: ids grow, and per key a grant and its release alternate.
    std::vector<std::uint64_t> ids;
    std::map<std::string, std::int64_t> held;
    for (const Ev& e : events) {
      if (!ids.empty()) {
        EXPECT_GT(e.id, ids.back());
      }
      ids.push_back(e.id);
      const std::int64_t token = e.data.at("token").as_int64();
      if (e.kind == "acquired") {
        EXPECT_EQ(held.count(e.key()), 0u) << e.key();
        held[e.key()] = token;
      } else {
        ASSERT_EQ(held.count(e.key()), 1u) << e.key();
        EXPECT_EQ(held[e.key()], token);
        held.erase(e.key());
      }
    }
    EXPECT_TRUE(held.empty());
    // Every stream got the same events.
    if (first_ids.empty()) {
      first_ids = ids;
    } else {
      EXPECT_EQ(ids, first_ids);
    }
    // Batched: the burst's 200 events alone were made in a few turns of the loop.
    EXPECT_LT(s.chunks(), events.size());
  }
}

// A stream whose reader stops reading gets what was being written, then `reset`, and ends; the
// readers that keep up go on.
TEST_F(Events, AStreamThatFallsBehindIsResetAndClosed) {
  SseClient reader = stream();
  SseClient slow = SseClient::open(server.http_port(), "/v1/events", {}, 4096);
  ASSERT_EQ(slow.status(), 200);
  const std::string key(900, 'k');  // big events fill the buffer sooner
  RespClient busy = server.client();
  bool dropped = false;
  for (int round = 0; round < 400 && !dropped; ++round) {
    std::string batch;
    for (int i = 0; i < 100; ++i)
      batch += RespClient::encode({"SET", key + std::to_string(i), "v", "PX", "60000"}) +
               RespClient::encode({"DEL", key + std::to_string(i)});
    busy.send_raw(batch);
    for (int i = 0; i < 200; ++i) busy.read();
    while (reader.next_within(0)) {
    }
    dropped = metrics().find("holdfast_event_watchers_dropped_total 1") != std::string::npos;
  }
  ASSERT_TRUE(dropped);
  std::string last_kind;
  std::uint64_t last_id = 0;
  bool ended = false;
  for (;;) {
    try {
      auto e = slow.next_within(10000);
      if (!e) break;
      last_kind = e->event;
      if (e->event != "reset") {
        const std::uint64_t id = std::stoull(e->id);
        EXPECT_GT(id, last_id);
        last_id = id;
      }
    } catch (const std::exception&) {
      ended = true;  // the final chunk came
      break;
    }
  }
  EXPECT_TRUE(ended);
  EXPECT_EQ(last_kind, "reset");
  EXPECT_TRUE(slow.wait_closed(10000));
  const std::string m = metrics();
  EXPECT_NE(m.find("holdfast_event_watchers 1"), std::string::npos) << m;  // the reader
}

TEST_F(Events, LastEventIdResumesElseReset) {
  std::uint64_t seen_last = 0;
  {
    SseClient s = stream();
    try_lock("r1");
    seen_last = parse(s.next()).id;
  }
  try_lock("r2");
  try_lock("r3");
  SseClient back = stream("/v1/events", {{"Last-Event-ID", std::to_string(seen_last)}});
  const Ev a = parse(back.next());
  const Ev b = parse(back.next());
  EXPECT_EQ(a.key(), "r2");
  EXPECT_EQ(b.key(), "r3");
  EXPECT_GT(a.id, seen_last);
  // An id this server never gave: reset, then the stream goes on.
  SseClient other = stream("/v1/events", {{"Last-Event-ID", "12"}});
  const SseEvent reset = other.next();
  EXPECT_EQ(reset.event, "reset");
  EXPECT_FALSE(reset.id.empty());
  try_lock("r4");
  const Ev after = parse(other.next());
  EXPECT_EQ(after.key(), "r4");
  EXPECT_GT(after.id, std::stoull(reset.id));
}

TEST_F(Events, APrefixFiltersAndABadOneIsRefused) {
  SseClient jobs = stream("/v1/events?prefix=jobs%3A");
  try_lock("other");
  try_lock("jobs:1");
  EXPECT_EQ(parse(jobs.next()).key(), "jobs:1");
  SseClient bad = SseClient::open(server.http_port(), "/v1/events?prefix=%01");
  EXPECT_EQ(bad.status(), 400);
  EXPECT_NE(bad.body().find("prefix"), std::string::npos);
  SseClient unknown = SseClient::open(server.http_port(), "/v1/events?colour=red");
  EXPECT_EQ(unknown.status(), 400);
}

TEST_F(Events, MetricsCountWatchersAndEvents) {
  SseClient s = stream();
  try_lock("m");
  parse(s.next());
  const std::string m = metrics();
  EXPECT_NE(m.find("holdfast_event_watchers 1"), std::string::npos) << m;
  EXPECT_NE(m.find("holdfast_events_total"), std::string::npos);
  EXPECT_NE(m.find("holdfast_event_watchers_dropped_total 0"), std::string::npos);
}

TEST(EventsRules, AMemberSeesOnlyTheKeysItsRulesLetItRead) {
  AuthConfig auth;
  ServerProcess server(auth.flags());
  RespClient root = server.client();
  ASSERT_EQ(root.call({"AUTH", "root-secret"}).str, "OK");
  ASSERT_FALSE(root.call({"RULES.SET",
                          "[ruleSet]\nname = \"p\"\nresourceType = \"lock\"\n[rules.lock]\n"
                          "acquire = \"record.key.startsWith(user.userId + ':')\"\n"})
                   .is_error());
  SseClient nobody = SseClient::open(server.http_port(), "/v1/events");
  EXPECT_EQ(nobody.status(), 401);
  SseClient alice =
      SseClient::open(server.http_port(), "/v1/events", {{"Authorization", "Bearer alice-secret"}});
  ASSERT_EQ(alice.status(), 200);
  SseClient admin =
      SseClient::open(server.http_port(), "/v1/events", {{"Authorization", "Bearer root-secret"}});
  ASSERT_FALSE(root.call({"LOCK.TRY", "bob:1", "TTL", "60000"}).is_null());
  ASSERT_FALSE(root.call({"LOCK.TRY", "alice:1", "TTL", "60000"}).is_null());
  EXPECT_EQ(parse(alice.next()).key(), "alice:1");
  EXPECT_EQ(parse(admin.next()).key(), "bob:1");
  EXPECT_EQ(parse(admin.next()).key(), "alice:1");
  // RESP: the same rule.
  RespClient watcher = server.client();
  ASSERT_EQ(watcher.call({"AUTH", "alice-secret"}).str, "OK");
  ASSERT_FALSE(watcher.call({"LOCK.WATCH"}).is_error());
  ASSERT_FALSE(root.call({"LOCK.TRY", "bob:2", "TTL", "60000"}).is_null());
  ASSERT_FALSE(root.call({"LOCK.TRY", "alice:2", "TTL", "60000"}).is_null());
  auto push = watcher.read();
  ASSERT_EQ(push.items.size(), 3u);
  EXPECT_NE(push.items[2].str.find("\"alice:2\""), std::string::npos) << push.debug();
}

TEST_F(Events, LockWatchPushesInResp3AndOnlyWatchesInResp2) {
  RespClient w3 = server.client();
  w3.call({"HELLO", "3"});
  auto confirm = w3.call({"LOCK.WATCH", "PREFIX", "w:"});
  EXPECT_EQ(confirm.type, RespValue::Type::kPush);
  EXPECT_EQ(confirm.debug(), ">[\"lock.watch\" \"w:\" :1]");
  EXPECT_TRUE(w3.call({"GET", "nothing"}).is_null());  // RESP3 runs other commands meanwhile
  try_lock("x:1");
  try_lock("w:1");
  auto push = w3.read();
  EXPECT_EQ(push.type, RespValue::Type::kPush);
  ASSERT_EQ(push.items.size(), 3u);
  EXPECT_EQ(push.items[0].str, "lock.event");
  EXPECT_EQ(push.items[1].str, "acquired");
  const auto data = json::parse(push.items[2].str).as_object();
  EXPECT_EQ(data.at("key").as_string(), "w:1");

  RespClient w2 = server.client();
  EXPECT_EQ(w2.call({"LOCK.WATCH"}).debug(), "[\"lock.watch\" \"\" :1]");
  EXPECT_EQ(w2.call({"GET", "x"}).str,
            "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
            "RESET are allowed in this context");
  EXPECT_EQ(w2.call({"PING"}).debug(), "[\"pong\" \"\"]");
  try_lock("w:2");
  auto event = w2.read();
  EXPECT_EQ(event.type, RespValue::Type::kArray);
  EXPECT_EQ(event.items.at(1).str, "acquired");
  EXPECT_EQ(w2.call({"LOCK.UNWATCH"}).debug(), "[\"lock.unwatch\" \"\" :0]");
  EXPECT_TRUE(w2.call({"GET", "x"}).is_null());
  EXPECT_EQ(w2.call({"LOCK.WATCH", "SOMETHING"}).error_code(), "INVALID_ARGUMENT");
}

// A watcher of every key sends its events from the block it shares with the others; what the
// connection writes itself must still come in the order it was made.
TEST_F(Events, AWatcherOfEveryKeyGetsItsEventsAndRepliesInOrder) {
  RespClient w2 = server.client();
  EXPECT_EQ(w2.call({"LOCK.WATCH"}).debug(), "[\"lock.watch\" \"\" :1]");
  RespClient other = server.client();
  other.call({"HELLO", "3"});
  EXPECT_EQ(other.call({"LOCK.WATCH"}).debug(), ">[\"lock.watch\" \"\" :1]");
  auto key_of = [](const RespValue& v) {
    return std::string(json::parse(v.items.at(2).str).at("key").as_string());
  };
  // On one server a grant's event is told before the loop reads anything else, so a PING sent
  // once the grant is answered finds the event still waiting in its batch, and must follow it.
  // On a node over PostgreSQL the event comes back from the database after the reply: the PING
  // waits until the other watcher has it (the same batch tells both).
  const bool over_postgres = std::getenv("HOLDFAST_TEST_STORE_URL") != nullptr;
  for (int round = 0; round < 3; ++round) {
    const std::string key = "order:" + std::to_string(round);
    try_lock(key);
    if (over_postgres) {
      EXPECT_EQ(key_of(other.read()), key);
    }
    w2.send({"PING", "after-" + key});
    auto event = w2.read();
    ASSERT_EQ(event.items.size(), 3u) << event.debug();
    EXPECT_EQ(event.items[0].str, "lock.event");
    EXPECT_EQ(key_of(event), key);
    EXPECT_EQ(w2.read().debug(), "[\"pong\" \"after-" + key + "\"]");
    if (!over_postgres) {
      EXPECT_EQ(key_of(other.read()), key);
    }
    // RESP3: the watcher takes a lock itself; its reply and the push of its grant both come.
    other.send({"LOCK.TRY", key + ":own", "TTL", "60000"});
    bool replied = false, pushed = false;
    while (!replied || !pushed) {
      auto v = other.read();
      if (v.type == RespValue::Type::kPush) {
        EXPECT_EQ(key_of(v), key + ":own");
        pushed = true;
      } else {
        EXPECT_FALSE(v.is_null()) << v.debug();
        replied = true;
      }
    }
    EXPECT_EQ(key_of(w2.read()), key + ":own");  // the RESP2 watcher sees that grant too
  }
}

TEST_F(Events, AWatcherThatNeverReadsIsResetClosedAndCounted) {
  // A reader with a small receive buffer that never reads, beside one that does.
  SseClient reader = stream();
  // A small receive buffer: the kernel's buffers only delay the moment the server's fills.
  RespClient slow = RespClient::tcp(server.port(), 4096);
  slow.call({"LOCK.WATCH"});
  const std::string key(900, 'k');  // big events fill the buffer sooner
  RespClient busy = server.client();
  bool dropped = false;
  std::size_t pairs = 0;
  for (int round = 0; round < 400 && !dropped; ++round) {
    std::string batch;
    for (int i = 0; i < 100; ++i)
      batch += RespClient::encode({"SET", key + std::to_string(i), "v", "PX", "60000"}) +
               RespClient::encode({"DEL", key + std::to_string(i)});
    busy.send_raw(batch);
    for (int i = 0; i < 200; ++i) busy.read();
    pairs += 100;
    // The fast reader keeps up.
    while (reader.next_within(0)) {
    }
    dropped = metrics().find("holdfast_event_watchers_dropped_total 1") != std::string::npos;
  }
  ASSERT_TRUE(dropped) << "after " << pairs << " pairs";
  // The slow watcher gets what was queued, then reset, then the connection closes.
  std::string last_kind;
  for (;;) {
    RespValue v;
    try {
      v = slow.read(10000);
    } catch (const std::exception&) {
      break;  // closed
    }
    if (v.items.size() == 3) last_kind = v.items[1].str;
  }
  EXPECT_EQ(last_kind, "reset");
  const std::string m = metrics();
  EXPECT_NE(m.find("holdfast_event_watchers 1"), std::string::npos) << m;  // the fast one
}

// The server's resident memory, from /proc (kB).
std::size_t resident_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("VmRSS:")) return std::stoul(line.substr(6));
  return 0;
}

TEST_F(Events, AStreamThatNeverReadsCostsNoMoreThanItsBuffer) {
  const std::string key(900, 'k');  // big events fill the buffer sooner
  RespClient busy = server.client();
  // Pairs of a SET and a DEL over 100 keys: two events each, and no hold left behind.
  auto flood = [&](int rounds, const std::function<bool()>& stop) {
    for (int round = 0; round < rounds && !stop(); ++round) {
      std::string batch;
      for (int i = 0; i < 100; ++i)
        batch += RespClient::encode({"SET", key + std::to_string(i), "v", "PX", "60000"}) +
                 RespClient::encode({"DEL", key + std::to_string(i)});
      busy.send_raw(batch);
      for (int i = 0; i < 200; ++i) busy.read();
    }
  };
  // What the server needs anyway: events on (a reader that keeps up), the event window full.
  {
    SseClient reader = stream();
    flood(40, [&] {
      while (reader.next_within(0)) {
      }
      return false;
    });
  }
  const std::size_t before_kb = resident_kb(server.pid());
  ASSERT_GT(before_kb, 0u);
  // A stream with a small receive buffer that never reads: the server keeps at most 4 MiB for it
  // (docs/events.md, "Limits") and then closes it, however much more happens.
  SseClient slow = SseClient::open(server.http_port(), "/v1/events", {}, 4096);
  ASSERT_EQ(slow.status(), 200);
  std::size_t peak_kb = before_kb;
  bool dropped = false;
  flood(400, [&] {
    peak_kb = std::max(peak_kb, resident_kb(server.pid()));
    dropped = metrics().find("holdfast_event_watchers_dropped_total 1") != std::string::npos;
    return dropped;
  });
  ASSERT_TRUE(dropped);
  EXPECT_TRUE(slow.wait_closed(10000));
  // Its buffer, and room for the allocator's slack; without a bound the flood above (up to 80 MB
  // of events) would all be kept.
  EXPECT_LT(peak_kb - before_kb, 24u * 1024) << "before " << before_kb << " kB, peak " << peak_kb;
}

TEST_F(Events, TheWebPageIsServedWithItsHeaders) {
  SseClient page = SseClient::open(server.http_port(), "/ui/");
  ASSERT_EQ(page.status(), 200);
  EXPECT_EQ(page.header("Content-Type"), "text/html; charset=utf-8");
  const std::string csp = page.header("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(page.header("X-Content-Type-Options"), "nosniff");
  const std::string etag = page.header("ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_NE(page.body().find("<title>Holdfast locks</title>"), std::string::npos);
  SseClient again = SseClient::open(server.http_port(), "/ui/", {{"If-None-Match", etag}});
  EXPECT_EQ(again.status(), 304);
  SseClient script = SseClient::open(server.http_port(), "/ui/app.js");
  EXPECT_EQ(script.status(), 200);
  EXPECT_EQ(script.header("Content-Type"), "text/javascript; charset=utf-8");
  SseClient bare = SseClient::open(server.http_port(), "/ui");
  EXPECT_EQ(bare.status(), 308);
  EXPECT_EQ(bare.header("Location"), "/ui/");
  EXPECT_EQ(SseClient::open(server.http_port(), "/ui/missing.js").status(), 404);
  EXPECT_EQ(SseClient::open(server.http_port(), "/ui/../metrics").status(), 404);
}

}  // namespace
}  // namespace holdfast::testing
