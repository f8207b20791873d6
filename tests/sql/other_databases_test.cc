// SQLite (a no-op that still runs fn), other databases (UnsupportedDatabase), and the
// result-passing of the with_advisory_lock templates, none of which needs a server.
#include <gtest/gtest.h>

#include <latch>
#include <memory>
#include <string>
#include <thread>

#include "holdfast/errors.h"
#include "holdfast/sql/advisory_lock.h"

namespace holdfast::sql {
namespace {

// Any non-null pointer will do: the SQLite overload never touches the connection.
sqlite3* fake_sqlite() { return reinterpret_cast<sqlite3*>(alignof(std::max_align_t)); }

TEST(Sqlite, RunsFnAndReturnsItsResult) {
  EXPECT_EQ(with_advisory_lock(fake_sqlite(), "job", [] { return 41 + 1; }), 42);
  bool ran = false;
  with_advisory_lock(fake_sqlite(), "job", [&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(Sqlite, IsANoOpSoTwoCallersRunFnAtTheSameTime) {
  // Both threads must be inside fn at once to get past the latch; with any lock this would
  // deadlock instead.
  std::latch both_inside(2);
  auto fn = [&] { both_inside.arrive_and_wait(); };
  std::thread other([&] { with_advisory_lock(fake_sqlite(), "job", fn); });
  with_advisory_lock(fake_sqlite(), "job", fn);
  other.join();
}

TEST(Sqlite, TransactionModeIsUnsupportedAndFnDoesNotRun) {
  bool ran = false;
  try {
    with_advisory_lock(fake_sqlite(), "job", [&] { ran = true; }, {.transaction = true});
    FAIL() << "no exception";
  } catch (const UnsupportedDatabase& e) {
    EXPECT_EQ(e.database(), "SQLite");
    EXPECT_EQ(e.code(), "UNSUPPORTED_DATABASE");
  }
  EXPECT_FALSE(ran);
}

TEST(Sqlite, StillChecksItsArguments) {
  EXPECT_THROW(with_advisory_lock(fake_sqlite(), "", [] {}), InvalidArgumentError);
}

TEST(OtherDatabase, ThrowsUnsupportedDatabaseNamingTheProductWithoutRunningFn) {
  bool ran = false;
  const DatabaseHandle db = OtherDatabase{"SQL Server"};
  try {
    with_advisory_lock(db, "job", [&] { ran = true; });
    FAIL() << "no exception";
  } catch (const UnsupportedDatabase& e) {
    EXPECT_EQ(e.database(), "SQL Server");
    EXPECT_NE(std::string(e.what()).find("SQL Server"), std::string::npos);
  }
  EXPECT_FALSE(ran);
}

TEST(DatabaseHandle, DispatchesToTheSqliteNoOp) {
  const DatabaseHandle db = fake_sqlite();
  EXPECT_EQ(with_advisory_lock(db, "job", [] { return std::string("done"); }), "done");
}

TEST(WithAdvisoryLock, PassesReferencesAndMoveOnlyResultsThrough) {
  int target = 1;
  int& same = with_advisory_lock(fake_sqlite(), "job", [&]() -> int& { return target; });
  EXPECT_EQ(&same, &target);
  auto owned = with_advisory_lock(fake_sqlite(), "job", [] { return std::make_unique<int>(7); });
  EXPECT_EQ(*owned, 7);
}

TEST(WithAdvisoryLock, FnExceptionsPropagateUnchanged) {
  EXPECT_THROW(with_advisory_lock(fake_sqlite(), "job", [] { throw std::out_of_range("x"); }),
               std::out_of_range);
}

}  // namespace
}  // namespace holdfast::sql
