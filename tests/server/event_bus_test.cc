// The event bus (server/events/event_bus.h) over the real policy and embedded backend: events
// only while someone watches, ids that grow, the window for Last-Event-ID, prefixes, the rules,
// and events off again once nobody came back.
#include <gtest/gtest.h>

#include "server/events/event_bus.h"
#include "service/embedded/embedded_backend.h"
#include "service/policy.h"
#include "store/store.h"

namespace holdfast::events {
namespace {

// A store whose log is durable at append, or, once told, only when told.
class TestStore final : public Store {
 public:
  Result<DurableState> recover() override { return DurableState{}; }
  std::uint64_t append(const Change&) override {
    ++appended_;
    if (at_once_) durable_ = appended_;
    return appended_;
  }
  void submit() override {}
  std::uint64_t durable_sequence() const override { return durable_; }
  void set_on_durable(std::function<void(std::uint64_t)>) override {}
  void set_state_source(StateSource) override {}
  StoreStats stats() const override { return {}; }
  void close() override {}
  void set_durable_on_append(bool at_once) { at_once_ = at_once; }
  void make_durable() { durable_ = appended_; }

 private:
  std::uint64_t appended_ = 0, durable_ = 0;
  bool at_once_ = true;
};

struct Done final : Completion {
  std::optional<Result<Answer>> result;
  void finish(Result<Answer> r) override { result = std::move(r); }
};

struct Seen final : Watcher {
  std::vector<Published> events;
  int resets = 0;
  int batches = 0;      // whole batches told (on_events)
  std::string text;     // their text, as a front end's render writes it
  bool resumes = true;  // false: as LOCK.WATCH
  void on_event(const Published& e) override { events.push_back(e); }
  void on_events(const Batch& b) override {
    ++batches;
    text += b.text(Batch::kSse, [](std::string& out, const Published& e) {
               out += e.key + ";";
             }).view();
    Watcher::on_events(b);
  }
  bool can_resume() const override { return resumes; }
  void on_reset(std::uint64_t) override { ++resets; }
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& e : events) n.emplace_back(event_name(e.kind));
    return n;
  }
};

class BusTest : public ::testing::Test {
 protected:
  FakeClock clock;
  TestStore store;
  EmbeddedBackend backend{clock, store};
  Policy policy{backend, clock};
  Principal owner = Principal::local_owner();
  Caller caller{&owner, 1};

  void SetUp() override { ASSERT_TRUE(backend.recover().ok()); }

  HoldState take(std::string_view key, Millis ttl = 1000) {
    Done d;
    AcquireArgs a;
    a.key = key;
    a.ttl_ms = ttl;
    policy.try_acquire(caller, a, d);
    policy.dispatch();
    EXPECT_TRUE(d.result && d.result->ok());
    return std::get<HoldState>(**d.result);
  }
  void release(const HoldState& h) {
    Done d;
    const std::string handle = h.handle.to_string();
    policy.release(caller, ReleaseArgs{h.key, handle}, d);
    policy.dispatch();
  }
};

TEST_F(BusTest, NothingIsMadeUntilSomeoneWatches) {
  EventBus bus(policy, clock);
  take("before");
  EXPECT_EQ(bus.stats().events, 0u);
  Seen w;
  EXPECT_EQ(bus.watch(w, owner, ""), EventBus::Start::kLive);
  HoldState h = take("k");
  release(h);
  ASSERT_EQ(w.names(), (std::vector<std::string>{"acquired", "released"}));
  EXPECT_LT(w.events[0].id, w.events[1].id);
  EXPECT_EQ(w.events[0].key, "k");
  EXPECT_NE(w.events[0].json.find("\"event\":\"acquired\""), std::string::npos);
  EXPECT_EQ(bus.stats().watchers, 1u);
  EXPECT_EQ(bus.stats().events, 2u);
}

TEST_F(BusTest, IdsStartAtTheClockSoARestartGoesOnAbove) {
  std::uint64_t last = 0;
  {
    EventBus bus(policy, clock);
    Seen w;
    bus.watch(w, owner, "");
    take("k");
    last = w.events.at(0).id;
    EXPECT_GE(last, static_cast<std::uint64_t>(clock.now_ms()) * 1000);
    bus.unwatch(w);
  }
  clock.advance(1);
  EventBus again(policy, clock);
  Seen w;
  // An id from before the restart cannot be resumed.
  EXPECT_EQ(again.watch(w, owner, "", last), EventBus::Start::kReset);
  take("j");
  EXPECT_GT(w.events.at(0).id, last);
}

TEST_F(BusTest, PrefixesFilter) {
  EventBus bus(policy, clock);
  Seen jobs, all;
  bus.watch(jobs, owner, "jobs:");
  bus.watch(all, owner, "");
  take("jobs:1");
  take("other");
  ASSERT_EQ(jobs.events.size(), 1u);
  EXPECT_EQ(jobs.events[0].key, "jobs:1");
  EXPECT_EQ(all.events.size(), 2u);
}

TEST_F(BusTest, ResumeFromTheWindowElseReset) {
  EventBus bus(policy, clock, BusOptions{4, 60'000});
  Seen first;
  bus.watch(first, owner, "");
  for (int i = 0; i < 3; ++i) take("k" + std::to_string(i));
  const std::uint64_t seen_last = first.events[1].id;  // missed the third
  Seen back;
  EXPECT_EQ(bus.watch(back, owner, "", seen_last), EventBus::Start::kResumed);
  ASSERT_EQ(back.events.size(), 1u);
  EXPECT_EQ(back.events[0].key, "k2");
  // Nothing missed: resumed with nothing to tell.
  Seen current;
  EXPECT_EQ(bus.watch(current, owner, "", bus.last_id()), EventBus::Start::kResumed);
  EXPECT_TRUE(current.events.empty());
  // Past the window of 4 events, and ids never given, are reset.
  for (int i = 0; i < 5; ++i) take("m" + std::to_string(i));
  Seen late, future, junk;
  EXPECT_EQ(bus.watch(late, owner, "", seen_last), EventBus::Start::kReset);
  EXPECT_EQ(bus.watch(future, owner, "", bus.last_id() + 1), EventBus::Start::kReset);
  EXPECT_EQ(bus.watch(junk, owner, "", 0), EventBus::Start::kReset);
  EXPECT_TRUE(late.events.empty());
}

TEST_F(BusTest, EventsStopAfterTheLingerAndAGapIsNotResumed) {
  EventBus bus(policy, clock, BusOptions{100, 1000});
  Seen w;
  bus.watch(w, owner, "");
  take("a");
  const std::uint64_t last = w.events.back().id;
  bus.unwatch(w);
  // Within the linger, events are still made: a reader that comes back resumes.
  take("b");
  Seen back;
  EXPECT_EQ(bus.watch(back, owner, "", last), EventBus::Start::kResumed);
  ASSERT_EQ(back.names(), (std::vector<std::string>{"acquired"}));
  bus.unwatch(back);
  clock.advance(1000);
  take("c");  // the first event after the linger switches them off
  const std::uint64_t before_gap = bus.last_id();
  take("d");  // not recorded
  EXPECT_EQ(bus.last_id(), before_gap);
  Seen after;
  EXPECT_EQ(bus.watch(after, owner, "", before_gap), EventBus::Start::kReset);
  take("e");
  ASSERT_EQ(after.events.size(), 1u);
  EXPECT_EQ(after.events[0].key, "e");
}

TEST_F(BusTest, ABatchIsToldOnceItsWorkIsDoneAndSharedByWhoSeesAll) {
  int asked = 0;
  BusOptions o;
  o.later = [&] { ++asked; };
  EventBus bus(policy, clock, o);
  Seen all, other_all, jobs;
  bus.watch(all, owner, "");
  bus.watch(other_all, owner, "");
  bus.watch(jobs, owner, "jobs:");
  take("jobs:1");
  take("other");
  EXPECT_EQ(asked, 1);              // once per batch
  EXPECT_TRUE(all.events.empty());  // not before the loop's work is done
  Seen late;
  bus.watch(late, owner, "");  // starts now: the batch so far is not its
  bus.tell();
  EXPECT_EQ(all.batches, 1);
  EXPECT_EQ(all.text, "jobs:1;other;");
  EXPECT_EQ(other_all.text, all.text);
  ASSERT_EQ(all.names(), (std::vector<std::string>{"acquired", "acquired"}));
  EXPECT_EQ(jobs.batches, 0);  // a prefix: event by event
  ASSERT_EQ(jobs.events.size(), 1u);
  EXPECT_EQ(jobs.events[0].key, "jobs:1");
  EXPECT_TRUE(late.events.empty());
  EXPECT_EQ(bus.stats().sent, 5u);
  take("next");
  EXPECT_EQ(asked, 2);
  bus.tell();
  EXPECT_EQ(all.text, "jobs:1;other;next;");
  ASSERT_EQ(late.events.size(), 1u);
  EXPECT_EQ(late.events[0].key, "next");
}

// A watcher that keeps what it was told, as a connection keeps its events until it sends them.
struct Holder final : Watcher {
  std::vector<SharedText> held;
  void on_event(const Published&) override {}
  void on_events(const Batch& b) override {
    held.push_back(
        b.text(Batch::kResp2, [](std::string& out, const Published& e) { out += e.key + ";"; }));
  }
  bool can_resume() const override { return false; }
  void on_reset(std::uint64_t) override {}
};

TEST_F(BusTest, WatchersHoldRangesOfOneBlockThatFollowEachOtherAndAFreeBlockIsWrittenAgain) {
  BusOptions o;
  o.later = [] {};
  EventBus bus(policy, clock, o);
  Holder a, b;
  bus.watch(a, owner, "");
  bus.watch(b, owner, "");
  take("k1");
  bus.tell();
  take("k2");
  bus.tell();
  ASSERT_EQ(a.held.size(), 2u);
  ASSERT_EQ(b.held.size(), 2u);
  EXPECT_EQ(a.held[0].block, b.held[0].block);  // the bytes exist once for both
  EXPECT_EQ(a.held[0].view(), "k1;");
  // While held, the next batch is written after it in the same block.
  EXPECT_EQ(a.held[1].block, a.held[0].block);
  EXPECT_EQ(a.held[1].begin, a.held[0].end);
  EXPECT_EQ(a.held[1].view(), "k2;");
  EXPECT_EQ(a.held[0].view(), "k1;");  // the block grew; the range still reads the same
  // Nobody holds any of it: the block is written again from its start.
  const std::string* block = a.held[0].block.get();
  a.held.clear();
  b.held.clear();
  take("k3");
  bus.tell();
  ASSERT_EQ(a.held.size(), 1u);
  EXPECT_EQ(a.held[0].block.get(), block);
  EXPECT_EQ(a.held[0].begin, 0u);
  EXPECT_EQ(a.held[0].view(), "k3;");
}

TEST_F(BusTest, WithOnlyWatchersThatCannotResumeEventsStopWithTheLast) {
  EventBus bus(policy, clock, BusOptions{100, 60'000});
  Seen w;
  w.resumes = false;
  bus.watch(w, owner, "");
  take("a");
  EXPECT_EQ(bus.stats().events, 1u);
  bus.unwatch(w);
  take("b");  // nobody could come back for it: not made
  EXPECT_EQ(bus.stats().events, 1u);
}

TEST_F(BusTest, ARuleSetDecidesWhatAMemberSees) {
  // A member may read what the acquire rule lets it take (asked as operation "watch").
  Done d;
  policy.set_rule_set(caller,
                      "[ruleSet]\nname = \"p\"\nresourceType = \"lock\"\n[rules.lock]\n"
                      "acquire = \"record.key.startsWith(user.userId + ':') && "
                      "request.operation in ['watch', 'tryAcquire']\"\n",
                      d);
  policy.dispatch();
  ASSERT_TRUE(d.result && d.result->ok());
  EventBus bus(policy, clock);
  Principal alice{PrincipalKind::kMember, "alice", Role::kMember, {}};
  Principal fn{PrincipalKind::kFunction, "importer", Role::kMember, {}};
  Seen a, f;
  bus.watch(a, alice, "");
  bus.watch(f, fn, "");
  take("alice:1");
  take("bob:1");
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].key, "alice:1");
  EXPECT_EQ(f.events.size(), 2u);  // functions are never subject to rules
}

TEST_F(BusTest, EventsWaitForTheLog) {
  EventBus bus(policy, clock);
  Seen w;
  bus.watch(w, owner, "");
  store.set_durable_on_append(false);
  Done d;
  AcquireArgs a;
  a.key = "k";
  a.ttl_ms = 1000;
  policy.try_acquire(caller, a, d);
  policy.dispatch();
  EXPECT_TRUE(w.events.empty());  // neither the reply nor the event before the log has it
  EXPECT_FALSE(d.result.has_value());
  store.make_durable();
  policy.dispatch();
  EXPECT_TRUE(d.result.has_value());
  EXPECT_EQ(w.names(), (std::vector<std::string>{"acquired"}));
}

TEST_F(BusTest, WhileNobodyCouldComeBackOnlyTheBatchIsKept) {
  EventBus bus(policy, clock, BusOptions{300, 60'000});
  Seen watch;
  watch.resumes = false;  // as LOCK.WATCH
  bus.watch(watch, owner, "");
  for (int i = 0; i < 260; ++i) take("k" + std::to_string(i));
  ASSERT_EQ(watch.events.size(), 260u);
  // A window of 300 would still hold the first event; with only watches open it was not kept.
  Seen early;
  EXPECT_EQ(bus.watch(early, owner, "", watch.events[0].id), EventBus::Start::kReset);
  // A stream watches now: from here on the window keeps its 300, those it holds included.
  for (int i = 0; i < 30; ++i) take("m" + std::to_string(i));
  Seen back;
  EXPECT_EQ(bus.watch(back, owner, "", watch.events[5].id), EventBus::Start::kResumed);
  ASSERT_EQ(back.events.size(), 260u - 6 + 30);
  EXPECT_EQ(back.events.front().key, "k6");
  EXPECT_EQ(back.events.back().key, "m29");
}

TEST(EventWindowTest, GrowsWithWhatItHoldsAndResetsToForget) {
  EventWindow<int> w(4);
  auto ids = [&w] {
    std::vector<int> v;
    for (std::size_t i = 0; i < w.size(); ++i) v.push_back(w[i]);
    return v;
  };
  for (int i = 1; i <= 6; ++i) w.push() = i;  // wrapped: the oldest slot took 5 and 6
  EXPECT_EQ(ids(), (std::vector<int>{3, 4, 5, 6}));
  w.grow(6);
  EXPECT_EQ(ids(), (std::vector<int>{3, 4, 5, 6}));
  for (int i = 7; i <= 9; ++i) w.push() = i;
  EXPECT_EQ(ids(), (std::vector<int>{4, 5, 6, 7, 8, 9}));
  w.grow(2);  // never shrinks
  EXPECT_EQ(w.capacity(), 6u);
  w.reset(2);
  EXPECT_TRUE(w.empty());
  for (int i = 10; i <= 12; ++i) w.push() = i;
  EXPECT_EQ(ids(), (std::vector<int>{11, 12}));
  w.reset(3);
  w.push() = 13;
  w.grow(5);  // not full: nothing to unwrap
  for (int i = 14; i <= 18; ++i) w.push() = i;
  EXPECT_EQ(ids(), (std::vector<int>{14, 15, 16, 17, 18}));
}

TEST(WatchPrefix, IsEmptyOrAKey) {
  EXPECT_FALSE(check_prefix("").has_value());
  EXPECT_FALSE(check_prefix("jobs:").has_value());
  auto long_one = check_prefix(std::string(1025, 'x'));
  ASSERT_TRUE(long_one.has_value());
  EXPECT_EQ(long_one->message, "prefix is longer than 1024 bytes");
  EXPECT_TRUE(check_prefix(std::string("a\x01", 2)).has_value());
}

}  // namespace
}  // namespace holdfast::events
