// fenced_update on a real PostgreSQL: a write carrying an older or equal fencing token is
// refused by the database, a newer one is applied, and a missing row is told apart.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "holdfast/errors.h"
#include "holdfast/sql/advisory_lock.h"
#include "holdfast/sql/fencing.h"
#include "sql_servers.h"

namespace holdfast::sql {
namespace {

using testing::connect_postgres;
using testing::pg_value;
using testing::SqlServers;

class PostgresFencing : public ::testing::Test {
 protected:
  void SetUp() override {
    pg_value(conn_.get(),
             "DROP TABLE IF EXISTS \"Fenced Jobs\";"
             "CREATE TABLE \"Fenced Jobs\" (id text PRIMARY KEY, status text, note text, "
             "fence bigint);"
             "INSERT INTO \"Fenced Jobs\" VALUES ('job-1', 'new', 'x', NULL)");
  }
  FencedUpdate update(std::string status) const {
    return {.schema = std::nullopt,
            .table = "Fenced Jobs",
            .key_column = "id",
            .key_value = "job-1",
            .fence_column = "fence",
            .set = {{"status", std::move(status)}}};
  }
  std::string row(const char* column) {
    return pg_value(conn_.get(), std::string("SELECT coalesce(") + column +
                                     "::text, 'NULL') FROM \"Fenced Jobs\" WHERE id = 'job-1'")
        .value();
  }
  PgConnection conn_ = connect_postgres(SqlServers::postgres_url());
};

TEST_F(PostgresFencing, FirstWriteToAnUnfencedRowIsApplied) {
  const auto result = fenced_update(conn_.get(), update("running"), 5);
  EXPECT_TRUE(result.applied());
  EXPECT_EQ(result.current_fence, 5);
  EXPECT_EQ(row("status"), "running");
  EXPECT_EQ(row("fence"), "5");
}

TEST_F(PostgresFencing, StaleHoldersWriteIsRefusedAfterANewerHolderWrote) {
  ASSERT_TRUE(fenced_update(conn_.get(), update("by-5"), 5).applied());
  ASSERT_TRUE(fenced_update(conn_.get(), update("by-6"), 6).applied());
  const auto stale = fenced_update(conn_.get(), update("late-by-5"), 5);
  EXPECT_EQ(stale.outcome, FenceOutcome::kStale);
  EXPECT_EQ(stale.current_fence, 6);
  EXPECT_EQ(row("status"), "by-6");
  EXPECT_EQ(row("fence"), "6");
}

TEST_F(PostgresFencing, SameTokenTwiceIsRefusedSoAReplayCannotWriteAgain) {
  ASSERT_TRUE(fenced_update(conn_.get(), update("once"), 9).applied());
  EXPECT_EQ(fenced_update(conn_.get(), update("twice"), 9).outcome, FenceOutcome::kStale);
  EXPECT_EQ(row("status"), "once");
}

TEST_F(PostgresFencing, MissingRowIsReportedAsNoRow) {
  FencedUpdate u = update("x");
  u.key_value = "job-404";
  const auto result = fenced_update(conn_.get(), u, 1);
  EXPECT_EQ(result.outcome, FenceOutcome::kNoRow);
  EXPECT_FALSE(result.current_fence.has_value());
}

TEST_F(PostgresFencing, NullValuesAndFenceOnlyUpdatesWork) {
  FencedUpdate u = update("done");
  u.set.push_back({"note", std::nullopt});
  ASSERT_TRUE(fenced_update(conn_.get(), u, 3).applied());
  EXPECT_EQ(row("note"), "NULL");
  u.set.clear();
  ASSERT_TRUE(fenced_update(conn_.get(), u, 4).applied());
  EXPECT_EQ(row("fence"), "4");
}

TEST_F(PostgresFencing, ValuesAreParametersNotSql) {
  ASSERT_TRUE(
      fenced_update(conn_.get(), update("'); DROP TABLE \"Fenced Jobs\"; --"), 2).applied());
  EXPECT_EQ(row("status"), "'); DROP TABLE \"Fenced Jobs\"; --");
}

TEST_F(PostgresFencing, RejectsTokensBeyondBigintAndBadColumnLists) {
  EXPECT_THROW(
      fenced_update(conn_.get(), update("x"),
                    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1),
      InvalidArgumentError);
  FencedUpdate twice = update("x");
  twice.set.push_back({"status", "y"});
  EXPECT_THROW(fenced_update(conn_.get(), twice, 1), InvalidArgumentError);
  FencedUpdate sets_fence = update("x");
  sets_fence.set.push_back({"fence", "100"});
  EXPECT_THROW(fenced_update(conn_.get(), sets_fence, 1), InvalidArgumentError);
  EXPECT_EQ(row("fence"), "NULL");
}

TEST_F(PostgresFencing, UnknownColumnIsADatabaseError) {
  FencedUpdate u = update("x");
  u.set.push_back({"no_such_column", "1"});
  try {
    fenced_update(conn_.get(), u, 1);
    FAIL() << "no exception";
  } catch (const DatabaseError& e) {
    EXPECT_EQ(e.sqlstate(), "42703");  // undefined_column
  }
}

}  // namespace
}  // namespace holdfast::sql
