// with_advisory_lock on a real MariaDB 10.11 (started by SqlServersEnvironment): exclusion
// across threads and processes, GET_LOCK timeouts, transaction mode with InnoDB's default
// REPEATABLE READ, release verification, and long names hashed to fit.
#include <gtest/gtest.h>

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
using testing::connect_mariadb;
using testing::mysql_value;
using testing::MysqlConnection;
using testing::SqlServers;

const auto* const kServers =
    ::testing::AddGlobalTestEnvironment(new testing::SqlServersEnvironment(false, true));

std::string this_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string("my-") + info->test_suite_name() + "." + info->name();
}

std::string literal(std::string_view name) { return "'" + mysql_lock_name(name) + "'"; }

class MariaDbLock : public ::testing::Test {
 protected:
  // Whether another session could take the lock right now.
  bool free_at_database(std::string_view name) {
    return mysql_value(observer_.get(), "SELECT IS_FREE_LOCK(" + literal(name) + ")") == "1";
  }
  std::string holder_of(std::string_view name) {
    return mysql_value(observer_.get(), "SELECT IS_USED_LOCK(" + literal(name) + ")")
        .value_or("NULL");
  }
  std::string id_of(MYSQL* conn) { return std::to_string(mysql_thread_id(conn)); }

  MysqlConnection conn_ = connect_mariadb(SqlServers::mariadb_port());
  MysqlConnection observer_ = connect_mariadb(SqlServers::mariadb_port());
  const std::string name_ = this_test_name();
};

TEST_F(MariaDbLock, ReturnsFnsResultHoldsTheLockDuringFnAndReleasesIt) {
  const std::string result = with_advisory_lock(conn_.get(), name_, [&] {
    EXPECT_EQ(holder_of(name_), id_of(conn_.get()));
    return std::string("done");
  });
  EXPECT_EQ(result, "done");
  EXPECT_TRUE(free_at_database(name_));
  const DatabaseHandle handle = conn_.get();
  EXPECT_EQ(with_advisory_lock(handle, name_, [] { return 7; }), 7);
}

TEST_F(MariaDbLock, FnThatThrowsStillReleases) {
  EXPECT_THROW(with_advisory_lock(conn_.get(), name_, [] { throw std::runtime_error("x"); }),
               std::runtime_error);
  EXPECT_TRUE(free_at_database(name_));
}

TEST_F(MariaDbLock, LongNamesAreHashedToALockNameOperatorsCanCompute) {
  const std::string long_name = name_ + std::string(80, 'z');
  with_advisory_lock(conn_.get(), long_name,
                     [&] { EXPECT_EQ(holder_of(long_name), id_of(conn_.get())); });
  // The documented SQL form gives the same lock name, also for non-ASCII names.
  std::string accented;
  for (int i = 0; i < 70; ++i) accented += "\xC3\xA9";
  for (const std::string& n : {long_name, accented, std::string(64, 'q')}) {
    const std::string sql =
        "SELECT IF(CHAR_LENGTH(@n) <= 64, @n, CONCAT(LEFT(@n, 31), '~', "
        "LEFT(SHA2(@n, 256), 32)))";
    mysql_value(observer_.get(), "SET @n = '" + n + "'");
    EXPECT_EQ(mysql_value(observer_.get(), sql), mysql_lock_name(n)) << n;
  }
}

TEST_F(MariaDbLock, NestedCallForTheSameNameThrowsAtOnce) {
  with_advisory_lock(conn_.get(), name_, [&] {
    EXPECT_THROW(with_advisory_lock(observer_.get(), name_, [] {}), InvalidArgumentError);
  });
}

// ---- mutual exclusion ------------------------------------------------------------------------

testing::Workload mariadb_workload() {
  testing::Workload w;
  w.database = testing::Database::kMariaDb;
  w.mariadb_port = SqlServers::mariadb_port();
  w.lock_name = this_test_name();
  return w;
}

TEST(MariaDbExclusion, ThreadsAndProcessesNeverOverlapAndTheCounterIsExact) {
  testing::Workload w = mariadb_workload();
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

TEST(MariaDbExclusion, TransactionModeUnderRepeatableReadCountsExactly) {
  // InnoDB's REPEATABLE READ snapshot must be taken after the lock is ours, else a holder reads
  // a value older than its predecessor's commit and the counter loses increments.
  testing::Workload w = mariadb_workload();
  w.iterations = 20;
  w.transaction = true;
  w.counter = testing::CounterKind::kTable;
  const int threads = 3, processes = 2;
  const auto result = testing::run_threads_and_processes(w, threads, processes);
  ASSERT_TRUE(result.failures.empty()) << result.failures.front();
  EXPECT_EQ(result.counter, (threads + processes) * w.iterations);
  EXPECT_FALSE(testing::find_overlap(result.intervals).has_value());
}

// ---- timeouts and the two levels ---------------------------------------------------------------

TEST_F(MariaDbLock, WaiterBehindAnotherSessionTimesOutAfterTheTimeoutNotBefore) {
  ASSERT_EQ(mysql_value(observer_.get(), "SELECT GET_LOCK(" + literal(name_) + ", 0)"), "1");
  bool ran = false;
  const auto start = steady_clock::now();
  try {
    with_advisory_lock(conn_.get(), name_, [&] { ran = true; }, {.timeout = 1500ms});
    FAIL() << "no timeout";
  } catch (const LockTimeoutError& e) {
    const auto waited = steady_clock::now() - start;
    EXPECT_GE(waited, 1500ms);
    EXPECT_LT(waited, 30s);  // it gives up: the other session never lets go meanwhile
    EXPECT_EQ(e.key(), name_);
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(holder_of(name_), id_of(observer_.get()));
  mysql_value(observer_.get(), "SELECT RELEASE_LOCK(" + literal(name_) + ")");
}

TEST_F(MariaDbLock, SecondCallerInThisProcessQueuesLocallyNotAtTheDatabase) {
  std::latch holder_inside(1), let_holder_go(1);
  std::thread holder([&] {
    with_advisory_lock(conn_.get(), name_, [&] {
      holder_inside.count_down();
      let_holder_go.wait();
    });
  });
  holder_inside.wait();
  MysqlConnection waiter_conn = connect_mariadb(SqlServers::mariadb_port());
  std::string seen_inside;
  std::thread waiter([&] {
    with_advisory_lock(waiter_conn.get(), name_, [&] { seen_inside = holder_of(name_); });
  });
  while (LocalLockTable::process_wide().waiters(name_) != 1) std::this_thread::yield();
  // The waiter's session is not waiting in GET_LOCK: the processlist shows no such wait.
  EXPECT_EQ(mysql_value(observer_.get(),
                        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " +
                            id_of(waiter_conn.get()) + " AND INFO LIKE '%GET_LOCK%'"),
            "0");
  let_holder_go.count_down();
  holder.join();
  waiter.join();
  EXPECT_EQ(seen_inside, id_of(waiter_conn.get()));
}

// ---- release verification ------------------------------------------------------------------

TEST_F(MariaDbLock, LockReleasedBehindTheHelpersBackThrowsReleaseFailedNamingIt) {
  try {
    with_advisory_lock(conn_.get(), name_, [&] {
      mysql_value(conn_.get(), "SELECT RELEASE_LOCK(" + literal(name_) + ")");
    });
    FAIL() << "no exception";
  } catch (const AdvisoryLockReleaseFailed& e) {
    EXPECT_EQ(e.name(), name_);
    EXPECT_EQ(e.database(), "MariaDB/MySQL");
    EXPECT_NE(std::string(e.what()).find("NULL"), std::string::npos) << e.what();
  }
}

TEST_F(MariaDbLock, LockTakenOverByAnotherSessionIsNotConfirmed) {
  try {
    with_advisory_lock(conn_.get(), name_, [&] {
      mysql_value(conn_.get(), "SELECT RELEASE_LOCK(" + literal(name_) + ")");
      mysql_value(observer_.get(), "SELECT GET_LOCK(" + literal(name_) + ", 0)");
    });
    FAIL() << "no exception";
  } catch (const AdvisoryLockReleaseFailed& e) {
    EXPECT_NE(std::string(e.what()).find("returned 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(holder_of(name_), id_of(observer_.get()));  // the helper did not touch it
  mysql_value(observer_.get(), "SELECT RELEASE_LOCK(" + literal(name_) + ")");
}

TEST_F(MariaDbLock, LostConnectionIsReportedAndTheServerFreesTheLock) {
  std::optional<std::string> reported;
  AdvisoryLockOptions options;
  options.on_suppressed_release_failure = [&](const AdvisoryLockReleaseFailed& f) {
    reported = f.what();
  };
  EXPECT_THROW(with_advisory_lock(
                   conn_.get(), name_,
                   [&] {
                     mysql_value(observer_.get(), "KILL CONNECTION " + id_of(conn_.get()));
                     mysql_value(conn_.get(),
                                 "SELECT 1");  // fails: fn sees the broken connection and throws
                   },
                   options),
               std::runtime_error);
  ASSERT_TRUE(reported.has_value());
  EXPECT_NE(reported->find("connection was lost"), std::string::npos) << *reported;
  // The server frees the lock of the dead session: another session gets it within its wait.
  EXPECT_EQ(mysql_value(observer_.get(), "SELECT GET_LOCK(" + literal(name_) + ", 5)"), "1");
  mysql_value(observer_.get(), "SELECT RELEASE_LOCK(" + literal(name_) + ")");
}

// ---- transaction mode ------------------------------------------------------------------------

class MariaDbTransaction : public MariaDbLock {
 protected:
  void SetUp() override {
    mysql_value(conn_.get(),
                "CREATE TABLE IF NOT EXISTS tx_rows (name varchar(200), n int) ENGINE=InnoDB");
    mysql_value(conn_.get(), "DELETE FROM tx_rows WHERE name = '" + name_ + "'");
  }
  std::string count_rows() {
    return mysql_value(observer_.get(), "SELECT COUNT(*) FROM tx_rows WHERE name = '" + name_ + "'")
        .value();
  }
  const AdvisoryLockOptions tx_ = {.timeout = 5s, .transaction = true};
};

TEST_F(MariaDbTransaction, FnsWritesCommitWhileTheLockIsHeld) {
  with_advisory_lock(
      conn_.get(), name_,
      [&] {
        mysql_value(conn_.get(), "INSERT INTO tx_rows VALUES ('" + name_ + "', 1)");
        EXPECT_EQ(count_rows(), "0");  // not committed yet
        EXPECT_EQ(holder_of(name_), id_of(conn_.get()));
      },
      tx_);
  EXPECT_EQ(count_rows(), "1");
  EXPECT_TRUE(free_at_database(name_));
}

TEST_F(MariaDbTransaction, ThrowingFnRollsBackAndTheLockIsFreeAfterwards) {
  EXPECT_THROW(with_advisory_lock(
                   conn_.get(), name_,
                   [&] {
                     mysql_value(conn_.get(), "INSERT INTO tx_rows VALUES ('" + name_ + "', 1)");
                     throw std::runtime_error("fn failed");
                   },
                   tx_),
               std::runtime_error);
  EXPECT_EQ(count_rows(), "0");
  EXPECT_TRUE(free_at_database(name_));
}

TEST_F(MariaDbTransaction, WritesAreRolledBackWhenTheLockWasLostBeforeCommit) {
  try {
    with_advisory_lock(
        conn_.get(), name_,
        [&] {
          mysql_value(conn_.get(), "INSERT INTO tx_rows VALUES ('" + name_ + "', 1)");
          mysql_value(conn_.get(), "SELECT RELEASE_LOCK(" + literal(name_) + ")");
        },
        tx_);
    FAIL() << "no exception";
  } catch (const AdvisoryLockReleaseFailed& e) {
    EXPECT_EQ(e.name(), name_);
    EXPECT_NE(std::string(e.what()).find("rolled back"), std::string::npos) << e.what();
  }
  EXPECT_EQ(count_rows(), "0");
}

TEST_F(MariaDbTransaction, RefusesAConnectionAlreadyInATransaction) {
  mysql_value(conn_.get(), "START TRANSACTION");
  mysql_value(conn_.get(), "INSERT INTO tx_rows VALUES ('" + name_ + "', 1)");
  EXPECT_THROW(with_advisory_lock(
                   conn_.get(), name_, [] {}, tx_),
               InvalidArgumentError);
  mysql_value(conn_.get(), "ROLLBACK");
  EXPECT_EQ(count_rows(), "0");  // the caller's transaction was not committed behind its back
}

}  // namespace
}  // namespace holdfast::sql
