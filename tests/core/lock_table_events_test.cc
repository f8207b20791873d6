// The lock table's lock events (core/lock_event.h): each kind where it happens, with its fields,
// in order; and, over random operations, that the events alone rebuild the table's holds.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "core/lock_event.h"
#include "table_fixture.h"

namespace holdfast::testing {
namespace {

class RecordingEvents : public LockEventSink {
 public:
  void on_lock_event(const LockEventView& e) override { events.emplace_back(e); }
  std::vector<LockEvent> events;
  std::vector<LockEventKind> kinds() const {
    std::vector<LockEventKind> k;
    for (const auto& e : events) k.push_back(e.kind);
    return k;
  }
};

class EventsTest : public TableTest {
 protected:
  RecordingEvents seen;
  void SetUp() override { table.set_events(&seen); }
};

using K = LockEventKind;

TEST_F(EventsTest, NoSinkNoEvents) {
  table.set_events(nullptr);
  take("k");
  EXPECT_TRUE(seen.events.empty());
}

TEST_F(EventsTest, AcquireRenewReleaseTellTheHold) {
  AcquireRequest r = req("jobs:1", 5000);
  r.owner = "worker-7";
  HoldState h = table.acquire(r, now())->hold;
  ASSERT_EQ(seen.events.size(), 1u);
  const LockEvent& a = seen.events[0];
  EXPECT_EQ(a.kind, K::kAcquired);
  EXPECT_EQ(a.key, "jobs:1");
  EXPECT_EQ(a.token, h.token);
  EXPECT_EQ(a.held_by, "user:alice");
  EXPECT_EQ(a.owner, "worker-7");
  EXPECT_EQ(a.acquired_at, now());
  EXPECT_EQ(a.lease_expires_at, now() + 5000);
  EXPECT_EQ(a.hold_kind, HoldKind::kHandle);
  EXPECT_EQ(a.mode, LockMode::kExclusive);

  clock.advance(100);
  ASSERT_TRUE(table.renew("jobs:1", h.handle.to_string(), 9000, now())->renewed);
  ASSERT_TRUE(table.release("jobs:1", h.handle.to_string(), now())->released);
  EXPECT_EQ(seen.kinds(), (std::vector<K>{K::kAcquired, K::kRenewed, K::kReleased}));
  EXPECT_EQ(seen.events[1].lease_expires_at, now() + 9000);
  EXPECT_EQ(seen.events[1].token, h.token);
  EXPECT_EQ(seen.events[2].token, h.token);
  EXPECT_EQ(seen.events[2].owner, "worker-7");
}

TEST_F(EventsTest, RefusalsTellNothing) {
  HoldState h = take("k");
  (void)table.acquire(req("k", 1000, 0, "user:bob"), now());  // contended
  (void)table.release("k", "not-a-handle", now());
  (void)table.renew("other", h.handle.to_string(), 100, now());
  EXPECT_EQ(seen.kinds(), (std::vector<K>{K::kAcquired}));
}

TEST_F(EventsTest, ALeaseEndIsExpired) {
  HoldState h = take("k", 1000);
  tick(1000);
  ASSERT_EQ(seen.kinds(), (std::vector<K>{K::kAcquired, K::kExpired}));
  EXPECT_EQ(seen.events[1].token, h.token);
  EXPECT_EQ(seen.events[1].held_by, "user:alice");
  // Found ended by an operation before the timer: the same event, once.
  take("lazy", 10);
  clock.advance(10);
  EXPECT_FALSE(table.status("lazy", now())->held);
  table.advance(now());
  const std::vector<K> kinds = seen.kinds();
  EXPECT_EQ(kinds.back(), K::kExpired);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), K::kExpired), 2);
}

TEST_F(EventsTest, AWaiterIsQueuedThenDequeuedBeforeItsGrant) {
  HoldState h = take("k");
  const WaiterId w = wait("k", 5000);
  ASSERT_EQ(seen.kinds(), (std::vector<K>{K::kAcquired, K::kQueued}));
  const LockEvent& q = seen.events[1];
  EXPECT_EQ(q.waiter, w);
  EXPECT_EQ(q.held_by, "user:bob");
  EXPECT_EQ(q.token, 0u);
  EXPECT_EQ(q.timeout_ms, 5000);
  clock.advance(250);
  ASSERT_TRUE(table.release("k", h.handle.to_string(), now())->released);
  ASSERT_EQ(seen.kinds(),
            (std::vector<K>{K::kAcquired, K::kQueued, K::kReleased, K::kDequeued, K::kAcquired}));
  EXPECT_EQ(seen.events[3].waiter, w);
  EXPECT_EQ(seen.events[3].reason, DequeueReason::kGranted);
  EXPECT_EQ(seen.events[3].waited_ms, 250);
  EXPECT_EQ(seen.events[4].held_by, "user:bob");
  EXPECT_GT(seen.events[4].token, h.token);
}

TEST_F(EventsTest, ATimeoutAndAClosedConnectionDequeue) {
  take("k", 60'000);
  const WaiterId slow = wait("k", 100, 2);
  const WaiterId gone = wait("k", 5000, 3);
  tick(100);
  table.end_session(3, now());
  ASSERT_EQ(seen.kinds(),
            (std::vector<K>{K::kAcquired, K::kQueued, K::kQueued, K::kDequeued, K::kDequeued}));
  EXPECT_EQ(seen.events[3].waiter, slow);
  EXPECT_EQ(seen.events[3].reason, DequeueReason::kTimeout);
  EXPECT_EQ(seen.events[3].waited_ms, 100);
  EXPECT_EQ(seen.events[4].waiter, gone);
  EXPECT_EQ(seen.events[4].reason, DequeueReason::kCancelled);
}

TEST_F(EventsTest, AssignTransferUnassign) {
  AssignRequest a;
  a.key = "turn";
  a.holder_id = "white";
  a.held_by = "user:alice";
  ASSERT_TRUE(table.assign(a, now()).ok());
  ASSERT_TRUE(table.assign(a, now()).ok());  // the same holder: its lease is refreshed
  ASSERT_TRUE(table.transfer("turn", "black", "white", "user:alice", now()).ok());
  ASSERT_TRUE(table.unassign("turn", std::nullopt, now())->released);
  ASSERT_EQ(seen.kinds(),
            (std::vector<K>{K::kAssigned, K::kRenewed, K::kTransferred, K::kUnassigned}));
  EXPECT_EQ(seen.events[0].holder_id, "white");
  EXPECT_EQ(seen.events[0].lease_expires_at, kNever);
  EXPECT_EQ(seen.events[0].hold_kind, HoldKind::kAssigned);
  EXPECT_EQ(seen.events[2].holder_id, "black");
  EXPECT_GT(seen.events[2].token, seen.events[0].token);
  EXPECT_EQ(seen.events[3].holder_id, "black");
}

TEST_F(EventsTest, SharedAndSemaphoreHoldsAndASessionEnd) {
  AcquireRequest s1 = req("doc", 1000, 0, "user:a");
  s1.mode = LockMode::kShared;
  AcquireRequest s2 = req("doc", 1000, 0, "user:b");
  s2.mode = LockMode::kShared;
  s2.session_scoped = true;
  s2.session = 9;
  AcquireRequest sem = req("pool", 1000);
  sem.mode = LockMode::kSemaphore;
  sem.permits = 3;
  sem.take = 2;
  ASSERT_EQ(table.acquire(s1, now())->kind, AcquireOutcome::Kind::kGranted);
  ASSERT_EQ(table.acquire(s2, now())->kind, AcquireOutcome::Kind::kGranted);
  ASSERT_EQ(table.acquire(sem, now())->kind, AcquireOutcome::Kind::kGranted);
  table.end_session(9, now());
  ASSERT_EQ(seen.kinds(), (std::vector<K>{K::kAcquired, K::kAcquired, K::kAcquired, K::kReleased}));
  EXPECT_EQ(seen.events[1].mode, LockMode::kShared);
  EXPECT_EQ(seen.events[1].scope, Scope::kSession);
  EXPECT_EQ(seen.events[2].mode, LockMode::kSemaphore);
  EXPECT_EQ(seen.events[2].permits, 3u);
  EXPECT_EQ(seen.events[2].take, 2u);
  EXPECT_EQ(seen.events[3].held_by, "user:b");
  EXPECT_EQ(seen.events[3].token, seen.events[1].token);
}

TEST_F(EventsTest, AMultiKeyGrantTellsEachKey) {
  AcquireAllRequest r;
  r.ttl_ms = 1000;
  r.held_by = "user:alice";
  r.session = 1;
  KeyRequest a, b;
  a.key = "a";
  b.key = "b";
  r.keys = {a, b};
  ASSERT_EQ(table.acquire_all(r, now())->kind, AcquireOutcome::Kind::kGranted);
  tick(1000);
  ASSERT_EQ(seen.kinds(), (std::vector<K>{K::kAcquired, K::kAcquired, K::kExpired, K::kExpired}));
  EXPECT_EQ(seen.events[0].key, "a");
  EXPECT_EQ(seen.events[1].key, "b");
}

TEST(EventJson, HasTheContractsFieldsAndNullsAndLeavesDefaultsOut) {
  LockEvent q;
  q.kind = K::kQueued;
  q.key = "a\"b";
  q.held_by = "user:x";
  q.waiter = 7;
  q.timeout_ms = 100;
  q.at = 1234;
  EXPECT_EQ(event_json(q, 42),
            R"({"id":42,"event":"queued","key":"a\"b","token":null,"heldBy":"user:x",)"
            R"("leaseExpiresAt":null,"at":1234,"waiter":7,"timeoutMs":100})");
  LockEvent g;
  g.kind = K::kAssigned;
  g.key = "turn";
  g.token = 3;
  g.held_by = "user:x";
  g.holder_id = "white";
  g.hold_kind = HoldKind::kAssigned;
  g.acquired_at = 1000;
  g.lease_expires_at = 5000;
  g.at = 1000;
  EXPECT_EQ(event_json(g, 43),
            R"({"id":43,"event":"assigned","key":"turn","token":3,"heldBy":"user:x",)"
            R"("leaseExpiresAt":5000,"at":1000,"kind":"assigned","holder":"white"})");
  // A hold's own acquiredAt, scope and mode when they are not the defaults.
  LockEvent r;
  r.kind = K::kReleased;
  r.key = "k";
  r.token = 4;
  r.held_by = "user:x";
  r.owner = "o";
  r.scope = Scope::kSession;
  r.mode = LockMode::kShared;
  r.acquired_at = 900;
  r.at = 1000;
  EXPECT_EQ(
      event_json(r, 44),
      R"({"id":44,"event":"released","key":"k","token":4,"heldBy":"user:x","owner":"o",)"
      R"("leaseExpiresAt":null,"at":1000,"acquiredAt":900,"scope":"session","mode":"shared"})");
  for (std::size_t i = 0; i < kLockEventKinds; ++i) {
    LockEventKind k;
    ASSERT_TRUE(parse_event_kind(event_name(static_cast<LockEventKind>(i)), k));
    EXPECT_EQ(static_cast<std::size_t>(k), i);
  }
}

TEST(EventJson, EscapesEveryStringAndWritesTheOptionalFields) {
  LockEvent d;
  d.kind = K::kDequeued;
  d.key = "k\\\x01\n\xd0\xba";  // backslash, two control characters, a two-byte UTF-8 letter
  d.held_by = "user:\"q\"";
  d.owner = "run\t1";
  d.holder_id = "h";
  d.mode = LockMode::kSemaphore;
  d.permits = 5;
  d.take = 2;
  d.waiter = 18446744073709551615u;
  d.reason = DequeueReason::kTimeout;
  d.waited_ms = 250;
  d.at = -1;  // a clock before the epoch still writes a number
  EXPECT_EQ(event_json(d, 0),
            R"({"id":0,"event":"dequeued","key":"k\\\u0001\u000a)"
            "\xd0\xba"
            R"(","token":null,"heldBy":"user:\"q\"","owner":"run\u0009)"
            R"(1","leaseExpiresAt":null,"at":-1,"holder":"h","mode":"semaphore","permits":5,)"
            R"("take":2,"waiter":18446744073709551615,"reason":"timeout","waitedMs":250})");
}

TEST(EventJson, AStringThatCouldOutgrowTheStackBufferIsWrittenInPlace) {
  // The longest key, every byte escaped, appended after what `out` already holds.
  LockEvent e;
  e.kind = K::kReleased;
  e.key.assign(1024, '"');
  e.token = 9;
  e.held_by = "user:x";
  e.at = 5;
  std::string out = "before;";
  append_event_body(out, e);
  std::string key;
  for (int i = 0; i < 1024; ++i) key += "\\\"";
  EXPECT_EQ(out, "before;\"event\":\"released\",\"key\":\"" + key +
                     R"(","token":9,"heldBy":"user:x","leaseExpiresAt":null,"at":5})");
  std::string json = "[";
  append_event_json(json, 2, out.substr(7));
  EXPECT_EQ(json, "[" + event_json(e, 2));
  EXPECT_EQ(json, "[{\"id\":2," + out.substr(7));
}

// A reader that knows only the events: each key's holds by token, and its waiters.
struct Mirror {
  std::map<std::string, std::map<std::uint64_t, Millis>> holds;  // key -> token -> lease end
  std::map<std::string, std::set<std::uint64_t>> waiters;

  void apply(const LockEvent& e) {
    switch (e.kind) {
      case K::kAcquired:
      case K::kAssigned:
      case K::kTransferred:
        // An exclusive grant replaces whatever the key had (a re-take, a transfer).
        if (e.mode == LockMode::kExclusive) holds[e.key].clear();
        holds[e.key][e.token] = e.lease_expires_at;
        break;
      case K::kRenewed:
        holds[e.key][e.token] = e.lease_expires_at;
        break;
      case K::kReleased:
      case K::kUnassigned:
      case K::kExpired:
        holds[e.key].erase(e.token);
        if (holds[e.key].empty()) holds.erase(e.key);
        break;
      case K::kQueued:
        waiters[e.key].insert(e.waiter);
        break;
      case K::kDequeued:
        waiters[e.key].erase(e.waiter);
        if (waiters[e.key].empty()) waiters.erase(e.key);
        break;
    }
  }
};

TEST_F(EventsTest, RandomOperationsAreRebuiltFromTheEventsAlone) {
  std::mt19937 rng(20261206);
  std::vector<HoldState> granted;
  const std::vector<std::string> keys = {"a", "b", "c", "d"};
  Mirror mirror;
  std::size_t applied = 0;
  for (int step = 0; step < 3000; ++step) {
    const std::string& key = keys[rng() % keys.size()];
    const std::string who = "user:" + std::to_string(rng() % 3);
    switch (rng() % 8) {
      case 0:
      case 1: {
        AcquireRequest r = req(key, 50 + rng() % 300, rng() % 2 ? 0 : 200, who);
        r.session = 1 + rng() % 4;
        if (rng() % 3 == 0) r.owner = "o";
        if (rng() % 4 == 0) r.mode = LockMode::kShared;
        auto out = table.acquire(r, now());
        if (out.ok() && out->kind == AcquireOutcome::Kind::kGranted) granted.push_back(out->hold);
        break;
      }
      case 2:
        if (!granted.empty()) {
          const HoldState& h = granted[rng() % granted.size()];
          (void)table.release(h.key, h.handle.to_string(), now());
        }
        break;
      case 3:
        if (!granted.empty()) {
          const HoldState& h = granted[rng() % granted.size()];
          (void)table.renew(h.key, h.handle.to_string(), 100 + rng() % 200, now());
        }
        break;
      case 4:
        table.end_session(1 + rng() % 4, now());
        break;
      case 5:
        (void)table.force_release(key, now());
        break;
      default:
        tick(rng() % 60);
        break;
    }
    for (WaiterOutcome& o : table.take_outcomes())
      if (o.granted) granted.push_back(o.hold);
    for (; applied < seen.events.size(); ++applied) mirror.apply(seen.events[applied]);
    // The table's holds, as a mirror sees them.
    std::map<std::string, std::map<std::uint64_t, Millis>> expected;
    std::size_t waiting = 0;
    for (const std::string& k : keys) {
      auto st = table.status(k, now());
      for (; applied < seen.events.size(); ++applied) mirror.apply(seen.events[applied]);
      waiting += st->waiters;
      if (!st->held) continue;
      if (st->holders.empty()) {
        expected[k][st->hold.token] = st->hold.lease_expires_at;
      } else {
        for (const HoldState& m : st->holders) expected[k][m.token] = m.lease_expires_at;
      }
    }
    ASSERT_EQ(mirror.holds, expected) << "step " << step;
    std::size_t mirrored = 0;
    for (const auto& [k, w] : mirror.waiters) mirrored += w.size();
    ASSERT_EQ(mirrored, waiting) << "step " << step;
  }
}

}  // namespace
}  // namespace holdfast::testing
