// On a node over PostgreSQL a MULTI/EXEC transaction is one database transaction: another
// node sees all of its grants or none of them, never a part.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>

#include "cluster.h"

namespace holdfast::testing {
namespace {

TEST(ScaleOutTransactions, AnotherNodeSeesAllOfATransactionOrNothing) {
  Cluster cluster(2);
  constexpr int kKeys = 200;
  std::vector<std::string> exists = {"EXISTS"};
  for (int i = 0; i < kKeys; ++i) exists.push_back("tx:" + std::to_string(i));
  std::atomic<bool> done{false};
  // Node 2 lists the held keys over and over (one page: one statement, one snapshot) while
  // node 1 takes them in one transaction.
  auto watcher = std::async(std::launch::async, [&] {
    auto c = cluster.node(1).client();
    std::vector<std::int64_t> partial;
    int reads = 0;
    while (!done.load()) {
      auto page = c.call({"LOCK.LIST", "MATCH", "tx:*", "COUNT", "1000"});
      const auto n = static_cast<std::int64_t>(page.items.at(1).items.size());
      ++reads;
      if (n != 0 && n != kKeys) partial.push_back(n);
    }
    return std::make_pair(reads, partial);
  });
  auto c = cluster.node(0).client();
  ASSERT_EQ(c.call({"MULTI"}).str, "OK");
  for (int i = 0; i < kKeys; ++i)
    c.call({"SET", exists[static_cast<std::size_t>(i) + 1], "v", "NX", "PX", "60000"});
  auto exec = c.call({"EXEC"});
  done = true;
  const auto [reads, partial] = watcher.get();
  ASSERT_EQ(exec.items.size(), static_cast<std::size_t>(kKeys)) << exec.debug();
  for (const auto& reply : exec.items) EXPECT_EQ(reply.str, "OK");
  EXPECT_EQ(c.call(exists).integer, kKeys);
  EXPECT_GT(reads, 0);
  EXPECT_TRUE(partial.empty()) << "node 2 saw " << partial.front() << " of " << kKeys
                               << " keys held";
}

}  // namespace
}  // namespace holdfast::testing
