// A node over a primary and its synchronous standby (support/postgres_pair.h): a commit whose
// wait for the standby is cancelled, or that does not answer within the statement deadline, is
// never acknowledged, and the node settles it from the database before it answers anything
// else; the node says whether the database replicates synchronously, and with
// --require-sync-replication refuses changes while it does not.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "support/eventually.h"
#include "support/postgres_pair.h"
#include "support/process.h"
#include "support/server_process.h"
#include "support/wall_time.h"

namespace holdfast::testing {
namespace {

// One pair for the suite; each test has a schema of its own.
class SyncReplication : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pair_ = std::make_unique<PostgresPair>(); }
  static void TearDownTestSuite() { pair_.reset(); }
  void TearDown() override {
    // Whatever a test did to the standby, it streams again for the next one.
    pair_->signal(pair_->standby(), SIGCONT);
  }

  std::string store_url() {
    static int n = 0;
    schema_ = "sync" + std::to_string(::getpid()) + "_" + std::to_string(++n);
    pair_->sql(pair_->primary(), "CREATE SCHEMA " + schema_);
    return pair_->multi_host_url() + "&options=-csearch_path%3D" + schema_;
  }
  // The pid of a backend (of `application`) waiting for the standby, running `statement_like`.
  int await_sync_wait(const std::string& application, const std::string& statement_like) {
    for (const auto until = std::chrono::steady_clock::now() + kEventually;
         std::chrono::steady_clock::now() < until;) {
      const std::string pid =
          pair_->sql(pair_->primary(),
                     "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND "
                     "application_name = '" +
                         application + "' AND query LIKE '" + statement_like + "' LIMIT 1");
      if (!pid.empty()) return std::stoi(pid);
      pause_ms(50);
    }
    return 0;
  }
  std::string held_rows(const std::string& key) {
    return pair_->sql(pair_->primary(),
                      "SELECT count(*) FROM " + schema_ + ".holdfast_holds WHERE key = '" + key +
                          "' AND lease_expires_at > " + schema_ + ".holdfast_now_ms()");
  }

  static std::unique_ptr<PostgresPair> pair_;
  std::string schema_;
};

std::unique_ptr<PostgresPair> SyncReplication::pair_;

// What makes the node's check necessary: PostgreSQL answers such a commit as a success, with a
// WARNING only, and the row is there.
TEST_F(SyncReplication, PostgreSQLReportsACancelledWaitForTheStandbyAsACommit) {
  const int primary = pair_->primary();
  pair_->sql(primary, "CREATE TABLE IF NOT EXISTS cancel_probe (x int)");
  pair_->signal(pair_->standby(), SIGSTOP);  // the standby stops acknowledging
  PGconn* conn = PQconnectdb((pair_->url(primary) + "?application_name=probe").c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  std::string warnings;
  PQsetNoticeReceiver(
      conn,
      [](void* out, const PGresult* notice) {
        *static_cast<std::string*>(out) += PQresultErrorMessage(notice);
      },
      &warnings);
  ASSERT_EQ(PQsendQuery(conn, "INSERT INTO cancel_probe VALUES (1)"), 1);
  const int pid = await_sync_wait("probe", "INSERT INTO cancel_probe%");
  ASSERT_NE(pid, 0) << "the insert never waited for the standby";
  pair_->sql(primary, "SELECT pg_cancel_backend(" + std::to_string(pid) + ")");
  PGresult* result = PQgetResult(conn);
  EXPECT_EQ(PQresultStatus(result), PGRES_COMMAND_OK) << PQresultErrorMessage(result);
  PQclear(result);
  while ((result = PQgetResult(conn)) != nullptr) PQclear(result);
  PQfinish(conn);
  pair_->signal(pair_->standby(), SIGCONT);
  EXPECT_NE(warnings.find("might not have been replicated"), std::string::npos) << warnings;
  EXPECT_EQ(pair_->sql(primary, "SELECT count(*) FROM cancel_probe"), "1");
  pair_->sql(primary, "DROP TABLE cancel_probe");
}

TEST_F(SyncReplication, ACommitCancelledWhileWaitingForTheStandbyIsNeverAcknowledged) {
  ServerProcess node({"--store", store_url(), "--statement-deadline-ms", "30000"});
  auto client = node.client();
  pair_->signal(pair_->standby(), SIGSTOP);
  client.send({"LOCK.ACQUIRE", "k", "TTL", "600000", "TIMEOUT", "0"});
  // The grant attempt is sent in a batch of group commit (src/service/postgres/pg_batch.h).
  const int pid = await_sync_wait("holdfast", "EXECUTE hf_acquire%");
  ASSERT_NE(pid, 0) << "the grant never waited for the standby";
  pair_->sql(pair_->primary(), "SELECT pg_cancel_backend(" + std::to_string(pid) + ")");
  const RespValue answer = client.read(40'000);
  EXPECT_EQ(answer.error_code(), "STORE_UNAVAILABLE") << answer.debug();
  EXPECT_NE(answer.str.find("outcome=unknown"), std::string::npos) << answer.str;
  EXPECT_NE(answer.str.find("may not have been replicated"), std::string::npos) << answer.str;
  // It did commit on the primary, as the warning says: the key is held there.
  EXPECT_EQ(held_rows("k"), "1");
  pair_->signal(pair_->standby(), SIGCONT);
  // Before it answers anything about the key again, the node settles the grant it could not
  // acknowledge: the hold nobody knows the handle of is released.
  const RespValue status = client.call({"LOCK.STATUS", "k"}, 40'000);
  ASSERT_FALSE(status.is_error()) << status.debug();
  EXPECT_EQ(status.number("held"), 0) << status.debug();
  EXPECT_EQ(held_rows("k"), "0");
  const RespValue again = client.call({"LOCK.ACQUIRE", "k", "TTL", "1000", "TIMEOUT", "0"});
  EXPECT_FALSE(again.is_error()) << again.debug();
}

TEST_F(SyncReplication, AWriteNotAnsweredWithinTheDeadlineIsNeverAcknowledged) {
  ServerProcess node({"--store", store_url(), "--statement-deadline-ms", "1000"});
  auto client = node.client();
  pair_->signal(pair_->standby(), SIGSTOP);
  const RespValue answer =
      client.call({"LOCK.ACQUIRE", "k", "TTL", "600000", "TIMEOUT", "0"}, 30'000);
  EXPECT_EQ(answer.error_code(), "STORE_UNAVAILABLE") << answer.debug();
  EXPECT_NE(answer.str.find("outcome=unknown"), std::string::npos) << answer.str;
  // The grant's commit still waits for the standby, unseen by other transactions: the node
  // cannot settle it yet, so it answers nothing about the key. (Had it settled now, finding
  // no such hold, the grant would show up once the standby answered: a hold nobody knows.)
  const RespValue meanwhile = client.call({"LOCK.STATUS", "k"}, 30'000);
  EXPECT_TRUE(meanwhile.is_error()) << meanwhile.debug();
  pair_->signal(pair_->standby(), SIGCONT);
  // Once the database answers, the node settles it first; then the key is free.
  RespValue status;
  for (const auto until = std::chrono::steady_clock::now() + kEventually;
       std::chrono::steady_clock::now() < until;) {
    status = client.call({"LOCK.STATUS", "k"}, 30'000);
    if (!status.is_error()) break;
    pause_ms(100);
  }
  ASSERT_FALSE(status.is_error()) << status.debug();
  EXPECT_EQ(status.number("held"), 0) << status.debug();
  EXPECT_EQ(held_rows("k"), "0");
}

TEST_F(SyncReplication, TheNodeSaysTheDatabaseReplicatesSynchronously) {
  ServerProcess node({"--store", store_url()});
  const std::string ready = http_get(node, "/readyz");
  EXPECT_NE(ready.find("200 OK"), std::string::npos) << ready;
  EXPECT_NE(ready.find("\"replication\":\"synchronous\""), std::string::npos) << ready;
  const std::string metrics = http_get(node, "/metrics");
  EXPECT_NE(metrics.find("\nholdfast_store_sync_replication 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("\nholdfast_store_sync_standbys 1\n"), std::string::npos);
  const RespValue info = node.client().call({"INFO", "holdfast"});
  EXPECT_NE(info.str.find("store_replication:synchronous\r\n"), std::string::npos) << info.str;
}

TEST_F(SyncReplication, ANodeThatRequiresItRefusesChangesWhileTheStandbyIsNotWaitedFor) {
  ServerProcess node({"--store", store_url(), "--require-sync-replication"});
  auto client = node.client();
  const RespValue before = client.call({"LOCK.ACQUIRE", "k", "TTL", "60000", "TIMEOUT", "0"});
  ASSERT_FALSE(before.is_error()) << before.debug();
  const int primary = pair_->primary();
  pair_->sql(primary, "ALTER SYSTEM SET synchronous_standby_names = ''");
  pair_->sql(primary, "SELECT pg_reload_conf()");
  // The node reads the replication on every sweep (5 s).
  std::string ready;
  for (const auto until = std::chrono::steady_clock::now() + kEventually;
       ready.find("503") == std::string::npos && std::chrono::steady_clock::now() < until;) {
    pause_ms(100);
    ready = http_get(node, "/readyz");
  }
  EXPECT_NE(ready.find("503"), std::string::npos) << ready;
  EXPECT_NE(ready.find("STORE_UNAVAILABLE"), std::string::npos) << ready;
  const RespValue refused = client.call({"LOCK.ACQUIRE", "other", "TTL", "1000", "TIMEOUT", "0"});
  EXPECT_EQ(refused.error_code(), "STORE_UNAVAILABLE") << refused.debug();
  EXPECT_NE(refused.str.find("requireSyncReplication"), std::string::npos) << refused.str;
  EXPECT_NE(http_get(node, "/metrics").find("\nholdfast_store_unavailable 1\n"), std::string::npos);
  // Reads go on.
  EXPECT_EQ(client.call({"LOCK.STATUS", "k"}).number("held"), 1);

  pair_->sql(primary, "ALTER SYSTEM SET synchronous_standby_names = 'hf" +
                          std::to_string(pair_->standby()) + "'");
  pair_->sql(primary, "SELECT pg_reload_conf()");
  for (const auto until = std::chrono::steady_clock::now() + kEventually;
       ready.find("200 OK") == std::string::npos && std::chrono::steady_clock::now() < until;) {
    pause_ms(100);
    ready = http_get(node, "/readyz");
  }
  EXPECT_NE(ready.find("200 OK"), std::string::npos) << ready;
  const RespValue after = client.call({"LOCK.ACQUIRE", "other", "TTL", "1000", "TIMEOUT", "0"});
  EXPECT_FALSE(after.is_error()) << after.debug();
}

}  // namespace
}  // namespace holdfast::testing
