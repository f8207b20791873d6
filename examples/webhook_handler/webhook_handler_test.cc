// Runs two replicas of the webhook_handler example at once against one server and one order
// store: no event for an order overlaps another for the same order, and no update is lost.
#include <gtest/gtest.h>

#include <fstream>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

TEST(WebhookHandlerExample, EventsForOneOrderRunOneAtATimeAcrossReplicas) {
  ServerProcess server;
  TempDir store;
  const std::vector<std::string> argv = {EXAMPLE_BIN,  "--server",  server.url(), "--store",
                                         store.path(), "--orders",  "3",          "--events",
                                         "30",         "--threads", "6"};
  Child replica_a = Child::start(argv);
  Child replica_b = Child::start(argv);
  std::string a, b;
  ASSERT_TRUE(replica_a.read_line(&a, 60000));
  ASSERT_TRUE(replica_b.read_line(&b, 60000));
  EXPECT_EQ(replica_a.wait(), 0) << a;
  EXPECT_EQ(replica_b.wait(), 0) << b;
  for (const auto& line : {a, b}) {
    EXPECT_EQ(line.rfind("applied 30 events, overlaps 0, fenced writes 0", 0), 0u) << line;
    EXPECT_NE(line.find("max requests in flight per key 1"), std::string::npos) << line;
  }
  // Every order saw every one of its events from both replicas: 2 x 10 updates, none lost.
  for (int order = 0; order < 3; ++order) {
    long count = 0;
    std::ifstream(store.path() + "/order-" + std::to_string(order)) >> count;
    EXPECT_EQ(count, 20) << "order " << order;
  }
}

}  // namespace
}  // namespace holdfast::testing
