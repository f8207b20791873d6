// with_advisory_lock on a real PostgreSQL 15 (started by SqlServersEnvironment): exclusion
// across threads and processes, timeouts enforced by the server, the two levels, transaction
// mode, release verification, and operator visibility through pg_locks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <stdexcept>
#include <thread>

#include "exclusion_scenario.h"
#include "holdfast/errors.h"
#include "holdfast/sql/advisory_lock.h"
#include "local_lock.h"
#include "sql_servers.h"

namespace holdfast::sql {
namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;
using testing::connect_postgres;
using testing::pg_value;
using testing::SqlServers;

const auto* const kServers =
    ::testing::AddGlobalTestEnvironment(new testing::SqlServersEnvironment(true, false));

std::string this_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string("pg-") + info->test_suite_name() + "." + info->name();
}

std::string key_of(std::string_view name) { return std::to_string(advisory_key(name)); }

// Whether another session could take the lock right now (and leaves it free again).
bool free_at_database(PGconn* observer, std::string_view name) {
  if (pg_value(observer, "SELECT pg_try_advisory_lock(" + key_of(name) + ")") != "t") return false;
  pg_value(observer, "SELECT pg_advisory_unlock(" + key_of(name) + ")");
  return true;
}

struct LockRow {
  int pid;
  bool granted;
};

// The documented operator query, run with the name.
std::vector<LockRow> sessions_on(PGconn* observer, const std::string& name) {
  const std::string query(kPgLocksByNameQuery);
  const char* params[] = {name.c_str()};
  PGresult* r = PQexecParams(observer, query.c_str(), 1, nullptr, params, nullptr, nullptr, 0);
  EXPECT_EQ(PQresultStatus(r), PGRES_TUPLES_OK) << PQresultErrorMessage(r);
  std::vector<LockRow> rows;
  for (int i = 0; i < PQntuples(r); ++i) {
    rows.push_back({std::stoi(PQgetvalue(r, i, 0)), std::string(PQgetvalue(r, i, 1)) == "t"});
  }
  PQclear(r);
  return rows;
}

class PostgresLock : public ::testing::Test {
 protected:
  PgConnection conn_ = connect_postgres(SqlServers::postgres_url());
  PgConnection observer_ = connect_postgres(SqlServers::postgres_url());
  const std::string name_ = this_test_name();
};

// ---- results and the plain path --------------------------------------------------------------

TEST_F(PostgresLock, ReturnsFnsResultAndLeavesTheLockFree) {
  const int answer = with_advisory_lock(conn_, name_, [&] {
    EXPECT_FALSE(free_at_database(observer_.get(), name_));
    return 42;
  });
  EXPECT_EQ(answer, 42);
  EXPECT_TRUE(free_at_database(observer_.get(), name_));
  EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_IDLE);
}

TEST_F(PostgresLock, WorksWithARawPGconnAndADatabaseHandle) {
  bool ran = false;
  with_advisory_lock(conn_.get(), name_, [&] { ran = true; });
  EXPECT_TRUE(ran);
  const DatabaseHandle handle = conn_.get();
  EXPECT_EQ(with_advisory_lock(handle, name_, [] { return std::string("ok"); }), "ok");
}

TEST_F(PostgresLock, FnThatThrowsStillReleases) {
  EXPECT_THROW(with_advisory_lock(conn_, name_, [] { throw std::runtime_error("boom"); }),
               std::runtime_error);
  EXPECT_TRUE(free_at_database(observer_.get(), name_));
}

TEST_F(PostgresLock, CallersLockTimeoutSettingIsUntouched) {
  pg_value(conn_.get(), "SET lock_timeout = '7s'");
  with_advisory_lock(conn_, name_,
                     [&] { EXPECT_EQ(pg_value(conn_.get(), "SHOW lock_timeout"), "7s"); },
                     {.timeout = 2s});
  with_advisory_lock(conn_, name_,
                     [&] {
                       EXPECT_EQ(pg_value(conn_.get(), "SHOW lock_timeout"),
                                 "7s");  // fn's statements see it too
                     },
                     {.timeout = 2s, .transaction = true});
  EXPECT_EQ(pg_value(conn_.get(), "SHOW lock_timeout"), "7s");
}

TEST_F(PostgresLock, NormalPathSendsTheClientNoWarningsInEitherMode) {
  int notices = 0;
  PQsetNoticeReceiver(
      conn_.get(), [](void* count, const PGresult*) { ++*static_cast<int*>(count); }, &notices);
  with_advisory_lock(conn_, name_, [] {});
  with_advisory_lock(conn_, name_, [] {}, {.transaction = true});
  EXPECT_THROW(with_advisory_lock(conn_, name_, [] { throw std::runtime_error("x"); },
                                  {.transaction = true}),
               std::runtime_error);
  EXPECT_EQ(notices, 0);
}

TEST_F(PostgresLock, RefusesAConnectionInsideATransaction) {
  pg_value(conn_.get(), "BEGIN");
  bool ran = false;
  EXPECT_THROW(with_advisory_lock(conn_, name_, [&] { ran = true; }), InvalidArgumentError);
  EXPECT_FALSE(ran);
  pg_value(conn_.get(), "ROLLBACK");
}

TEST_F(PostgresLock, NestedCallForTheSameNameThrowsAtOnce) {
  const auto start = steady_clock::now();
  with_advisory_lock(conn_, name_, [&] {
    EXPECT_THROW(with_advisory_lock(observer_, name_, [] {}), InvalidArgumentError);
  });
  // At once rather than at the database, where it would wait for the outer call forever (a
  // bound that only a hang reaches, also on a machine busy with other builds).
  EXPECT_LT(steady_clock::now() - start, 30s);
}

TEST(PostgresConnection, UnreachableServerThrowsConnectionError) {
  EXPECT_THROW(PgConnection("postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=2"),
               ConnectionError);
}

// ---- mutual exclusion ------------------------------------------------------------------------

TEST(PostgresExclusion, ThreadsAndProcessesNeverOverlapAndTheCounterIsExact) {
  testing::Workload w;
  w.database = testing::Database::kPostgres;
  w.postgres_url = SqlServers::postgres_url();
  w.lock_name = this_test_name();
  w.iterations = 25;
  w.counter = testing::CounterKind::kFile;
  const int threads = 4, processes = 3;
  const auto result = testing::run_threads_and_processes(w, threads, processes);
  ASSERT_TRUE(result.failures.empty()) << result.failures.front();
  EXPECT_EQ(result.counter, (threads + processes) * w.iterations);
  ASSERT_EQ(result.intervals.size(),
            static_cast<std::size_t>((threads + processes) * w.iterations));
  EXPECT_FALSE(testing::find_overlap(result.intervals).has_value());
}

TEST(PostgresExclusion, TransactionModeCommitsEveryIncrementUnderTheLock) {
  testing::Workload w;
  w.database = testing::Database::kPostgres;
  w.postgres_url = SqlServers::postgres_url();
  w.lock_name = this_test_name();
  w.iterations = 20;
  w.transaction = true;
  w.counter = testing::CounterKind::kTable;
  const int threads = 3, processes = 2;
  const auto result = testing::run_threads_and_processes(w, threads, processes);
  ASSERT_TRUE(result.failures.empty()) << result.failures.front();
  EXPECT_EQ(result.counter, (threads + processes) * w.iterations);
  EXPECT_FALSE(testing::find_overlap(result.intervals).has_value());
}

// ---- timeouts --------------------------------------------------------------------------------

TEST_F(PostgresLock, WaiterBehindAnotherSessionTimesOutAfterTheTimeoutNotBefore) {
  pg_value(observer_.get(), "SELECT pg_advisory_lock(" + key_of(name_) + ")");  // another "process"
  bool ran = false;
  const auto start = steady_clock::now();
  try {
    with_advisory_lock(conn_, name_, [&] { ran = true; }, {.timeout = 1500ms});
    FAIL() << "no timeout";
  } catch (const LockTimeoutError& e) {
    const auto waited = steady_clock::now() - start;
    EXPECT_GE(waited, 1500ms);
    EXPECT_LT(waited, 30s);  // it gives up: the other session never lets go meanwhile
    EXPECT_EQ(e.key(), name_);
    EXPECT_EQ(e.timeout(), 1500ms);
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_IDLE);  // the implicit transaction ended
  EXPECT_EQ(pg_value(conn_.get(), "SHOW lock_timeout"), "0");
  // The waiter holds nothing: once the other session lets go, the lock is free.
  pg_value(observer_.get(), "SELECT pg_advisory_unlock(" + key_of(name_) + ")");
  PgConnection third = connect_postgres(SqlServers::postgres_url());
  EXPECT_TRUE(free_at_database(third.get(), name_));
}

TEST_F(PostgresLock, TransactionModeTimeoutRollsBackAndLeavesTheConnectionIdle) {
  pg_value(observer_.get(), "SELECT pg_advisory_lock(" + key_of(name_) + ")");
  EXPECT_THROW(with_advisory_lock(conn_, name_, [] {}, {.timeout = 1000ms, .transaction = true}),
               LockTimeoutError);
  EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_IDLE);
  pg_value(observer_.get(), "SELECT pg_advisory_unlock(" + key_of(name_) + ")");
}

TEST_F(PostgresLock, ZeroTimeoutStillGivesTheDatabaseOneSecond) {
  pg_value(observer_.get(), "SELECT pg_advisory_lock(" + key_of(name_) + ")");
  const auto start = steady_clock::now();
  EXPECT_THROW(with_advisory_lock(conn_, name_, [] {}, {.timeout = 0ms}), LockTimeoutError);
  EXPECT_GE(steady_clock::now() - start, 1000ms);
  pg_value(observer_.get(), "SELECT pg_advisory_unlock(" + key_of(name_) + ")");
}

// ---- the two levels ------------------------------------------------------------------------

TEST_F(PostgresLock, SecondCallerInThisProcessQueuesLocallyNotAtTheDatabase) {
  std::latch holder_inside(1), let_holder_go(1);
  std::thread holder([&] {
    with_advisory_lock(conn_, name_, [&] {
      holder_inside.count_down();
      let_holder_go.wait();
    });
  });
  holder_inside.wait();

  PgConnection waiter_conn = connect_postgres(SqlServers::postgres_url());
  const int waiter_pid = PQbackendPID(waiter_conn.get());
  std::atomic<int> pid_seen_inside{0};
  std::thread waiter([&] {
    with_advisory_lock(waiter_conn, name_, [&] {
      const auto rows = sessions_on(observer_.get(), name_);
      if (rows.size() == 1 && rows[0].granted) pid_seen_inside = rows[0].pid;
    });
  });
  while (LocalLockTable::process_wide().waiters(name_) != 1) std::this_thread::yield();

  // Only the holder's session is at the database: the waiter has not even asked yet.
  const auto rows = sessions_on(observer_.get(), name_);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].pid, PQbackendPID(conn_.get()));
  EXPECT_TRUE(rows[0].granted);

  let_holder_go.count_down();
  holder.join();
  waiter.join();
  EXPECT_EQ(pid_seen_inside.load(), waiter_pid);
}

TEST_F(PostgresLock, TimeSpentQueueingLocallyIsTakenFromTheDatabaseWait) {
  // Timeline: the holder keeps the name for ~3 s while the waiter (timeout 4 s) queues behind
  // it in this process; meanwhile another session queues at the database and gets the lock
  // when the holder releases. The waiter then has ~1 s left for the database and gives up at
  // ~4 s in all; with the full timeout again at the database it would take ~7 s. (Seconds, not
  // less: the gap between the two is what a machine busy with other builds may not close.)
  std::latch holder_inside(1);
  std::thread holder([&] {
    with_advisory_lock(conn_, name_, [&] {
      holder_inside.count_down();
      PQsendQuery(observer_.get(), ("SELECT pg_advisory_lock(" + key_of(name_) + ")").c_str());
      std::this_thread::sleep_for(3s);  // real time must pass for a time budget to matter
    });
  });
  holder_inside.wait();
  PgConnection waiter_conn = connect_postgres(SqlServers::postgres_url());
  const auto start = steady_clock::now();
  EXPECT_THROW(with_advisory_lock(waiter_conn, name_, [] {}, {.timeout = 4000ms}),
               LockTimeoutError);
  const auto waited = steady_clock::now() - start;
  holder.join();
  EXPECT_GE(waited, 4000ms);
  EXPECT_LT(waited, 6000ms);  // the full timeout again at the database would take 7 s
  while (PGresult* r = PQgetResult(observer_.get())) PQclear(r);  // the other session's grant
  pg_value(observer_.get(), "SELECT pg_advisory_unlock(" + key_of(name_) + ")");
}

// ---- release verification ------------------------------------------------------------------

TEST_F(PostgresLock, LockReleasedBehindTheHelpersBackThrowsReleaseFailedNamingIt) {
  try {
    with_advisory_lock(conn_, name_, [&] {
      pg_value(conn_.get(), "SELECT pg_advisory_unlock(" + key_of(name_) + ")");
    });
    FAIL() << "no exception";
  } catch (const AdvisoryLockReleaseFailed& e) {
    EXPECT_EQ(e.name(), name_);
    EXPECT_EQ(e.database(), "PostgreSQL");
    EXPECT_EQ(e.code(), "ADVISORY_LOCK_RELEASE_FAILED");
    EXPECT_NE(std::string(e.what()).find("returned f"), std::string::npos) << e.what();
  }
}

TEST_F(PostgresLock, FnsExceptionWinsOverAnUnconfirmedRelease) {
  std::optional<std::string> reported;
  AdvisoryLockOptions options;
  options.on_suppressed_release_failure = [&](const AdvisoryLockReleaseFailed& f) {
    reported = f.name();
  };
  try {
    with_advisory_lock(
        conn_, name_,
        [&] {
          pg_value(conn_.get(), "SELECT pg_advisory_unlock(" + key_of(name_) + ")");
          throw std::domain_error("fn failed");
        },
        options);
    FAIL() << "no exception";
  } catch (const std::domain_error& e) {
    EXPECT_STREQ(e.what(), "fn failed");
  }
  EXPECT_EQ(reported, name_);
}

TEST_F(PostgresLock, LostConnectionIsReportedAndTheServerFreesTheLock) {
  const int pid = PQbackendPID(conn_.get());
  try {
    with_advisory_lock(conn_, name_, [&] {
      // Waits until the backend has exited (PostgreSQL 14+ timeout argument).
      ASSERT_EQ(pg_value(observer_.get(),
                         "SELECT pg_terminate_backend(" + std::to_string(pid) + ", 5000)"),
                "t");
    });
    FAIL() << "no exception";
  } catch (const AdvisoryLockReleaseFailed& e) {
    EXPECT_EQ(e.name(), name_);
    EXPECT_NE(std::string(e.what()).find("connection was lost"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(free_at_database(observer_.get(), name_));
}

TEST_F(PostgresLock, FailedTransactionLeftOpenByFnIsRolledBackSoTheLockIsReleased) {
  with_advisory_lock(conn_, name_, [&] {
    pg_value(conn_.get(), "BEGIN");
    EXPECT_THROW(pg_value(conn_.get(), "SELECT 1/0"), std::runtime_error);  // fn swallows it
  });
  EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_IDLE);
  EXPECT_TRUE(free_at_database(observer_.get(), name_));
}

// ---- transaction mode ------------------------------------------------------------------------

class PostgresTransaction : public PostgresLock {
 protected:
  void SetUp() override {
    pg_value(conn_.get(), "CREATE TABLE IF NOT EXISTS tx_rows (name text, n int)");
    pg_value(conn_.get(), "DELETE FROM tx_rows WHERE name = '" + name_ + "'");
  }
  std::string count_rows() {
    return pg_value(observer_.get(), "SELECT count(*) FROM tx_rows WHERE name = '" + name_ + "'")
        .value();
  }
  const AdvisoryLockOptions tx_ = {.timeout = 5s, .transaction = true};
};

TEST_F(PostgresTransaction, FnsWritesCommitTogetherWithTheLock) {
  with_advisory_lock(
      conn_, name_,
      [&] {
        pg_value(conn_.get(), "INSERT INTO tx_rows VALUES ('" + name_ + "', 1)");
        EXPECT_EQ(count_rows(), "0");  // not committed yet
        const auto rows = sessions_on(observer_.get(), name_);
        ASSERT_EQ(rows.size(), 1u);
        EXPECT_EQ(rows[0].pid, PQbackendPID(conn_.get()));
        EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_INTRANS);
      },
      tx_);
  EXPECT_EQ(count_rows(), "1");
  EXPECT_TRUE(free_at_database(observer_.get(), name_));
  EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_IDLE);
}

TEST_F(PostgresTransaction, ThrowingFnRollsBackAndTheLockIsFreeAfterwards) {
  EXPECT_THROW(with_advisory_lock(
                   conn_, name_,
                   [&] {
                     pg_value(conn_.get(), "INSERT INTO tx_rows VALUES ('" + name_ + "', 1)");
                     throw std::runtime_error("fn failed");
                   },
                   tx_),
               std::runtime_error);
  EXPECT_EQ(count_rows(), "0");
  EXPECT_TRUE(free_at_database(observer_.get(), name_));
  EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_IDLE);
}

TEST_F(PostgresTransaction, FnEndingTheTransactionItselfIsAnUnconfirmedRelease) {
  try {
    with_advisory_lock(
        conn_, name_, [&] { pg_value(conn_.get(), "COMMIT"); }, tx_);
    FAIL() << "no exception";
  } catch (const AdvisoryLockReleaseFailed& e) {
    EXPECT_EQ(e.name(), name_);
    EXPECT_NE(std::string(e.what()).find("ended inside fn"), std::string::npos) << e.what();
  }
}

TEST_F(PostgresTransaction, FailedStatementSwallowedByFnRollsBackAndThrowsDatabaseError) {
  EXPECT_THROW(with_advisory_lock(
                   conn_, name_,
                   [&] {
                     pg_value(conn_.get(), "INSERT INTO tx_rows VALUES ('" + name_ + "', 1)");
                     EXPECT_THROW(pg_value(conn_.get(), "SELECT 1/0"), std::runtime_error);
                   },
                   tx_),
               DatabaseError);
  EXPECT_EQ(count_rows(), "0");
  EXPECT_TRUE(free_at_database(observer_.get(), name_));
}

TEST_F(PostgresTransaction, FailedCommitThrowsDatabaseErrorAndReleases) {
  pg_value(conn_.get(),
           "CREATE TABLE IF NOT EXISTS tx_parent (id int PRIMARY KEY);"
           "CREATE TABLE IF NOT EXISTS tx_child (parent int REFERENCES tx_parent(id) "
           "DEFERRABLE INITIALLY DEFERRED)");
  try {
    with_advisory_lock(
        conn_, name_,
        [&] {
          pg_value(conn_.get(), "INSERT INTO tx_child VALUES (-1)");  // checked only at COMMIT
        },
        tx_);
    FAIL() << "no exception";
  } catch (const DatabaseError& e) {
    EXPECT_EQ(e.sqlstate(), "23503");  // foreign_key_violation
  }
  EXPECT_TRUE(free_at_database(observer_.get(), name_));
  EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_IDLE);
}

// ---- what operators see ----------------------------------------------------------------------

TEST_F(PostgresLock, DocumentedQueryFindsTheHolderByName) {
  with_advisory_lock(conn_, name_, [&] {
    const auto rows = sessions_on(observer_.get(), name_);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].pid, PQbackendPID(conn_.get()));
    EXPECT_TRUE(rows[0].granted);
    EXPECT_TRUE(sessions_on(observer_.get(), name_ + "-other").empty());
  });
}

TEST_F(PostgresLock, SqlFormOfTheKeyMatchesAdvisoryKey) {
  for (const std::string name : {"job", "", "nightly-report", "\xC3\xA9t\xC3\xA9", "a'b"}) {
    const std::string sql =
        "SELECT ('x' || left(encode(sha256(convert_to($1, 'UTF8')), 'hex'), 16))::bit(64)::bigint";
    const char* params[] = {name.c_str()};
    PGresult* r =
        PQexecParams(observer_.get(), sql.c_str(), 1, nullptr, params, nullptr, nullptr, 0);
    ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK) << PQresultErrorMessage(r);
    EXPECT_EQ(std::string(PQgetvalue(r, 0, 0)), key_of(name)) << name;
    PQclear(r);
  }
}

TEST_F(PostgresLock, NegativeKeysAreFoundByTheDocumentedQueryToo) {
  // SHA-256("") starts with a set high bit, so its key is negative and classid >= 2^31.
  ASSERT_LT(advisory_key(""), 0);
  pg_value(conn_.get(), "SELECT pg_advisory_lock(" + key_of("") + ")");
  const auto rows = sessions_on(observer_.get(), "");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].pid, PQbackendPID(conn_.get()));
  pg_value(conn_.get(), "SELECT pg_advisory_unlock(" + key_of("") + ")");
}

}  // namespace
}  // namespace holdfast::sql
