// The NOTIFY that wakes waiters on other nodes, at the level of the statements the nodes run:
// a statement that frees a key notifies exactly when some node has registered waiters for it,
// including a registration that committed while the statement waited for the key's row
// (src/service/postgres/hold_rows.h explains why that case matters).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cluster.h"
#include "support/eventually.h"

namespace holdfast::testing {
namespace {

// Waits for a backend of this database to wait for a lock inside a statement of a node (on
// holdfast_holds, or a holdfast_* function such as the release's, run alone or in a batch of
// group commit as `EXECUTE hf_...`); true when one does.
bool a_statement_waits_for_a_row_lock(SqlSession& sql) {
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (std::chrono::steady_clock::now() < deadline) {
    if (sql.value("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                  " AND (query LIKE '%holdfast%' OR query LIKE 'EXECUTE hf%')"
                  " AND pid <> pg_backend_pid()") != "0")
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

TEST(ReleaseNotify, SeesARegistrationThatCommittedWhileTheReleaseWaitedForTheRow) {
  Cluster cluster(1);
  auto holder = cluster.node(0).client();
  auto hold = holder.call({"LOCK.TRY", "race:1", "TTL", "60000"});
  ASSERT_FALSE(hold.is_null()) << hold.debug();
  SqlSession listener(cluster.store_url());
  listener.value("LISTEN holdfast_keys");
  SqlSession waiter(cluster.store_url());
  const std::string node_id = waiter.value("SELECT min(id) FROM holdfast_nodes");
  ASSERT_FALSE(node_id.empty());

  // A waiter's first attempt, failing, keeps the key's row locked until it commits (INSERT ...
  // ON CONFLICT DO UPDATE locks the row even when its WHERE is false). Stand in for it.
  waiter.value("BEGIN");
  waiter.value("SELECT 1 FROM holdfast_holds WHERE key = 'race:1' FOR UPDATE");
  // The release starts now (its statement's snapshot is taken) and waits for the row.
  holder.send({"LOCK.RELEASE", "race:1", hold.text("handle")});
  SqlSession observer(cluster.store_url());
  ASSERT_TRUE(a_statement_waits_for_a_row_lock(observer));
  // The waiter's registration commits while the release waits (in the node, it commits before
  // the attempt; here only the order relative to the release's start and its row update
  // matters: after the one, before the other).
  observer.value("INSERT INTO holdfast_waits (key, node_id, generation) VALUES ('race:1', " +
                 node_id + ", 1)");
  waiter.value("COMMIT");

  EXPECT_EQ(holder.read().number("released"), 1);
  const auto payload = listener.next_notification(kEventuallyMs);
  ASSERT_TRUE(payload.has_value()) << "the release did not notify the registered waiter";
  EXPECT_EQ(*payload, "race:1");
}

TEST(ReleaseNotify, NotifiesOnlyKeysSomeNodeWaitsFor) {
  Cluster cluster(1);
  auto c = cluster.node(0).client();
  SqlSession listener(cluster.store_url());
  listener.value("LISTEN holdfast_keys");
  const std::string node_id = listener.value("SELECT min(id) FROM holdfast_nodes");
  listener.value("INSERT INTO holdfast_waits (key, node_id, generation) VALUES ('waited', " +
                 node_id + ", 1)");
  for (const std::string key : {"unwaited", "waited"}) {
    auto hold = c.call({"LOCK.TRY", key, "TTL", "60000"});
    ASSERT_FALSE(hold.is_null()) << hold.debug();
    ASSERT_EQ(c.call({"LOCK.RELEASE", key, hold.text("handle")}).number("released"), 1);
  }
  // Notifications arrive in commit order: the first one must be the waited-for key's.
  const auto payload = listener.next_notification(kEventuallyMs);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(*payload, "waited");
}

}  // namespace
}  // namespace holdfast::testing
