// The C++ client with a node list: new calls go to a node that can be reached, and a hold made
// through one node is the cluster's, so it can be released through another.
#include <gtest/gtest.h>

#include "cluster.h"
#include "holdfast/client.h"

namespace holdfast::testing {
namespace {

std::string node_list(Cluster& cluster) {
  return "holdfast://127.0.0.1:" + std::to_string(cluster.node(0).port()) +
         ",127.0.0.1:" + std::to_string(cluster.node(1).port());
}

TEST(ClientFailover, NewCallsMoveToTheNextNodeWhenTheFirstStops) {
  Cluster cluster(2);
  Client client(node_list(cluster));
  auto hold =
      client.acquire("job", {.ttl = std::chrono::seconds(60), .timeout = std::chrono::seconds(0)});
  EXPECT_EQ(client.server(), "127.0.0.1:" + std::to_string(cluster.node(0).port()));

  ASSERT_EQ(cluster.node(0).stop(), 0);
  // The idle connection to the stopped node is dropped; the next call connects to node 2.
  auto status = client.status("job");
  ASSERT_TRUE(status.held());
  EXPECT_EQ(status.hold->token, hold.token);
  EXPECT_EQ(client.server(), "127.0.0.1:" + std::to_string(cluster.node(1).port()));
  EXPECT_TRUE(client.release(hold).released);
  EXPECT_FALSE(client.status("job").held());
}

TEST(ClientFailover, AnUnreachableFirstNodeIsSkippedFromTheStart) {
  Cluster cluster(2);
  ASSERT_EQ(cluster.node(0).stop(), 0);
  Client client(node_list(cluster));
  auto hold = client.try_acquire("k", {.ttl = std::chrono::seconds(5)});
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(client.server(), "127.0.0.1:" + std::to_string(cluster.node(1).port()));
}

TEST(ClientFailover, WhenNoNodeAnswersTheCallSaysSo) {
  Cluster cluster(2);
  const std::string url = node_list(cluster);
  ASSERT_EQ(cluster.node(0).stop(), 0);
  ASSERT_EQ(cluster.node(1).stop(), 0);
  Client client(url);
  try {
    client.ping();
    FAIL() << "ping succeeded with every node stopped";
  } catch (const ConnectionError& e) {
    EXPECT_NE(std::string(e.what()).find("no node of the cluster could be reached"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace holdfast::testing
