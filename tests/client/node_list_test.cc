// Node lists in server URLs (scale-out): every node with the shared credentials, in order.
#include <gtest/gtest.h>

#include "client/url.h"
#include "holdfast/errors.h"

namespace holdfast::client_internal {
namespace {

TEST(NodeList, EveryNodeInOrderWithDefaultPorts) {
  auto nodes = parse_server_urls("holdfast://h1:7500,h2,[::1]:7502");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].display(), "h1:7500");
  EXPECT_EQ(nodes[1].display(), "h2:7420");
  EXPECT_EQ(nodes[2].host, "::1");
  EXPECT_EQ(nodes[2].port, 7502);
}

TEST(NodeList, CredentialsBeforeTheListApplyToEveryNode) {
  auto nodes = parse_server_urls("holdfast://alice:s%2Cecret@h1:1,h2:2/");
  ASSERT_EQ(nodes.size(), 2u);
  for (const auto& n : nodes) {
    EXPECT_EQ(n.user, "alice");
    EXPECT_EQ(n.token, "s,ecret");
  }
  // A raw comma in the token is not a list separator.
  auto one = parse_server_urls("holdfast://:a,b@h1:1");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].token, "a,b");
}

TEST(NodeList, TheShorthandWithoutSchemeListsNodesToo) {
  auto nodes = parse_server_urls("10.0.0.1:7420,10.0.0.2:7420");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[1].host, "10.0.0.2");
}

TEST(NodeList, ASingleServerIsAListOfOne) {
  EXPECT_EQ(parse_server_urls("holdfast://h:1").size(), 1u);
  auto unix_socket = parse_server_urls("unix:///run/a,b.sock");
  ASSERT_EQ(unix_socket.size(), 1u);
  EXPECT_EQ(unix_socket[0].path, "/run/a,b.sock");
  EXPECT_EQ(parse_server_urls("/tmp/x,y.sock")[0].path, "/tmp/x,y.sock");
}

TEST(NodeList, EmptyEntriesAndBadPortsAreRefused) {
  for (const char* bad :
       {"holdfast://h1,,h2", "holdfast://h1,", "holdfast://,h1", "h1:0,h2", "holdfast://h1,h2/x"}) {
    EXPECT_THROW(parse_server_urls(bad), InvalidArgumentError) << bad;
  }
  // Where one server is expected, a list is refused rather than misread.
  EXPECT_THROW(parse_server_url("holdfast://h1:1,h2:2"), InvalidArgumentError);
}

}  // namespace
}  // namespace holdfast::client_internal
