// Server URL parsing: every accepted form, credentials, and the refusals.
#include <gtest/gtest.h>

#include "client/url.h"
#include "holdfast/errors.h"

namespace holdfast::client_internal {
namespace {

TEST(ServerUrl, HoldfastSchemeWithHostAndPort) {
  auto a = parse_server_url("holdfast://db1.example:7500");
  EXPECT_EQ(a.kind, ServerAddress::Kind::kTcp);
  EXPECT_EQ(a.host, "db1.example");
  EXPECT_EQ(a.port, 7500);
  EXPECT_EQ(a.token, "");
  EXPECT_EQ(a.display(), "db1.example:7500");
}

TEST(ServerUrl, PortDefaultsTo7420) {
  EXPECT_EQ(parse_server_url("holdfast://localhost").port, 7420);
  EXPECT_EQ(parse_server_url("localhost").port, 7420);
  EXPECT_EQ(parse_server_url("holdfast://localhost/").port, 7420);
}

TEST(ServerUrl, PlainHostPortIsTcp) {
  auto a = parse_server_url("127.0.0.1:9000");
  EXPECT_EQ(a.kind, ServerAddress::Kind::kTcp);
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9000);
}

TEST(ServerUrl, TokenWithoutUserAndPercentDecoding) {
  auto a = parse_server_url("holdfast://:s3cr%40t%2Fx@127.0.0.1:7420");
  EXPECT_EQ(a.user, "");
  EXPECT_EQ(a.token, "s3cr@t/x");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.display().find("s3cr"), std::string::npos) << "display() must never show the token";
}

TEST(ServerUrl, UserAndToken) {
  auto a = parse_server_url("holdfast://alice:tok@h:1");
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.token, "tok");
}

TEST(ServerUrl, Ipv6InBrackets) {
  auto a = parse_server_url("holdfast://[::1]:7421");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 7421);
  EXPECT_EQ(a.display(), "[::1]:7421");
}

TEST(ServerUrl, UnixSocketForms) {
  auto a = parse_server_url("unix:///run/holdfast.sock");
  EXPECT_EQ(a.kind, ServerAddress::Kind::kUnix);
  EXPECT_EQ(a.path, "/run/holdfast.sock");
  EXPECT_EQ(a.display(), "unix:/run/holdfast.sock");
  EXPECT_EQ(parse_server_url("/tmp/h.sock").path, "/tmp/h.sock");
  auto t = parse_server_url("unix://:tok@/tmp/h.sock");
  EXPECT_EQ(t.token, "tok");
  EXPECT_EQ(t.path, "/tmp/h.sock");
}

TEST(ServerUrl, RedissIsTcpOverTls) {
  auto a = parse_server_url("rediss://:s3cret@db1.example:7500");
  EXPECT_EQ(a.kind, ServerAddress::Kind::kTcp);
  EXPECT_TRUE(a.tls);
  EXPECT_EQ(a.host, "db1.example");
  EXPECT_EQ(a.port, 7500);
  EXPECT_EQ(a.token, "s3cret");
  EXPECT_EQ(parse_server_url("rediss://localhost").port, 7420);
  EXPECT_FALSE(parse_server_url("holdfast://localhost").tls);
  EXPECT_FALSE(parse_server_url("localhost:7420").tls);
  // A node list over TLS: every node is.
  auto nodes = parse_server_urls("rediss://alice:t@h1:7420,h2:7421");
  ASSERT_EQ(nodes.size(), 2u);
  for (const auto& n : nodes) {
    EXPECT_TRUE(n.tls);
    EXPECT_EQ(n.user, "alice");
  }
  EXPECT_EQ(nodes[1].port, 7421);
  EXPECT_THROW(parse_server_url("rediss://host:7420/db"), InvalidArgumentError);
}

TEST(ServerUrl, MalformedUrlsAreInvalidArgument) {
  for (const char* bad : {"", "holdfast://", "holdfast://h:0", "holdfast://h:70000",
                          "holdfast://h:x", "h:", "::1:7420", "unix://relative.sock", "redis://h:1",
                          "holdfast://h:1/path", "holdfast://[::1", "holdfast://:bad%zz@h:1"}) {
    EXPECT_THROW(parse_server_url(bad), InvalidArgumentError) << bad;
  }
}

}  // namespace
}  // namespace holdfast::client_internal
