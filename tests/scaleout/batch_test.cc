// Group commit on the PostgreSQL store (src/service/postgres/pg_batch.h), in process over the
// binary's PostgreSQL: the lock statements of many threads share transactions and still answer
// each caller as if it had run alone; a batch whose statement fails answers the others; and a
// sequence of operations answers the same with batching as without.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cluster.h"
#include "core/handle.h"
#include "service/postgres/hold_rows.h"
#include "service/postgres/pg_primary.h"
#include "service/postgres/schema.h"
#include "support/eventually.h"
#include "support/postgres.h"
#include "support/resp_client.h"

namespace holdfast::testing {
namespace {

using namespace std::chrono_literals;

// HoldRows over a fresh schema, with `lanes` lanes of group commit (0: off).
class Store {
 public:
  explicit Store(std::size_t lanes, std::size_t pool_size = 8)
      : url_(fresh_store_url(postgres_url())) {
    auto conn = pg::PgConn::connect(url_, 60'000);
    if (!conn.ok()) throw std::runtime_error(conn.error().message);
    if (auto st = pg::migrate(**conn); !st.ok()) throw std::runtime_error(st.error().message);
    pg::Primary::Options o;
    o.url = url_;
    o.deadline_ms = 30'000;  // a busy machine is slow, never "down"
    auto primary = pg::Primary::open(o);
    if (!primary.ok()) throw std::runtime_error(primary.error().message);
    primary_ = std::move(*primary);
    auto pool = pg::PgPool::open(*primary_, pool_size, "", pg::HoldRows::statements());
    if (!pool.ok()) throw std::runtime_error(pool.error().message);
    pool_ = std::move(*pool);
    holds_ = std::make_unique<pg::HoldRows>(*pool_);
    holds_->batch_commits(lanes);
  }
  pg::HoldRows& holds() { return *holds_; }
  const std::string& url() const { return url_; }

 private:
  std::string url_;
  std::unique_ptr<pg::Primary> primary_;
  std::unique_ptr<pg::PgPool> pool_;
  std::unique_ptr<pg::HoldRows> holds_;
};

struct Request {
  std::string key;
  std::string handle;
  std::string owner;
  pg::GrantRequest grant(Millis ttl = 60'000) const {
    pg::GrantRequest g;
    g.key = key;
    g.handle = *Handle::parse(handle);
    g.held_by = "user:test";
    if (!owner.empty()) g.owner = owner;
    g.ttl_ms = ttl;
    return g;
  }
};

std::string fresh_handle() {
  thread_local HandleSource source;
  return source.next().to_string();
}

// Holds the one lane's batch in flight: its grant of "blocked" waits for the row lock a session
// of the test holds, so what the test queues next goes in the following batch. open() lets it
// through.
class HeldLane {
 public:
  explicit HeldLane(Store& store) : store_(store), lock_(store.url()) {
    // Its lease ends at once, so the grant in flight takes the key again.
    auto first = store.holds().acquire(Request{"blocked", fresh_handle(), ""}.grant(1));
    EXPECT_TRUE(first.ok() && first->granted);
    before_ = store.holds().batches();
    lock_.value("BEGIN");
    lock_.value("SELECT key FROM holdfast_holds WHERE key = 'blocked' FOR UPDATE");
    leader_ = std::thread([this] {
      (void)store_.holds().acquire(Request{"blocked", fresh_handle(), ""}.grant());
    });
    const auto deadline = std::chrono::steady_clock::now() + kEventually;
    while (store.holds().batches() < before_ + 1 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
  }
  ~HeldLane() { open(); }
  // The batches sent before the held one.
  std::uint64_t before() const { return before_; }
  void open() {
    if (!leader_.joinable()) return;
    lock_.value("COMMIT");
    leader_.join();
  }

 private:
  Store& store_;
  SqlSession lock_;
  std::uint64_t before_ = 0;
  std::thread leader_;
};

TEST(GroupCommit, ConcurrentTryAcquiresAndReleasesGrantEachKeyToOneCallerWithRisingTokens) {
  Store store(4);
  constexpr int kThreads = 24;
  constexpr int kRounds = 25;
  // Keys 0..3 are hot (every thread wants them); each thread also has keys of its own.
  std::mutex mu;
  std::map<std::string, std::uint64_t> last_token;  // per key, under mu
  std::map<std::string, int> holders;               // per key, under mu
  std::set<std::uint64_t> tokens;
  std::atomic<int> granted{0}, refused{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        const std::string key =
            i % 2 == 0 ? "hot:" + std::to_string(i % 4) : "own:" + std::to_string(t);
        Request req{key, fresh_handle(), ""};
        auto g = store.holds().acquire(req.grant());
        if (!g.ok()) {
          ++failures;
          ADD_FAILURE() << g.error().message;
          continue;
        }
        if (!g->granted) {
          ++refused;
          EXPECT_TRUE(key.starts_with("hot:")) << "own key " << key << " refused";
          continue;
        }
        ++granted;
        {
          std::lock_guard lock(mu);
          EXPECT_EQ(++holders[key], 1) << key << " granted twice at once";
          EXPECT_GT(g->hold.token, last_token[key]) << key;
          last_token[key] = g->hold.token;
          EXPECT_TRUE(tokens.insert(g->hold.token).second) << "token " << g->hold.token;
          EXPECT_EQ(g->hold.key, key);
          EXPECT_EQ(g->hold.handle.to_string(), req.handle);
        }
        // Renewed and released by its handle; the holders count drops before the release, so
        // a grant that follows the release always finds it at 0.
        auto renewed = store.holds().renew_handle(key, req.handle, 30'000);
        ASSERT_TRUE(renewed.ok()) << renewed.error().message;
        EXPECT_TRUE(renewed->has_value()) << key;
        {
          std::lock_guard lock(mu);
          --holders[key];
        }
        // A release of a handle that holds nothing answers nothing freed.
        auto none = store.holds().release_handle(key, fresh_handle());
        ASSERT_TRUE(none.ok()) << none.error().message;
        EXPECT_TRUE(none->empty());
        auto freed = store.holds().release_handle(key, req.handle);
        ASSERT_TRUE(freed.ok()) << freed.error().message;
        EXPECT_EQ(*freed, std::vector<std::string>{key});
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(granted.load() + refused.load(), kThreads * kRounds);
  // Every thread's own key was free at each of its attempts.
  EXPECT_GE(granted.load(), kThreads * (kRounds / 2));
  // Every grant attempt, renew and release went through the batches (none rolled back here).
  const std::uint64_t batched = static_cast<std::uint64_t>(kThreads * kRounds) +
                                3u * static_cast<std::uint64_t>(granted.load());
  EXPECT_EQ(store.holds().batched_statements(), batched);
  EXPECT_GE(store.holds().batches(), 1u);
  EXPECT_LE(store.holds().batches(), batched);
  EXPECT_EQ(store.holds().doubts(), 0u);
  EXPECT_EQ(sql_value(store.url(),
                      "SELECT count(*) FROM holdfast_holds WHERE lease_expires_at > "
                      "holdfast_now_ms()"),
            "0");
}

// A batch is forced to carry three statements: the first batch of the one lane waits on a row
// lock that a session of the test holds, while three more statements queue behind it. One of
// them (a grant on a key that holds a typed value) fails in the database; the batch rolls
// back and each statement runs again alone: the failing one answers its own error, the others
// their results.
TEST(GroupCommit, AStatementThatFailsInABatchFailsAloneAndTheOthersAreAnswered) {
  Store store(1);
  // The key holding a value, and a row the test locks.
  sql_value(store.url(),
            "INSERT INTO holdfast_values (key, type, expires_at, data) VALUES ('v', 1, NULL, "
            "'\\x00')");
  Request blocker{"blocked", fresh_handle(), ""};
  auto first = store.holds().acquire(blocker.grant(1));  // its lease ends at once
  ASSERT_TRUE(first.ok() && first->granted);
  SqlSession lock(store.url());
  lock.value("BEGIN");
  lock.value("SELECT key FROM holdfast_holds WHERE key = 'blocked' FOR UPDATE");

  Request again{"blocked", fresh_handle(), ""};
  std::optional<Result<pg::Grant>> waited;
  std::thread leader([&] { waited = store.holds().acquire(again.grant()); });
  // The leader's batch is in flight once it counts; then the others queue behind it.
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (store.holds().batches() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(store.holds().batches(), 2u);

  Request ok1{"a", fresh_handle(), ""}, bad{"v", fresh_handle(), ""}, ok2{"z", fresh_handle(), ""};
  std::optional<Result<pg::Grant>> r1, r2, r3;
  std::thread t1([&] { r1 = store.holds().acquire(ok1.grant()); });
  std::thread t2([&] { r2 = store.holds().acquire(bad.grant()); });
  std::thread t3([&] { r3 = store.holds().acquire(ok2.grant()); });
  while (store.holds().queued() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(store.holds().queued(), 3u);
  lock.value("COMMIT");
  leader.join();
  t1.join();
  t2.join();
  t3.join();
  ASSERT_TRUE(waited && waited->ok());
  EXPECT_TRUE((*waited)->granted);
  // The three went in one batch, which rolled back; each then ran alone.
  EXPECT_EQ(store.holds().batches(), 3u);
  EXPECT_EQ(store.holds().batched_statements(), 5u);
  ASSERT_TRUE(r1 && r1->ok()) << r1->error().message;
  EXPECT_TRUE((*r1)->granted);
  ASSERT_TRUE(r3 && r3->ok()) << r3->error().message;
  EXPECT_TRUE((*r3)->granted);
  EXPECT_GT((*r3)->hold.token, 0u);
  EXPECT_NE((*r1)->hold.token, (*r3)->hold.token);
  ASSERT_TRUE(r2 && !r2->ok());
  EXPECT_EQ(r2->error().code, ErrorCode::kWrongType) << r2->error().message;
  // What they answered is what the database has: both granted keys held, the value's key not.
  EXPECT_EQ(sql_value(store.url(),
                      "SELECT string_agg(key, ',' ORDER BY key) FROM holdfast_holds WHERE "
                      "lease_expires_at > holdfast_now_ms()"),
            "a,blocked,z");
  EXPECT_EQ(store.holds().doubts(), 0u);
}

// The grant attempts of one batch run as one set statement, and so do its releases by handle
// (pg_batch.h, "Set statements"); each caller still gets what its statement alone would have
// answered: a free key granted, a held one refused with its holder's lease end, a re-take by the
// same owner granted with a new token, releases freed or not. A multi-key group's release is
// not the set statement's to do: it runs alone and frees all of the group's keys.
TEST(GroupCommit, TheGrantsAndReleasesOfABatchRunAsOneSetStatementEach) {
  Store store(1);
  auto take = [&](const Request& r) {
    auto g = store.holds().acquire(r.grant());
    EXPECT_TRUE(g.ok() && g->granted) << r.key;
    return g.ok() ? *g : pg::Grant{};
  };
  const Request held{"held", fresh_handle(), ""}, mine{"mine", fresh_handle(), "o"},
      s1{"s1", fresh_handle(), ""}, s2{"s2", fresh_handle(), ""};
  const pg::Grant held_grant = take(held);
  const pg::Grant mine_grant = take(mine);
  take(s1);
  take(s2);
  pg::GroupRequest group;
  const std::string group_handle = fresh_handle();
  group.grant = Request{"", group_handle, ""}.grant();
  group.keys = {KeyRequest{"g1"}, KeyRequest{"g2"}};
  auto grouped = store.holds().grant_group(group);
  ASSERT_TRUE(grouped.ok() && grouped->granted);

  // The lane's batch in flight waits for a row the test holds; the others queue behind it.
  HeldLane lane(store);
  const std::uint64_t batches_before = lane.before();
  ASSERT_EQ(store.holds().batches(), batches_before + 1);
  const auto deadline = std::chrono::steady_clock::now() + kEventually;

  const Request new1{"new1", fresh_handle(), ""}, new2{"new2", fresh_handle(), ""},
      other{"held", fresh_handle(), ""}, retake{"mine", fresh_handle(), "o"};
  std::vector<std::optional<Result<pg::Grant>>> grants(4);
  std::vector<std::optional<Result<std::vector<std::string>>>> releases(4);
  std::vector<std::thread> callers;
  const std::vector<const Request*> grant_of = {&new1, &new2, &other, &retake};
  for (std::size_t i = 0; i < grant_of.size(); ++i)
    callers.emplace_back([&, i] { grants[i] = store.holds().acquire(grant_of[i]->grant()); });
  const std::vector<std::pair<std::string, std::string>> release_of = {
      {"s1", s1.handle}, {"s2", s2.handle}, {"g1", group_handle}, {"s1", fresh_handle()}};
  for (std::size_t i = 0; i < release_of.size(); ++i) {
    callers.emplace_back([&, i] {
      releases[i] = store.holds().release_handle(release_of[i].first, release_of[i].second);
    });
  }
  while (store.holds().queued() < 8 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(store.holds().queued(), 8u);
  lane.open();
  for (auto& t : callers) t.join();

  // One batch: round 0 had one grant set and one release set (s1 twice: its second release, of
  // a handle that holds nothing, came in round 1 and ran as a single statement).
  EXPECT_EQ(store.holds().batches(), batches_before + 2);
  EXPECT_EQ(store.holds().set_statements(), 2u);
  EXPECT_EQ(store.holds().set_calls(), 7u);
  EXPECT_EQ(store.holds().set_alone(), 1u);  // the group's release
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(grants[i] && grants[i]->ok()) << i;
    ASSERT_TRUE(releases[i] && releases[i]->ok()) << i;
  }
  const pg::Grant& g1 = **grants[0];
  const pg::Grant& g2 = **grants[1];
  const pg::Grant& refused = **grants[2];
  const pg::Grant& retaken = **grants[3];
  EXPECT_TRUE(g1.granted);
  EXPECT_EQ(g1.hold.key, "new1");
  EXPECT_EQ(g1.hold.handle.to_string(), new1.handle);
  EXPECT_EQ(g1.hold.held_by, "user:test");
  EXPECT_EQ(g1.hold.lease_expires_at - g1.hold.acquired_at, 60'000);
  EXPECT_TRUE(g2.granted);
  EXPECT_EQ(g2.hold.key, "new2");
  EXPECT_NE(g1.hold.token, g2.hold.token);
  EXPECT_FALSE(refused.granted);
  EXPECT_EQ(refused.holder_lease_end, std::optional<Millis>(held_grant.hold.lease_expires_at));
  EXPECT_EQ(refused.holder_mode, LockMode::kExclusive);
  EXPECT_GT(refused.db_now, 0);
  EXPECT_TRUE(retaken.granted);
  EXPECT_EQ(retaken.hold.owner, "o");
  EXPECT_EQ(retaken.hold.handle.to_string(), retake.handle);
  EXPECT_GT(retaken.hold.token, mine_grant.hold.token);
  EXPECT_EQ(**releases[0], std::vector<std::string>{"s1"});
  EXPECT_EQ(**releases[1], std::vector<std::string>{"s2"});
  EXPECT_EQ(**releases[2], (std::vector<std::string>{"g1", "g2"}));
  EXPECT_TRUE(releases[3]->value().empty());
  // What they answered is what the database has.
  EXPECT_EQ(sql_value(store.url(),
                      "SELECT string_agg(key || ':' || handle, ',' ORDER BY key) FROM "
                      "holdfast_holds WHERE lease_expires_at > holdfast_now_ms()"),
            "blocked:" +
                sql_value(store.url(), "SELECT handle FROM holdfast_holds WHERE key = 'blocked'") +
                ",held:" + held.handle + ",mine:" + retake.handle + ",new1:" + new1.handle +
                ",new2:" + new2.handle);
  EXPECT_EQ(store.holds().doubts(), 0u);
}

// The release set frees its keys in place (each row keeps its last token and handle, and reads
// as free), and notifies exactly the keys some node waits for, as committed after the rows were
// updated: here a registration that commits while the set statement waits for a row.
TEST(GroupCommit, AReleaseSetNotifiesTheKeysWaitedForAsCommittedAfterItsRowUpdates) {
  Store store(1);
  const Request w{"w", fresh_handle(), ""}, u{"u", fresh_handle(), ""};
  std::map<std::string, std::uint64_t> tokens;
  for (const Request* r : {&w, &u}) {
    auto g = store.holds().acquire(r->grant());
    ASSERT_TRUE(g.ok() && g->granted) << r->key;
    tokens[r->key] = g->hold.token;
  }
  SqlSession listener(store.url());
  listener.value("LISTEN holdfast_keys");
  SqlSession row(store.url());

  HeldLane lane(store);
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  std::vector<std::optional<Result<std::vector<std::string>>>> releases(2);
  std::thread release_w([&] { releases[0] = store.holds().release_handle("w", w.handle); });
  std::thread release_u([&] { releases[1] = store.holds().release_handle("u", u.handle); });
  while (store.holds().queued() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(store.holds().queued(), 2u);
  // The release set starts (its snapshot taken) and waits for w's row, which the test holds.
  row.value("BEGIN");
  row.value("SELECT key FROM holdfast_holds WHERE key = 'w' FOR UPDATE");
  lane.open();
  SqlSession observer(store.url());
  bool waiting = false;
  while (!waiting && std::chrono::steady_clock::now() < deadline) {
    waiting = observer.value(
                  "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                  "'Lock' AND query LIKE '%hf_release_handle_set%'") != "0";
    if (!waiting) std::this_thread::sleep_for(2ms);
  }
  ASSERT_TRUE(waiting) << "the release set never waited for w's row";
  observer.value("INSERT INTO holdfast_waits (key, node_id, generation) VALUES ('w', 1, 1)");
  row.value("COMMIT");
  release_w.join();
  release_u.join();

  EXPECT_EQ(store.holds().set_statements(), 1u);
  ASSERT_TRUE(releases[0] && releases[0]->ok() && releases[1] && releases[1]->ok());
  EXPECT_EQ(**releases[0], std::vector<std::string>{"w"});
  EXPECT_EQ(**releases[1], std::vector<std::string>{"u"});
  const auto payload = listener.next_notification(kEventuallyMs);
  ASSERT_TRUE(payload.has_value()) << "the release set did not notify the registered waiter";
  EXPECT_EQ(*payload, "w");
  EXPECT_FALSE(listener.next_notification(200).has_value()) << "u has no waiter";
  // Freed in place: the rows keep their tokens and handles and read as free.
  EXPECT_EQ(sql_value(store.url(),
                      "SELECT string_agg(key || ':' || token || ':' || handle, ',' ORDER BY key) "
                      "FROM holdfast_holds WHERE key IN ('u', 'w') AND lease_expires_at <= "
                      "holdfast_now_ms()"),
            "u:" + std::to_string(tokens["u"]) + ":" + u.handle +
                ",w:" + std::to_string(tokens["w"]) + ":" + w.handle);
  // A freed row's handle holds nothing: releasing it again frees nothing.
  auto again = store.holds().release_handle("w", w.handle);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

// Calls that no thread waits for (the node's try-acquires and releases) queue like the others;
// a job that the batcher spawns leads their batch, and each gets its answer from it, in the
// batch with a caller that waits.
TEST(GroupCommit, CallsThatNoThreadWaitsForAreAnsweredFromTheirBatch) {
  Store store(1);
  std::mutex jobs_mu;
  std::vector<std::thread> jobs;
  store.holds().set_spawn([&](std::function<void()> job) {
    std::lock_guard lock(jobs_mu);
    jobs.emplace_back(std::move(job));
  });
  const Request s1{"s1", fresh_handle(), ""};
  ASSERT_TRUE(store.holds().acquire(s1.grant())->granted);
  HeldLane held(store);
  const std::uint64_t batches_before = held.before();
  ASSERT_EQ(store.holds().batches(), batches_before + 1);
  const auto deadline = std::chrono::steady_clock::now() + kEventually;

  std::mutex mu;
  std::condition_variable answered;
  std::vector<std::optional<Result<pg::Grant>>> grants(3);
  std::optional<Result<std::vector<std::string>>> freed;
  const std::vector<Request> asked = {
      {"a1", fresh_handle(), ""}, {"a2", fresh_handle(), ""}, {"s1", fresh_handle(), ""}};
  for (std::size_t i = 0; i < asked.size(); ++i) {
    store.holds().acquire_async(asked[i].grant(), [&, i](Result<pg::Grant> g) {
      std::lock_guard l(mu);
      grants[i] = std::move(g);
      answered.notify_all();
    });
  }
  store.holds().release_handle_async("s1", s1.handle, [&](Result<std::vector<std::string>> keys) {
    std::lock_guard l(mu);
    freed = std::move(keys);
    answered.notify_all();
  });
  std::optional<Result<pg::Grant>> waited;
  std::thread caller([&] {
    waited = store.holds().acquire(Request{"w", fresh_handle(), ""}.grant());
  });
  while (store.holds().queued() < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(store.holds().queued(), 5u);
  {
    std::lock_guard l(mu);
    EXPECT_FALSE(grants[0] || grants[1] || grants[2] || freed) << "answered before its batch ran";
  }
  held.open();
  caller.join();
  {
    std::unique_lock l(mu);
    ASSERT_TRUE(answered.wait_until(l, deadline,
                                    [&] { return grants[0] && grants[1] && grants[2] && freed; }));
  }
  {
    std::lock_guard l(jobs_mu);
    for (auto& t : jobs) t.join();
  }
  // One batch: the three grant attempts and the waiting caller's in a set statement (s1 was
  // still held in its round 0, by s1's holder), then s1's release.
  EXPECT_EQ(store.holds().batches(), batches_before + 2);
  for (std::size_t i = 0; i < 3; ++i) ASSERT_TRUE(grants[i]->ok()) << i;
  EXPECT_TRUE((*grants[0])->granted);
  EXPECT_EQ((*grants[0])->hold.handle.to_string(), asked[0].handle);
  EXPECT_TRUE((*grants[1])->granted);
  EXPECT_EQ((*grants[2])->granted, false);  // s1: its holder's release came after, in round 1
  ASSERT_TRUE(freed->ok());
  EXPECT_EQ(**freed, std::vector<std::string>{"s1"});
  ASSERT_TRUE(waited && waited->ok());
  EXPECT_TRUE((*waited)->granted);
  EXPECT_GE(store.holds().set_statements(), 1u);
  EXPECT_EQ(store.holds().doubts(), 0u);
}

// A batch with a release and then a grant of one key takes the key's claim (an advisory lock
// that every grant takes before the key's row) before it touches the row: otherwise it would
// hold the row while waiting for the claim, and another node's grant, holding the claim while
// waiting for the row, would deadlock with it. Here the test holds the claim: the batch must
// wait for it with the row still unlocked.
TEST(GroupCommit, ABatchWithSeveralStatementsOnAKeyTakesItsClaimBeforeItsRow) {
  Store store(1);
  Request held{"k", fresh_handle(), ""};
  auto first = store.holds().acquire(held.grant());
  ASSERT_TRUE(first.ok() && first->granted);
  auto blocker = store.holds().acquire(Request{"blocked", fresh_handle(), ""}.grant(1));
  ASSERT_TRUE(blocker.ok() && blocker->granted);
  SqlSession claim(store.url()), row(store.url()), look(store.url());
  claim.value("BEGIN");
  claim.value("SELECT pg_advisory_xact_lock(1215261797, hashtext('k'))");
  row.value("BEGIN");
  row.value("SELECT key FROM holdfast_holds WHERE key = 'blocked' FOR UPDATE");

  // The lane's batch in flight waits for the row; the release and the grant queue behind it.
  std::thread leader([&] {
    (void)store.holds().acquire(Request{"blocked", fresh_handle(), ""}.grant());
  });
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (store.holds().batches() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(store.holds().batches(), 3u);
  Request next{"k", fresh_handle(), ""};
  std::optional<Result<std::vector<std::string>>> released;
  std::optional<Result<pg::Grant>> granted;
  std::thread releaser([&] { released = store.holds().release_handle("k", held.handle); });
  while (store.holds().queued() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  std::thread grantee([&] { granted = store.holds().acquire(next.grant()); });
  while (store.holds().queued() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(store.holds().queued(), 2u);
  row.value("COMMIT");
  leader.join();
  // The batch of the two now waits for the claim, with k's row not locked by it.
  while (look.value("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") !=
             "1" &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(store.holds().batches(), 4u);
  EXPECT_EQ(look.value("SELECT count(*) FROM (SELECT key FROM holdfast_holds WHERE key = 'k' "
                       "FOR UPDATE SKIP LOCKED) x"),
            "1");
  claim.value("COMMIT");
  releaser.join();
  grantee.join();
  ASSERT_TRUE(released && released->ok());
  EXPECT_EQ(**released, std::vector<std::string>{"k"});
  ASSERT_TRUE(granted && granted->ok());
  EXPECT_TRUE((*granted)->granted);
  EXPECT_GT((*granted)->hold.token, first->hold.token);
  EXPECT_EQ(store.holds().batched_statements(), 5u);
}

// One sequence of operations, one at a time, over a store with batching and one without: the
// same answers (tokens count from the same start in each fresh schema).
TEST(GroupCommit, ASequenceAnswersTheSameWithAndWithoutBatching) {
  auto play = [](Store& store) {
    std::vector<std::string> log;
    auto& h = store.holds();
    std::map<std::string, std::string> handles;
    const std::vector<std::string> handle_of = {fresh_handle(), fresh_handle(), fresh_handle(),
                                                fresh_handle(), fresh_handle()};
    auto acquire = [&](const std::string& key, int who, const std::string& owner, Millis ttl) {
      Request r{key, handle_of[static_cast<std::size_t>(who)], owner};
      pg::GrantRequest g = r.grant(ttl);
      g.lock_delay_ms = key == "delayed" ? 60'000 : 0;
      auto out = h.acquire(g);
      if (!out.ok()) return log.push_back("error " + out.error().message);
      log.push_back(key + (out->granted ? " granted token " + std::to_string(out->hold.token) +
                                              " owner " + out->hold.owner
                                        : std::string(" refused")));
    };
    auto release = [&](const std::string& key, int who) {
      auto out = h.release_handle(key, handle_of[static_cast<std::size_t>(who)]);
      if (!out.ok()) return log.push_back("error " + out.error().message);
      log.push_back(key + " released " + std::to_string(out->size()));
    };
    auto renew = [&](const std::string& key, int who) {
      auto out = h.renew_handle(key, handle_of[static_cast<std::size_t>(who)], 5'000);
      if (!out.ok()) return log.push_back("error " + out.error().message);
      log.push_back(key + (out->has_value() ? " renewed" : " not renewed"));
    };
    acquire("k", 0, "", 60'000);
    acquire("k", 1, "", 60'000);   // held: refused
    acquire("k", 2, "o", 60'000);  // held by another owner: refused
    renew("k", 1);                 // not the holder
    renew("k", 0);
    release("k", 1);  // not the holder
    release("k", 0);
    release("k", 0);               // twice: nothing left
    acquire("k", 1, "o", 60'000);  // free again
    acquire("k", 2, "o", 60'000);  // the same owner re-takes it
    release("k", 1);               // the old handle holds nothing now
    release("k", 2);
    acquire("delayed", 3, "", 1);  // its lease ends at once; its lock-delay keeps the key
    std::this_thread::sleep_for(10ms);
    release("delayed", 3);              // ended: nothing to release
    acquire("delayed", 4, "", 60'000);  // closed by its lock-delay
    acquire("it's \"quoted\" \\ ünïcode", 4, "o'wner", 60'000);
    release("it's \"quoted\" \\ ünïcode", 4);
    return log;
  };
  Store batched(2), single(0);
  const auto a = play(batched);
  const auto b = play(single);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 17u);
  EXPECT_EQ(a[0], "k granted token 1 owner ");
  EXPECT_EQ(a[1], "k refused");
  EXPECT_TRUE(a[8].starts_with("k granted token ")) << a[8];
  EXPECT_TRUE(a[9].starts_with("k granted token ") && a[9].ends_with(" owner o")) << a[9];
  EXPECT_EQ(a[10], "k released 0");
  EXPECT_EQ(a[11], "k released 1");
  EXPECT_EQ(a[13], "delayed released 0");
  EXPECT_EQ(a[14], "delayed refused");
  EXPECT_GT(batched.holds().batched_statements(), 0u);
  EXPECT_EQ(single.holds().batched_statements(), 0u);
}

// A hot key on one node: each release wakes the next waiter as soon as it is queued, so the
// grant may commit with the release (pg_batch.h, "Hand-over"). The waiters still get the key
// one at a time, in the order they came, with rising tokens.
TEST(GroupCommit, ReleasesHandTheKeyToTheNodesWaitersInTheirOrder) {
  Cluster cluster(1);
  RespClient holder = cluster.node(0).client();
  auto first = holder.call({"LOCK.TRY", "hot", "TTL", "60000"});
  ASSERT_FALSE(first.is_null()) << first.debug();
  constexpr int kWaiters = 6;
  std::vector<RespClient> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.push_back(cluster.node(0).client());
    waiters.back().send(
        {"LOCK.ACQUIRE", "hot", "TTL", "60000", "TIMEOUT", std::to_string(kEventuallyMs)});
    // Queued before the next one comes.
    const auto deadline = std::chrono::steady_clock::now() + kEventually;
    while (holder.call({"LOCK.STATUS", "hot"}).number("waiters") < i + 1 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    ASSERT_EQ(holder.call({"LOCK.STATUS", "hot"}).number("waiters"), i + 1);
  }
  ASSERT_EQ(holder.call({"LOCK.RELEASE", "hot", first.text("handle")}).number("released"), 1);
  std::int64_t last = first.number("token");
  for (int i = 0; i < kWaiters; ++i) {
    // Only waiter i can have it now: waiter i+1 is behind it, and the key is held until i
    // releases it.
    auto granted = waiters[static_cast<std::size_t>(i)].read();
    ASSERT_FALSE(granted.is_error()) << granted.debug();
    EXPECT_GT(granted.number("token"), last) << "waiter " << i;
    last = granted.number("token");
    EXPECT_EQ(holder.call({"LOCK.STATUS", "hot"}).number("token"), last);
    ASSERT_EQ(waiters[static_cast<std::size_t>(i)]
                  .call({"LOCK.RELEASE", "hot", granted.text("handle")})
                  .number("released"),
              1);
  }
  EXPECT_EQ(holder.call({"LOCK.STATUS", "hot"}).number("waiters"), 0);
  EXPECT_FALSE(holder.call({"LOCK.TRY", "hot", "TTL", "1000"}).is_null());
}

}  // namespace
}  // namespace holdfast::testing
