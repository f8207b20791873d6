// On a node over PostgreSQL a MULTI/EXEC transaction is one database transaction: another
// node sees all of its grants or none of them, never a part.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "cluster.h"

namespace holdfast::testing {
namespace {

TEST(ScaleOutTransactions, AnotherNodeSeesAllOfATransactionOrNothing) {
  Cluster cluster(2);
  constexpr int kKeys = 200;
  std::vector<std::string> exists = {"EXISTS"};
  for (int i = 0; i < kKeys; ++i) exists.push_back("tx:" + std::to_string(i));
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  // Node 2 lists the held keys over and over (one page: one statement, one snapshot) while
  // node 1 takes them in one transaction.
  auto watcher = std::async(std::launch::async, [&] {
    auto c = cluster.node(1).client();
    std::vector<std::int64_t> partial;
    while (!done.load()) {
      auto page = c.call({"LOCK.LIST", "MATCH", "tx:*", "COUNT", "1000"});
      const auto n = static_cast<std::int64_t>(page.items.at(1).items.size());
      reads.fetch_add(1);
      if (n != 0 && n != kKeys) partial.push_back(n);
    }
    return partial;
  });
  // The watcher reads before the transaction begins (on a busy machine its thread may start
  // late), so its reads overlap the transaction rather than trail it.
  while (reads.load() == 0 &&
         watcher.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
  }
  auto c = cluster.node(0).client();
  ASSERT_EQ(c.call({"MULTI"}).str, "OK");
  for (int i = 0; i < kKeys; ++i)
    c.call({"SET", exists[static_cast<std::size_t>(i) + 1], "v", "NX", "PX", "60000"});
  auto exec = c.call({"EXEC"});
  done = true;
  const std::vector<std::int64_t> partial = watcher.get();
  ASSERT_EQ(exec.items.size(), static_cast<std::size_t>(kKeys)) << exec.debug();
  for (const auto& reply : exec.items) EXPECT_EQ(reply.str, "OK");
  EXPECT_EQ(c.call(exists).integer, kKeys);
  EXPECT_TRUE(partial.empty()) << "node 2 saw " << partial.front() << " of " << kKeys
                               << " keys held";
}

}  // namespace
}  // namespace holdfast::testing
