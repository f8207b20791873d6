// Connections: reconnecting after a server restart, a call in flight failing clearly when the
// server goes away, unreachable servers and peers that are not Holdfast.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "client/fake_server.h"
#include "holdfast/client.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using namespace std::chrono_literals;
using testing::ServerProcess;

TEST(ClientConnection, ReconnectsForNewCallsAfterTheServerRestarts) {
  ServerProcess server;
  Client client(server.url());
  client.ping();
  EXPECT_EQ(client.stats().connections_opened, 1u);
  EXPECT_EQ(client.stats().idle_connections, 1u);
  server.restart();  // same port; our idle connection is now closed by the peer
  EXPECT_NO_THROW(client.status("k"));
  EXPECT_NO_THROW(client.try_acquire("k", {.ttl = 1000ms}));
  EXPECT_EQ(client.stats().connections_opened, 2u);
}

TEST(ClientConnection, ACallInFlightFailsWithConnectionErrorWhenTheServerDies) {
  ServerProcess server;
  Client client(server.url());
  auto holder = server.client();
  holder.call({"LOCK.TRY", "k", "TTL", "60000"});
  auto waiting = std::async(std::launch::async,
                            [&] { client.acquire("k", {.ttl = 1000ms, .timeout = 30000ms}); });
  auto watcher = server.client();
  ASSERT_TRUE(testing::await_waiters(watcher, "k", 1));
  server.kill9();
  try {
    waiting.get();
    FAIL() << "the acquire returned although its server died";
  } catch (const ConnectionError& e) {
    EXPECT_EQ(e.code(), "CONNECTION");
    EXPECT_NE(std::string(e.what()).find("LOCK.ACQUIRE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("may or may not"), std::string::npos) << e.what();
  }
  EXPECT_THROW(client.ping(), ConnectionError) << "server still down";
  server.start();
  EXPECT_NO_THROW(client.ping()) << "the next call reconnects";
}

TEST(ClientConnection, UnreachableServerIsConnectionError) {
  Client client("127.0.0.1:" + std::to_string(testing::free_port()), {.connect_timeout = 2000ms});
  try {
    client.status("k");
    FAIL();
  } catch (const ConnectionError& e) {
    EXPECT_EQ(e.code(), "CONNECTION");
    EXPECT_NE(std::string(e.what()).find("cannot connect"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Client("unix:///nonexistent/holdfast.sock").ping(), ConnectionError);
}

TEST(ClientConnection, AMalformedUrlIsRefusedAtConstruction) {
  EXPECT_THROW(Client("redis://localhost:6379"), InvalidArgumentError);
}

TEST(ClientConnection, APeerThatIsNotHoldfastIsAProtocolError) {
  testing::FakeServer redis("%1\r\n+server\r\n+redis\r\n");
  Client client(redis.url());
  try {
    client.ping();
    FAIL();
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.code(), "PROTOCOL");
    EXPECT_NE(std::string(e.what()).find("not a Holdfast server"), std::string::npos) << e.what();
  }
}

TEST(ClientConnection, TheHttpPortIsNamedAsSuch) {
  ServerProcess server;
  const std::string http = "127.0.0.1:" + std::to_string(server.http_port());
  Client client(http);
  try {
    client.ping();
    FAIL() << "an HTTP server answered a RESP handshake";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(std::string(e.what()), http + " answered with HTTP, not RESP");
    EXPECT_EQ(e.details().at("protocol"), "http");
  }
}

TEST(ClientConnection, APeerThatDoesNotSpeakRespIsNamedAsSuch) {
  testing::FakeServer ssh("SSH-2.0-OpenSSH_9.2\r\n");
  Client client(ssh.url());
  try {
    client.ping();
    FAIL();
  } catch (const ProtocolError& e) {
    const std::string where = "127.0.0.1:" + std::to_string(ssh.port());
    EXPECT_EQ(std::string(e.what()).rfind(where + " did not answer in RESP (", 0), 0u) << e.what();
    EXPECT_EQ(e.details().at("protocol"), "unknown");
  }
}

TEST(ClientConnection, ServerInfoSaysWhetherTokensAreChecked) {
  ServerProcess server;
  Client client(server.url(), {.token = "anything"});
  const ServerInfo info = client.server_info();
  EXPECT_EQ(info.mode, "open");
  EXPECT_FALSE(info.version.empty());
  EXPECT_EQ(client.stats().connections_opened, 1u) << "the handshake's connection, reused";
}

TEST(ClientConnection, ARefusedHandshakeIsUnauthenticatedError) {
  testing::FakeServer strict("-UNAUTHENTICATED HELLO needs AUTH <user> <token> on this server\r\n");
  Client client(strict.url());
  EXPECT_THROW(client.ping(), UnauthenticatedError);
}

TEST(ClientConnection, APeerThatNeverAnswersTimesOut) {
  testing::FakeServer silent("");
  Client client(silent.url(), {.connect_timeout = 300ms});
  auto start = std::chrono::steady_clock::now();
  try {
    client.ping();
    FAIL();
  } catch (const ConnectionError& e) {
    EXPECT_NE(std::string(e.what()).find("no reply"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, testing::kEventually) << "it hung";
}

}  // namespace
}  // namespace holdfast
