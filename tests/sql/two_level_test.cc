// The database-independent driver (two_level.h) with a scripted fake database: the time
// budget, which level a timeout comes from, the release verification, and which exception
// wins. Real databases run the same paths in the postgres and mariadb tests.
#include "two_level.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "holdfast/errors.h"

namespace holdfast::sql {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

class FakeDatabase final : public DatabaseLock {
 public:
  std::string database() const override { return "FakeDB"; }
  std::string describe() const override { return "fake"; }
  bool acquire(milliseconds wait) override {
    ++acquires;
    last_wait = wait;
    return grant;
  }
  std::optional<std::string> finish(bool fn_succeeded) override {
    finished_after_success = fn_succeeded;
    ++finishes;
    if (on_finish) on_finish();
    if (throw_in_finish) throw std::runtime_error("finish exploded");
    return release_failure;
  }

  bool grant = true;
  std::optional<std::string> release_failure;
  bool throw_in_finish = false;
  std::function<void()> on_finish;
  int acquires = 0;
  int finishes = 0;
  milliseconds last_wait{-1};
  std::optional<bool> finished_after_success;
};

void run(LocalLockTable& table, FakeDatabase& db, std::function<void()> fn,
         AdvisoryLockOptions options = {}) {
  run_two_level(table, "job", options, db, detail::FunctionRef(fn));
}

TEST(DatabaseWaitBudget, IsTheTimeLeft) {
  const auto now = steady_clock::now();
  EXPECT_EQ(database_wait_budget(now + 7500ms, now), 7500ms);
}

TEST(DatabaseWaitBudget, IsNeverLessThanOneSecond) {
  const auto now = steady_clock::now();
  EXPECT_EQ(database_wait_budget(now + 200ms, now), 1000ms);
  EXPECT_EQ(database_wait_budget(now - 5s, now), 1000ms);
}

TEST(DatabaseWaitBudget, RoundsUpToWholeMilliseconds) {
  const auto now = steady_clock::now();
  EXPECT_EQ(database_wait_budget(now + 1500ms + std::chrono::microseconds(1), now), 1501ms);
}

TEST(TwoLevel, UncontendedCallGivesTheDatabaseTheWholeTimeout) {
  LocalLockTable table;
  FakeDatabase db;
  bool ran = false;
  const auto start = steady_clock::now();
  run(table, db, [&] { ran = true; }, {.timeout = 10s});
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(steady_clock::now() - start);
  EXPECT_TRUE(ran);
  EXPECT_LE(db.last_wait, 10000ms);
  // All of it but the moments before the database was asked (however long a busy machine
  // made those).
  EXPECT_GE(db.last_wait, 10000ms - took);
  EXPECT_EQ(db.finished_after_success, true);
}

TEST(TwoLevel, ZeroTimeoutStillWaitsOneSecondAtTheDatabase) {
  LocalLockTable table;
  FakeDatabase db;
  run(table, db, [] {}, {.timeout = 0ms});
  EXPECT_EQ(db.last_wait, 1000ms);
}

TEST(TwoLevel, DatabaseTimeoutThrowsLockTimeoutNamingTheLockAndSkipsFn) {
  LocalLockTable table;
  FakeDatabase db;
  db.grant = false;
  bool ran = false;
  try {
    run(table, db, [&] { ran = true; }, {.timeout = 1500ms});
    FAIL() << "no timeout";
  } catch (const LockTimeoutError& e) {
    EXPECT_EQ(e.key(), "job");
    EXPECT_EQ(e.timeout(), 1500ms);
    EXPECT_EQ(e.code(), "LOCK_TIMEOUT");
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(db.finishes, 0);  // nothing was held, nothing to release
}

TEST(TwoLevel, InProcessTimeoutNeverAsksTheDatabase) {
  LocalLockTable table;
  auto other_caller = table.acquire("job", steady_clock::now());
  FakeDatabase db;
  std::thread t([&] { EXPECT_THROW(run(table, db, [] {}, {.timeout = 20ms}), LockTimeoutError); });
  t.join();
  EXPECT_EQ(db.acquires, 0);
}

TEST(TwoLevel, UnconfirmedReleaseAfterFnReturnedThrowsReleaseFailedNamingTheLock) {
  LocalLockTable table;
  FakeDatabase db;
  db.release_failure = "unlock returned false";
  try {
    run(table, db, [] {});
    FAIL() << "no exception";
  } catch (const AdvisoryLockReleaseFailed& e) {
    EXPECT_EQ(e.name(), "job");
    EXPECT_EQ(e.database(), "FakeDB");
    EXPECT_EQ(e.code(), "ADVISORY_LOCK_RELEASE_FAILED");
    EXPECT_NE(std::string(e.what()).find("unlock returned false"), std::string::npos);
  }
}

TEST(TwoLevel, FnExceptionWinsAndTheReleaseFailureGoesToTheCallback) {
  LocalLockTable table;
  FakeDatabase db;
  db.release_failure = "connection lost";
  std::optional<std::string> reported;
  AdvisoryLockOptions options;
  options.on_suppressed_release_failure = [&](const AdvisoryLockReleaseFailed& f) {
    reported = f.name() + ": " + f.what();
  };
  EXPECT_THROW(run(
                   table, db, [] { throw std::logic_error("fn failed"); }, options),
               std::logic_error);
  EXPECT_EQ(db.finished_after_success, false);
  ASSERT_TRUE(reported.has_value());
  EXPECT_NE(reported->find("job: "), std::string::npos);
  EXPECT_NE(reported->find("connection lost"), std::string::npos);
}

TEST(TwoLevel, WithoutACallbackTheSuppressedFailureIsLogged) {
  LocalLockTable table;
  FakeDatabase db;
  db.release_failure = "connection lost";
  std::ostringstream captured;
  auto* old = std::clog.rdbuf(captured.rdbuf());
  EXPECT_THROW(run(table, db, [] { throw std::logic_error("fn failed"); }), std::logic_error);
  std::clog.rdbuf(old);
  EXPECT_NE(captured.str().find("'job'"), std::string::npos) << captured.str();
}

TEST(TwoLevel, AThrowingReleaseOrCallbackCannotReplaceFnsException) {
  LocalLockTable table;
  FakeDatabase db;
  db.throw_in_finish = true;
  AdvisoryLockOptions options;
  bool reported = false;
  options.on_suppressed_release_failure = [&](const AdvisoryLockReleaseFailed& f) {
    reported = std::string(f.what()).find("finish exploded") != std::string::npos;
    throw std::runtime_error("callback exploded too");
  };
  EXPECT_THROW(run(
                   table, db, [] { throw std::logic_error("fn failed"); }, options),
               std::logic_error);
  EXPECT_TRUE(reported);
}

TEST(TwoLevel, ConfirmedReleaseAfterFnThrewReportsNothing) {
  LocalLockTable table;
  FakeDatabase db;
  bool reported = false;
  AdvisoryLockOptions options;
  options.on_suppressed_release_failure = [&](const AdvisoryLockReleaseFailed&) {
    reported = true;
  };
  EXPECT_THROW(run(
                   table, db, [] { throw 42; }, options),
               int);
  EXPECT_FALSE(reported);
  EXPECT_EQ(db.finishes, 1);
}

TEST(TwoLevel, InProcessLockIsHeldUntilTheDatabaseReleaseIsDone) {
  LocalLockTable table;
  FakeDatabase db;
  bool free_during_release = true;
  db.on_finish = [&] {
    std::thread probe(
        [&] { free_during_release = table.acquire("job", steady_clock::now()).has_value(); });
    probe.join();
  };
  run(table, db, [] {});
  EXPECT_FALSE(free_during_release);
  EXPECT_TRUE(table.acquire("job", steady_clock::now()).has_value());  // and free afterwards
}

TEST(TwoLevel, RejectsEmptyNamesAndNegativeTimeouts) {
  LocalLockTable table;
  FakeDatabase db;
  auto nothing = [] {};
  EXPECT_THROW(run_two_level(table, "", {}, db, detail::FunctionRef(nothing)),
               InvalidArgumentError);
  EXPECT_THROW(run(table, db, nothing, {.timeout = -1ms}), InvalidArgumentError);
  EXPECT_EQ(db.acquires, 0);
}

}  // namespace
}  // namespace holdfast::sql
