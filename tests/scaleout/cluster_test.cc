// Three nodes over one PostgreSQL behave as one lock server: exclusion across nodes, waking a
// waiter on another node, one token sequence, holds that outlive a killed node, session holds
// that do not (after the grace), a paused node that comes back, nodes that start together, and a
// database that is not there.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <future>
#include <thread>

#include "cluster.h"
#include "support/eventually.h"

namespace holdfast::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class ThreeNodes : public ::testing::Test {
 protected:
  Cluster cluster;
  RespClient client(int node) { return cluster.node(node).client(); }
};

TEST_F(ThreeNodes, AKeyHeldThroughNodeOneIsRefusedOnNodesTwoAndThree) {
  auto hold = client(0).call({"LOCK.TRY", "jobs:1", "TTL", "60000"});
  ASSERT_FALSE(hold.is_null()) << hold.debug();
  for (int n : {1, 2}) {
    auto c = client(n);
    EXPECT_TRUE(c.call({"LOCK.TRY", "jobs:1", "TTL", "60000"}).is_null()) << "node " << n + 1;
    EXPECT_EQ(c.call({"LOCK.ACQUIRE", "jobs:1", "TTL", "1000", "TIMEOUT", "0"}).error_code(),
              "LOCK_TIMEOUT");
    EXPECT_EQ(c.call({"LOCK.ASSIGN", "jobs:1", "someone"}).error_code(), "LOCK_HELD");
    auto status = c.call({"LOCK.STATUS", "jobs:1"});
    EXPECT_EQ(status.number("held"), 1);
    EXPECT_EQ(status.number("token"), hold.number("token"));
    // A handle from node 1 is a handle everywhere; a wrong one is refused everywhere.
    EXPECT_EQ(c.call({"LOCK.RELEASE", "jobs:1", "01234567890123456789012345"}).number("released"),
              0);
  }
  // Re-take by owner works across nodes too (the same principal and owner).
  auto owned = client(1).call({"LOCK.TRY", "import:u1", "TTL", "60000", "OWNER", "run-42"});
  auto retaken = client(2).call({"LOCK.TRY", "import:u1", "TTL", "60000", "OWNER", "run-42"});
  ASSERT_FALSE(retaken.is_null());
  EXPECT_GT(retaken.number("token"), owned.number("token"));
  EXPECT_EQ(client(0).call({"LOCK.RELEASE", "import:u1", owned.text("handle")}).text("reason"),
            "not_holder");
}

// The waiter's node registers its wait in the database, the release's transaction notifies the
// key, and the waiter is granted. That a notified node's head asks at once, not at its periodic
// look (every 250 ms), is LocalWaiters' part (tests/service/pg_waiters_test.cc); how soon after
// the release the grant comes is a speed, measured by holdfast-bench (the hot key over
// holdfast-pg3), not asserted here.
TEST_F(ThreeNodes, AReleaseOnNodeOneNotifiesAndGrantsAWaiterOnNodeThree) {
  auto holder = client(0);
  auto waiter = client(2);
  SqlSession listener(cluster.store_url());
  listener.value("LISTEN holdfast_keys");
  for (int round = 0; round < 3; ++round) {
    const std::string key = "handoff:" + std::to_string(round);
    auto hold = holder.call({"LOCK.TRY", key, "TTL", "600000"});
    ASSERT_FALSE(hold.is_null());
    waiter.send({"LOCK.ACQUIRE", key, "TTL", "60000", "TIMEOUT", std::to_string(kEventuallyMs)});
    ASSERT_TRUE(await_registered_wait(cluster.store_url(), key)) << "round " << round;
    ASSERT_EQ(holder.call({"LOCK.RELEASE", key, hold.text("handle")}).number("released"), 1);
    const auto notified = listener.next_notification(kEventuallyMs);
    ASSERT_TRUE(notified.has_value()) << "round " << round << ": the release notified no one";
    EXPECT_EQ(*notified, key);
    auto granted = waiter.read();
    ASSERT_FALSE(granted.is_error()) << granted.debug();
    EXPECT_EQ(granted.text("key"), key);
    EXPECT_GT(granted.number("token"), hold.number("token"));
  }
}

// By the database clock: never before the lease's end. (That it comes within a few
// milliseconds of it, rather than at the waiter's next periodic look, is a speed: not asserted.)
TEST_F(ThreeNodes, ExpiryHandsTheKeyToAWaiterOnAnotherNodeByTheDatabaseClock) {
  auto first = client(0).call({"LOCK.TRY", "k", "TTL", "300"});
  auto granted = client(1).call(
      {"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_GE(granted.number("acquiredAt"), first.number("leaseExpiresAt"));
  EXPECT_GT(granted.number("token"), first.number("token"));
}

TEST_F(ThreeNodes, TokensStayStrictlyIncreasingAcrossNodes) {
  std::vector<RespClient> clients;
  for (int n = 0; n < 3; ++n) clients.push_back(client(n));
  std::int64_t last = 0;
  for (int i = 0; i < 60; ++i) {
    auto& c = clients[static_cast<std::size_t>((i * 7) % 3)];
    const std::string key = "t:" + std::to_string(i % 4);
    std::int64_t token = 0;
    if (i % 5 == 4) {
      // Assign and transfer mint tokens from the same sequence.
      auto a = c.call({"LOCK.ASSIGN", key + ":a", "alice"});
      ASSERT_FALSE(a.is_error()) << a.debug();
      EXPECT_GT(a.number("token"), last);
      auto t = clients[static_cast<std::size_t>((i + 1) % 3)].call(
          {"LOCK.TRANSFER", key + ":a", "bob", "FROM", "alice"});
      ASSERT_FALSE(t.is_error()) << t.debug();
      EXPECT_GT(t.number("token"), a.number("token"));
      token = t.number("token");
      c.call({"LOCK.UNASSIGN", key + ":a"});
    } else {
      auto h = c.call({"LOCK.TRY", key, "TTL", "60000"});
      ASSERT_FALSE(h.is_null());
      token = h.number("token");
      // Released through another node, by handle.
      ASSERT_EQ(clients[static_cast<std::size_t>((i + 2) % 3)]
                    .call({"LOCK.RELEASE", key, h.text("handle")})
                    .number("released"),
                1);
    }
    EXPECT_GT(token, last) << "grant " << i;
    last = token;
  }
}

TEST_F(ThreeNodes, KillNineKeepsLeasesInPostgresAndFreesSessionHoldsAfterTheGrace) {
  auto victim = client(1);
  auto renewable = victim.call({"LOCK.TRY", "lease:renew", "TTL", "60000"});
  auto releasable = victim.call({"LOCK.TRY", "lease:release", "TTL", "60000"});
  auto session = victim.call({"LOCK.TRY", "session:1", "TTL", "600000", "SESSION"});
  ASSERT_FALSE(renewable.is_null());
  ASSERT_FALSE(releasable.is_null());
  ASSERT_EQ(session.text("scope"), "session");

  // Read before the kill: a heartbeat in between only makes the bound below weaker.
  const std::int64_t last_heartbeat = cluster.last_heartbeat(1);
  cluster.node(1).kill9();
  auto other = client(0);
  // The lease holds are rows in PostgreSQL: still held, renewable and releasable by handle.
  EXPECT_EQ(other.call({"LOCK.STATUS", "lease:renew"}).number("held"), 1);
  auto renewed =
      other.call({"LOCK.RENEW", "lease:renew", renewable.text("handle"), "TTL", "90000"});
  EXPECT_EQ(renewed.number("renewed"), 1) << renewed.debug();
  EXPECT_EQ(client(2)
                .call({"LOCK.RELEASE", "lease:release", releasable.text("handle")})
                .number("released"),
            1);
  EXPECT_EQ(other.call({"LOCK.STATUS", "lease:release"}).number("held"), 0);

  // The session hold outlives its dead node only for the grace (counted from the node's last
  // heartbeat, by the database clock), then a live node frees it and wakes a waiter. Its lease
  // (10 minutes) is far off: a grant at all means the grace ended it.
  EXPECT_EQ(other.call({"LOCK.STATUS", "session:1"}).number("held"), 1);
  auto granted = client(2).call(
      {"LOCK.ACQUIRE", "session:1", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_GE(granted.number("acquiredAt"), last_heartbeat + Cluster::kSessionGraceMs);
  EXPECT_GT(granted.number("token"), session.number("token"));
}

// A node that stops answering (here SIGSTOP; in life a partition or a stalled VM) for longer
// than the grace is presumed dead. When it resumes, its clients learn that they lost their
// session holds, and the node re-registers so that its new session holds last.
TEST_F(ThreeNodes, ANodePausedPastTheGraceLosesItsSessionHoldsAndReRegistersWhenItResumes) {
  auto victim = client(1);
  auto held = victim.call({"LOCK.TRY", "s", "TTL", "600000", "SESSION"});
  ASSERT_FALSE(held.is_null());
  cluster.node(1).drain_output();
  const pid_t paused = cluster.node(1).pid();
  ASSERT_EQ(::kill(paused, SIGSTOP), 0);
  auto granted = client(2).call(
      {"LOCK.ACQUIRE", "s", "TTL", "600000", "TIMEOUT", std::to_string(kEventuallyMs)});
  ASSERT_EQ(::kill(paused, SIGCONT), 0);
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_GT(granted.number("token"), held.number("token"));

  auto renewed = victim.call({"LOCK.RENEW", "s", held.text("handle"), "TTL", "600000"});
  EXPECT_EQ(renewed.number("renewed"), 0) << renewed.debug();
  EXPECT_EQ(renewed.text("reason"), "lease_lost");
  EXPECT_EQ(victim.call({"LOCK.RELEASE", "s", held.text("handle")}).number("released"), 0);
  auto status = victim.call({"LOCK.STATUS", "s"});
  EXPECT_EQ(status.number("token"), granted.number("token")) << status.debug();

  std::string log;
  const auto deadline = Clock::now() + kEventually;
  while (log.find("heartbeat row was gone") == std::string::npos && Clock::now() < deadline)
    log += cluster.node(1).drain_output(200);
  EXPECT_NE(log.find("heartbeat row was gone"), std::string::npos) << log;

  // Re-registered: a new session hold outlives the grace like any other.
  auto fresh = victim.call({"LOCK.TRY", "s2", "TTL", "600000", "SESSION"});
  ASSERT_FALSE(fresh.is_null());
  std::this_thread::sleep_for(milliseconds(Cluster::kSessionGraceMs + 500));
  auto still = client(0).call({"LOCK.STATUS", "s2"});
  EXPECT_EQ(still.number("held"), 1) << still.debug();
  EXPECT_EQ(still.number("token"), fresh.number("token"));
}

TEST_F(ThreeNodes, AClosedConnectionFreesItsSessionHoldForWaitersOnOtherNodes) {
  auto waiter = client(2);
  {
    auto owner = client(0);
    ASSERT_FALSE(owner.call({"LOCK.TRY", "s", "TTL", "600000", "SESSION"}).is_null());
    waiter.send({"LOCK.ACQUIRE", "s", "TTL", "1000", "TIMEOUT", std::to_string(kEventuallyMs)});
    auto watcher = client(2);
    ASSERT_TRUE(await_waiters(watcher, "s", 1));
  }  // the owner's connection closes here
  // Its node is alive, so no grace applies, and its lease (10 minutes) is far off: a grant at
  // all means the close freed the key.
  auto granted = waiter.read();
  ASSERT_FALSE(granted.is_error()) << granted.debug();
  EXPECT_EQ(granted.text("key"), "s");
}

TEST_F(ThreeNodes, ARestartedNodeFreesTheSessionHoldsOfItsPreviousLifeAtOnce) {
  auto c = client(0);
  ASSERT_FALSE(c.call({"LOCK.TRY", "s", "TTL", "600000", "SESSION"}).is_null());
  cluster.node(0).kill9();
  cluster.node(0).start();  // same data dir: the node knows its previous id
  EXPECT_EQ(client(1).call({"LOCK.STATUS", "s"}).number("held"), 0);
}

TEST(ScaleOut, NodesThatStartTogetherMigrateTheSchemaOnce) {
  const std::string url = fresh_store_url(postgres_url());
  std::vector<std::future<std::unique_ptr<ServerProcess>>> starting;
  for (int i = 0; i < 3; ++i) {
    starting.push_back(std::async(std::launch::async, [&] {
      return std::make_unique<ServerProcess>(std::vector<std::string>{"--store", url});
    }));
  }
  std::vector<std::unique_ptr<ServerProcess>> nodes;
  for (auto& f : starting) nodes.push_back(f.get());
  // Each migration recorded once, by whichever node took the migration lock first.
  EXPECT_EQ(sql_value(url, "SELECT count(*) FROM holdfast_schema_versions"), "10");
  EXPECT_EQ(sql_value(url, "SELECT count(*) FROM holdfast_nodes"), "3");
  auto hold = nodes[0]->client().call({"LOCK.TRY", "k", "TTL", "1000"});
  EXPECT_TRUE(nodes[2]->client().call({"LOCK.TRY", "k", "TTL", "1000"}).is_null());
}

TEST(ScaleOut, ANodeRefusesToStartWhenTheDatabaseIsUnreachable) {
  TempDir dir;
  auto r =
      run({HOLDFAST_BIN, "serve", "--data-dir", dir.path(), "--listen", "127.0.0.1:0", "--http", "",
           "--store",
           "postgresql://holdfast:secret@127.0.0.1:" + std::to_string(free_port()) + "/nowhere"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot use the PostgreSQL store"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("secret"), std::string::npos)
      << "the password must not be printed: " << r.err;
  EXPECT_EQ(r.out.find("holdfast ready"), std::string::npos);
}

// A node that starts while the database is slow for longer than a statement's deadline (here a
// table its statements read is locked) waits, as its migration does, instead of failing: on a
// busy machine preparing its statements can take that long.
TEST(ScaleOut, ANodeStartsWhenItsStatementsWaitLongerThanTheDeadline) {
  const std::string url = fresh_store_url(postgres_url());
  { ServerProcess first({"--store", url}); }
  SqlSession locker(url);
  locker.value("BEGIN");
  locker.value("LOCK TABLE holdfast_holds IN ACCESS EXCLUSIVE MODE");
  auto starting = std::async(std::launch::async, [&] {
    return std::make_unique<ServerProcess>(
        std::vector<std::string>{"--store", url, "--statement-deadline-ms", "300"});
  });
  // The node's set-up waits for the lock; it must go on waiting past its deadline.
  const std::string waiting =
      "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
      "WHERE NOT l.granted AND c.relname = 'holdfast_holds'";
  const auto give_up = std::chrono::steady_clock::now() + kEventually;
  while (sql_value(url, waiting) == "0" && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_NE(sql_value(url, waiting), "0") << "the node never waited for the lock";
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // over three deadlines
  locker.value("COMMIT");
  std::unique_ptr<ServerProcess> node = starting.get();  // throws if the start failed
  EXPECT_FALSE(node->client().call({"LOCK.TRY", "k", "TTL", "1000"}).is_null());
}

TEST(ScaleOut, ANodeRefusesASchemaNewerThanItKnows) {
  const std::string url = fresh_store_url(postgres_url());
  { ServerProcess first({"--store", url}); }
  sql_value(url,
            "INSERT INTO holdfast_schema_versions (version, description) VALUES (999, 'from the "
            "future')");
  TempDir dir;
  auto r = run({HOLDFAST_BIN, "serve", "--data-dir", dir.path(), "--listen", "127.0.0.1:0",
                "--http", "", "--store", url});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("newer than this holdfast knows"), std::string::npos) << r.err;
}

// What schema version 10 changed (the type check's trigger, the waiters of many keys), put
// back as version 9 had it.
void back_to_version_9(const std::string& url) {
  sql_value(url,
            "CREATE OR REPLACE FUNCTION holdfast_holds_not_a_value() RETURNS trigger LANGUAGE "
            "plpgsql AS $$ BEGIN PERFORM holdfast_claim_key(NEW.key); IF EXISTS (SELECT 1 FROM "
            "holdfast_values v WHERE v.key = NEW.key AND (v.expires_at IS NULL OR v.expires_at > "
            "holdfast_now_ms())) THEN RAISE EXCEPTION 'WRONGTYPE Operation against a key holding "
            "the wrong kind of value' USING ERRCODE = 'HF001'; END IF; RETURN NEW; END $$");
  sql_value(url, "DROP TRIGGER holdfast_holds_not_a_value ON holdfast_holds");
  sql_value(url,
            "CREATE TRIGGER holdfast_holds_not_a_value BEFORE INSERT ON holdfast_holds FOR EACH "
            "ROW EXECUTE FUNCTION holdfast_holds_not_a_value()");
  sql_value(url, "DROP TRIGGER holdfast_values_made ON holdfast_values");
  sql_value(url,
            "DROP FUNCTION holdfast_values_made(), holdfast_keys_waited(text[]), "
            "holdfast_hold_needs_look(text)");
  sql_value(url, "DROP SEQUENCE holdfast_values_made");
  sql_value(url, "DELETE FROM holdfast_schema_versions WHERE version > 9");
}

// What schema version 9 added (typed values), taken away again.
void back_to_version_8(const std::string& url) {
  back_to_version_9(url);
  sql_value(url, "DROP TRIGGER holdfast_holds_not_a_value ON holdfast_holds");
  sql_value(url,
            "DROP FUNCTION holdfast_holds_not_a_value(), holdfast_value_delete(text), "
            "holdfast_key_open(text, boolean), holdfast_claim_key(text)");
  sql_value(url, "DROP TABLE holdfast_values");
  sql_value(url, "DELETE FROM holdfast_schema_versions WHERE version > 8");
}

// What schema version 8 added (the session-liveness rule), taken away again.
void back_to_version_7(const std::string& url) {
  back_to_version_8(url);
  sql_value(url,
            "DROP FUNCTION holdfast_free_lapsed_session_members, holdfast_judge_since, "
            "holdfast_session_lapsed");
  sql_value(url, "ALTER TABLE holdfast_nodes DROP COLUMN contact_since");
  sql_value(url, "DELETE FROM holdfast_schema_versions WHERE version > 7");
}

// What schema version 5 added (multi-key groups), taken away again.
// What schema version 7 added (lock events: the watchers' table and the triggers), taken away
// again.
void back_to_version_6(const std::string& url) {
  back_to_version_7(url);
  sql_value(url, "DROP TRIGGER holdfast_hold_events ON holdfast_holds");
  sql_value(url, "DROP TRIGGER holdfast_member_events ON holdfast_members");
  sql_value(url,
            "DROP FUNCTION holdfast_hold_event(), holdfast_member_event(), holdfast_set_watching, "
            "holdfast_hold_lease, holdfast_event_payload, holdfast_channel");
  sql_value(url, "DROP TABLE holdfast_watchers");
  sql_value(url, "DELETE FROM holdfast_schema_versions WHERE version > 6");
}

// What schema version 6 added (members' lock-delay), taken away again.
void back_to_version_5(const std::string& url) {
  back_to_version_6(url);
  sql_value(url, "DROP TRIGGER holdfast_group_row_delay ON holdfast_holds");
  sql_value(url,
            "DROP FUNCTION holdfast_group_row_delay(), holdfast_members_closed_until, "
            "holdfast_grant_member(text, text, text, text, bigint, smallint, bigint, bigint, "
            "smallint, integer, integer, bigint, boolean), holdfast_grant_member(text, text, "
            "text, text, bigint, smallint, bigint, bigint, smallint, integer, integer, bigint, "
            "boolean, bigint)");
  sql_value(url, "ALTER FUNCTION holdfast_grant_member_v4 RENAME TO holdfast_grant_member");
  sql_value(url, "ALTER TABLE holdfast_members DROP COLUMN lock_delay_ms");
  sql_value(url, "DELETE FROM holdfast_schema_versions WHERE version > 5");
}

void back_to_version_4(const std::string& url) {
  back_to_version_5(url);
  sql_value(url,
            "DROP FUNCTION holdfast_key_kind, holdfast_grant_group, holdfast_handle_keys, "
            "holdfast_release_handle, holdfast_renew_handle");
  sql_value(url, "DROP INDEX holdfast_holds_handle, holdfast_members_handle");
  sql_value(url, "DELETE FROM holdfast_schema_versions WHERE version > 4");
}

// What schema version 4 added (shared and semaphore holds), taken away again.
void back_to_version_3(const std::string& url) {
  back_to_version_4(url);
  sql_value(url,
            "DROP FUNCTION holdfast_group_left, holdfast_grant_member, holdfast_queue_leave, "
            "holdfast_release_member, holdfast_free_group, holdfast_extend_group, "
            "holdfast_renew_member, holdfast_free_session_members");
  sql_value(url, "DROP TABLE holdfast_members, holdfast_queue");
  sql_value(url, "DROP SEQUENCE holdfast_queue_order");
  sql_value(url, "ALTER TABLE holdfast_holds DROP COLUMN mode, DROP COLUMN permit_limit");
  sql_value(url, "DELETE FROM holdfast_schema_versions WHERE version > 3");
}

TEST(ScaleOut, ANodeUpgradesASchemaAtVersionOne) {
  const std::string url = fresh_store_url(postgres_url());
  { ServerProcess first({"--store", url}); }
  // Back to what a version-1 node left: no holdfast_key_waited(), no lock_delay_ms column.
  back_to_version_3(url);
  sql_value(url, "DROP FUNCTION holdfast_key_waited(text)");
  sql_value(url, "ALTER TABLE holdfast_holds DROP COLUMN lock_delay_ms");
  sql_value(url, "DELETE FROM holdfast_schema_versions WHERE version > 1");
  ServerProcess node({"--store", url});
  EXPECT_EQ(sql_value(url, "SELECT max(version) FROM holdfast_schema_versions"), "10");
  auto c = node.client();
  auto hold = c.call({"LOCK.TRY", "up:1", "TTL", "60000"});
  ASSERT_FALSE(hold.is_null()) << hold.debug();
  EXPECT_EQ(c.call({"LOCK.RELEASE", "up:1", hold.text("handle")}).number("released"), 1);
}

TEST(ScaleOut, ANodeUpgradesASchemaAtVersionThreeAndKeepsItsHolds) {
  const std::string url = fresh_store_url(postgres_url());
  std::string handle;
  std::int64_t token = 0;
  {
    ServerProcess first({"--store", url});
    auto hold = first.client().call({"LOCK.TRY", "kept", "TTL", "600000"});
    ASSERT_FALSE(hold.is_null()) << hold.debug();
    handle = hold.text("handle");
    token = hold.number("token");
  }
  back_to_version_3(url);  // a database a version-3 node left, with a live hold in it
  ServerProcess node({"--store", url});
  EXPECT_EQ(sql_value(url, "SELECT max(version) FROM holdfast_schema_versions"), "10");
  auto c = node.client();
  auto s = c.call({"LOCK.STATUS", "kept"});
  EXPECT_EQ(s.number("token"), token) << s.debug();
  EXPECT_FALSE(s.has("mode")) << "an exclusive hold's status is as it always was";
  EXPECT_TRUE(c.call({"LOCK.TRY", "kept", "TTL", "1000", "MODE", "SHARED"}).is_null());
  EXPECT_EQ(c.call({"LOCK.RELEASE", "kept", handle}).number("released"), 1);
  auto shared = c.call({"LOCK.TRY", "kept", "TTL", "60000", "MODE", "SHARED"});
  ASSERT_FALSE(shared.is_null() || shared.is_error()) << shared.debug();
  EXPECT_GT(shared.number("token"), token);
}

TEST(ScaleOut, ANodeUpgradesASchemaAtVersionFourAndKeepsItsHolds) {
  const std::string url = fresh_store_url(postgres_url());
  std::string exclusive, shared;
  {
    ServerProcess first({"--store", url});
    auto c = first.client();
    exclusive = c.call({"LOCK.TRY", "v4:x", "TTL", "600000"}).text("handle");
    shared = c.call({"LOCK.TRY", "v4:s", "TTL", "600000", "MODE", "SHARED"}).text("handle");
  }
  back_to_version_4(url);  // a database a version-4 node left, with live holds in it
  ServerProcess node({"--store", url});
  EXPECT_EQ(sql_value(url, "SELECT max(version) FROM holdfast_schema_versions"), "10");
  auto c = node.client();
  // The holds of before are released by their handles, as before; then a group takes both.
  EXPECT_TRUE(c.call({"LOCK.TRYALL", "TTL", "1000", "KEY", "v4:x", "KEY", "v4:s"}).is_null());
  EXPECT_EQ(c.call({"LOCK.RELEASE", "v4:x", exclusive}).number("released"), 1);
  EXPECT_EQ(c.call({"LOCK.RELEASE", "v4:s", shared}).number("released"), 1);
  auto group = c.call({"LOCK.TRYALL", "TTL", "60000", "KEY", "v4:x", "KEY", "v4:s"});
  ASSERT_FALSE(group.is_null() || group.is_error()) << group.debug();
  EXPECT_EQ(group.get("holds")->items.size(), 2u);
}

TEST(ScaleOut, ANodeUpgradesASchemaAtVersionFiveAndKeepsItsMembers) {
  const std::string url = fresh_store_url(postgres_url());
  std::string shared;
  {
    ServerProcess first({"--store", url});
    shared =
        first.client().call({"LOCK.TRY", "v5:s", "TTL", "600000", "MODE", "SHARED"}).text("handle");
  }
  back_to_version_5(url);  // a database a version-5 node left, with a shared hold in it
  ServerProcess node({"--store", url});
  EXPECT_EQ(sql_value(url, "SELECT max(version) FROM holdfast_schema_versions"), "10");
  auto c = node.client();
  auto delayed =
      c.call({"LOCK.TRY", "v5:s", "TTL", "60000", "MODE", "SHARED", "LOCKDELAY", "1000"});
  ASSERT_FALSE(delayed.is_null() || delayed.is_error()) << delayed.debug();
  EXPECT_EQ(delayed.number("lockDelayMs"), 1000);
  auto s = c.call({"LOCK.STATUS", "v5:s"});
  EXPECT_EQ(s.get("holders")->items.size(), 2u) << s.debug();
  EXPECT_EQ(c.call({"LOCK.RELEASE", "v5:s", shared}).number("released"), 1);
}

TEST(ScaleOut, ANodeUpgradesASchemaAtVersionSevenAndKeepsItsSessionHolds) {
  const std::string url = fresh_store_url(postgres_url());
  ServerProcess older({"--store", url, "--session-grace-ms", "1500"});
  auto holder = older.client();
  auto kept = holder.call({"LOCK.TRY", "v7:s", "TTL", "600000", "SESSION"});
  ASSERT_FALSE(kept.is_null() || kept.is_error()) << kept.debug();
  back_to_version_7(url);  // the database as a version-7 node leaves it, its session hold in it
  ServerProcess node({"--store", url, "--session-grace-ms", "1500"});
  EXPECT_EQ(sql_value(url, "SELECT max(version) FROM holdfast_schema_versions"), "10");
  // The node that was there heartbeats on (its heartbeat now keeps its contact too): its
  // session hold is not freed by the new node's sweeps.
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_TRUE(node.client().call({"LOCK.TRY", "v7:s", "TTL", "1000"}).is_null());
  EXPECT_EQ(holder.call({"LOCK.STATUS", "v7:s"}).number("token"), kept.number("token"));
}

TEST(ScaleOut, ANodeUpgradesASchemaAtVersionEightAndKeepsItsHolds) {
  const std::string url = fresh_store_url(postgres_url());
  std::string handle;
  {
    ServerProcess first({"--store", url});
    handle = first.client().call({"LOCK.TRY", "v6:x", "TTL", "600000"}).text("handle");
  }
  back_to_version_8(url);  // a database a version-8 node left, with a live hold in it
  // The store's own schema (the URL's search_path), not every test's.
  ASSERT_EQ(sql_value(url, "SELECT to_regclass('holdfast_values') IS NULL"), "t");
  ServerProcess node({"--store", url});
  EXPECT_EQ(sql_value(url, "SELECT max(version) FROM holdfast_schema_versions"), "10");
  auto c = node.client();
  // The hold of before is still the key's, and a typed command on it is refused as Redis would.
  auto wrong = c.call({"ZADD", "v6:x", "1", "a"});
  EXPECT_EQ(wrong.error_code(), "WRONGTYPE") << wrong.debug();
  EXPECT_EQ(c.call({"ZADD", "v6:z", "1", "a"}).integer, 1);
  EXPECT_EQ(c.call({"TYPE", "v6:z"}).str, "zset");
  EXPECT_EQ(sql_value(url, "SELECT type FROM holdfast_values WHERE key = 'v6:z'"), "2");
  EXPECT_EQ(c.call({"LOCK.RELEASE", "v6:x", handle}).number("released"), 1);
}

TEST(ScaleOut, ANodeUpgradesASchemaAtVersionNineAndKeepsItsHoldsAndValues) {
  const std::string url = fresh_store_url(postgres_url());
  std::string handle;
  {
    ServerProcess first({"--store", url});
    auto c = first.client();
    handle = c.call({"LOCK.TRY", "v9:x", "TTL", "600000"}).text("handle");
    ASSERT_EQ(c.call({"ZADD", "v9:z", "1", "a"}).integer, 1);
  }
  back_to_version_9(url);  // a database a version-9 node left, with a hold and a value in it
  ServerProcess node({"--store", url});
  EXPECT_EQ(sql_value(url, "SELECT max(version) FROM holdfast_schema_versions"), "10");
  auto c = node.client();
  EXPECT_EQ(c.call({"LOCK.TRY", "v9:z", "TTL", "1000"}).error_code(), "WRONGTYPE");
  EXPECT_TRUE(c.call({"LOCK.TRY", "v9:x", "TTL", "1000"}).is_null());
  EXPECT_EQ(c.call({"LOCK.RELEASE", "v9:x", handle}).number("released"), 1);
  auto again = c.call({"LOCK.TRY", "v9:x", "TTL", "60000"});
  ASSERT_FALSE(again.is_null() || again.is_error()) << again.debug();
}

// A node of version 9 keeps running beside the upgraded ones: its statements, as it sends them,
// still obey the rules of the schema. Its first value, in a database that never had one, keeps
// locks off its key (for its grants and the new nodes'); a release it makes notifies the nodes
// waiting for the key.
TEST(ScaleOut, StatementsOfAVersionNineNodeKeepTheRulesAfterVersionTen) {
  const std::string url = fresh_store_url(postgres_url());
  ServerProcess node({"--store", url});
  auto c = node.client();
  // Version 9's grant: its INSERT ... ON CONFLICT, of a key holding a value, and of a free one.
  const auto grant = [&](const std::string& key) {
    return sql_value(
        url,
        "INSERT INTO holdfast_holds AS h (key, handle, token, held_by, owner, holder_id, "
        "acquired_at, lease_expires_at, scope, kind, node_id, session_id, lock_delay_ms) "
        "SELECT '" +
            key +
            "', 'old-handle', nextval('holdfast_tokens'), 'user:old', NULL, NULL, "
            "holdfast_now_ms(), holdfast_now_ms() + 60000, 0, 0, NULL, NULL, 0 "
            "ON CONFLICT (key) DO UPDATE SET handle = EXCLUDED.handle, token = "
            "nextval('holdfast_tokens'), held_by = EXCLUDED.held_by, lease_expires_at = "
            "EXCLUDED.lease_expires_at WHERE h.lease_expires_at + h.lock_delay_ms <= "
            "EXCLUDED.acquired_at RETURNING h.key");
  };
  const auto refused = [&](const std::string& key) {
    try {
      grant(key);
    } catch (const std::runtime_error& e) {
      return std::string(e.what()).find("WRONGTYPE") != std::string::npos;
    }
    return false;
  };
  // A free row left on the key first, so the old grant takes over a row, as it mostly does.
  ASSERT_EQ(grant("old:z"), "old:z");
  ASSERT_EQ(sql_value(url,
                      "UPDATE holdfast_holds SET lease_expires_at = 0 WHERE key = 'old:z' "
                      "RETURNING key"),
            "old:z");
  ASSERT_EQ(sql_value(url, "SELECT pg_sequence_last_value('holdfast_values_made') IS NULL"), "t")
      << "no value was ever made here";
  // Version 9's value write, the database's first value: its claim, then its INSERT.
  SqlSession old_node(url);
  old_node.value("BEGIN");
  old_node.value("SELECT holdfast_claim_key('old:z')");
  old_node.value(
      "INSERT INTO holdfast_values AS v (key, type, expires_at, data) VALUES ('old:z', 2, NULL, "
      "'\\x00') ON CONFLICT (key) DO UPDATE SET type = EXCLUDED.type, data = EXCLUDED.data");
  old_node.value("COMMIT");
  EXPECT_TRUE(refused("old:z")) << "a lock row landed on a key holding a value";
  EXPECT_EQ(c.call({"LOCK.TRY", "old:z", "TTL", "1000"}).error_code(), "WRONGTYPE");
  EXPECT_FALSE(refused("old:x"));
  EXPECT_TRUE(c.call({"LOCK.TRY", "old:x", "TTL", "1000"}).is_null());
  // Version 9's release by key and handle: holdfast_key_waited() per freed key, as before.
  SqlSession listener(url);
  listener.value("LISTEN holdfast_keys");
  listener.value(
      "INSERT INTO holdfast_waits (key, node_id, generation) SELECT 'old:x', min(id), "
      "1 FROM holdfast_nodes");
  EXPECT_EQ(sql_value(url,
                      "WITH freed AS (UPDATE holdfast_holds h SET lease_expires_at = "
                      "holdfast_now_ms(), handle = NULL WHERE h.key = 'old:x' AND h.handle = "
                      "'old-handle' RETURNING h.key) SELECT freed.key || ':' || "
                      "holdfast_key_waited(freed.key), CASE WHEN holdfast_key_waited(freed.key) "
                      "THEN pg_notify('holdfast_keys', freed.key) END FROM freed"),
            "old:x:true");
  const auto payload = listener.next_notification(kEventuallyMs);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(*payload, "old:x");
  auto mine = c.call({"LOCK.TRY", "old:x", "TTL", "60000"});
  ASSERT_FALSE(mine.is_null() || mine.is_error()) << mine.debug();
}

TEST_F(ThreeNodes, SigtermAnswersABlockedAcquireWithUnavailableBeforeItCloses) {
  auto holder = client(0);
  ASSERT_FALSE(holder.call({"LOCK.TRY", "stop:1", "TTL", "60000"}).is_null());
  auto waiter = client(1);
  waiter.send({"LOCK.ACQUIRE", "stop:1", "TTL", "1000", "TIMEOUT", "60000"});
  auto watcher = client(1);
  ASSERT_TRUE(await_waiters(watcher, "stop:1", 1));
  EXPECT_EQ(cluster.node(1).stop(), 0);
  // Answered, not cut off: a node that left the waiter waiting would close its connection at
  // the drain deadline without a reply.
  EXPECT_EQ(waiter.read().error_code(), "UNAVAILABLE");
  EXPECT_TRUE(waiter.wait_closed());
}

}  // namespace
}  // namespace holdfast::testing
