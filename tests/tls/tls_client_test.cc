// Holdfast's own clients over TLS: the C++ client with rediss:// URLs and its TLS options, and
// the CLI with --server rediss://... and --tls-ca/--tls-cert/--tls-key (locks watch too).
#include <signal.h>

#include <chrono>
#include <fstream>
#include <regex>

#include "holdfast/client.h"
#include "support/eventually.h"
#include "tls/tls_tools.h"

namespace holdfast::testing {
namespace {

using namespace std::chrono_literals;

class TlsClient : public TlsSuite {
 protected:
  ServerProcess server{tls_flags()};
  std::string url() const { return "rediss://127.0.0.1:" + std::to_string(server.port()); }

  RunResult cli(std::vector<std::string> args) {
    std::vector<std::string> argv = {HOLDFAST_BIN, "locks"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }
};

TEST_F(TlsClient, LocksAndReleasesOverTlsOnConnectionsItReuses) {
  Client client(url(), {.tls_ca = certs().ca()});
  EXPECT_EQ(client.server(), "127.0.0.1:" + std::to_string(server.port()));
  for (int i = 0; i < 3; ++i) {
    auto hold = client.try_acquire("cpp:tls", {.ttl = 30s});
    ASSERT_TRUE(hold.has_value());
    EXPECT_EQ(hold->held_by, "user:local");
    EXPECT_TRUE(client.release(*hold).released);
  }
  int ran = 0;
  client.with_lock("cpp:scope", {.ttl = 5s, .timeout = 5s}, [&](LockContext&) { ++ran; });
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(client.stats().connections_opened, 1u);
  // One TLS connection is this client's, one the metrics request's own.
  EXPECT_EQ(metric(server, "holdfast_tls_connections"), 2);
  // The host name in the URL is checked against the certificate: localhost is one of its names.
  Client by_name("rediss://localhost:" + std::to_string(server.port()), {.tls_ca = certs().ca()});
  by_name.ping();
}

TEST_F(TlsClient, RefusesAServerItDoesNotTrustOrThatIsNotSpeakingTls) {
  Client wrong_ca(url(), {.tls_ca = certs().other_ca()});
  try {
    wrong_ca.ping();
    FAIL() << "a server whose CA is not trusted was accepted";
  } catch (const ConnectionError& e) {
    EXPECT_NE(std::string(e.what()).find("certificate verify failed"), std::string::npos)
        << e.what();
  }
  // A plain client to the TLS port: the server closes it.
  Client plain("holdfast://127.0.0.1:" + std::to_string(server.port()), {.connect_timeout = 5s});
  EXPECT_THROW(plain.ping(), ConnectionError);
}

TEST_F(TlsClient, ChecksTheHostNameUnlessToldNotTo) {
  TempDir dir;
  const auto elsewhere = certs().another_server("elsewhere", "DNS:elsewhere.example");
  ServerProcess other({"--tls-cert", elsewhere.cert, "--tls-key", elsewhere.key});
  const std::string other_url = "rediss://127.0.0.1:" + std::to_string(other.port());
  Client strict(other_url, {.tls_ca = certs().ca()});
  try {
    strict.ping();
    FAIL() << "a certificate for another name was accepted";
  } catch (const ConnectionError& e) {
    EXPECT_NE(std::string(e.what()).find("IP address mismatch"), std::string::npos) << e.what();
  }
  Client lenient(other_url, {.tls_ca = certs().ca(), .tls_verify_hostname = false});
  lenient.ping();
}

TEST_F(TlsClient, OptionsThatCannotWorkAreRefusedAtOnce) {
  auto message = [](const std::function<void()>& make) -> std::string {
    try {
      make();
    } catch (const InvalidArgumentError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(message([&] { Client c(url(), {.tls_ca = "/nonexistent/ca.pem"}); }),
            "tls_ca /nonexistent/ca.pem: No such file or directory");
  EXPECT_NE(message([&] {
              Client c("holdfast://127.0.0.1:" + std::to_string(server.port()),
                       {.tls_ca = certs().ca()});
            }).find("tls_ca is set but the server URL is not rediss://"),
            std::string::npos);
  EXPECT_EQ(message([&] { Client c(url(), {.tls_cert = certs().client("a").cert}); }),
            "tls_cert needs tls_key");
  const auto a = certs().client("a"), b = certs().client("b");
  EXPECT_NE(message([&] {
              Client c(url(), {.tls_cert = a.cert, .tls_key = b.key});
            }).find("does not match the certificate"),
            std::string::npos);
}

TEST_F(TlsClient, TheCliLocksAndReleasesWithRedissAndItsTlsFlags) {
  RunResult acquired =
      cli({"acquire", "cli:tls", "--json", "--server", url(), "--tls-ca", certs().ca()});
  ASSERT_EQ(acquired.exit_code, 0) << acquired.err;
  std::smatch handle;
  ASSERT_TRUE(
      std::regex_search(acquired.out, handle, std::regex(R"re("handle":"([0-9A-Z]{26})")re")))
      << acquired.out;
  RunResult released = cli({"release", "cli:tls", "--handle", handle[1].str(), "--server", url(),
                            "--tls-ca", certs().ca()});
  EXPECT_EQ(released.exit_code, 0) << released.out << released.err;
  // The flags may come from the environment, as --server and --token may.
  RunResult status = run({HOLDFAST_BIN, "locks", "status", "cli:tls", "--json"}, "",
                         {"HOLDFAST_SERVER=" + url(), "HOLDFAST_TLS_CA=" + certs().ca()});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("\"held\":false"), std::string::npos) << status.out;
  // An untrusted server is unreachable (4); TLS flags with a plain URL are a usage error (2).
  RunResult untrusted =
      cli({"status", "cli:tls", "--server", url(), "--tls-ca", certs().other_ca()});
  EXPECT_EQ(untrusted.exit_code, 4);
  EXPECT_NE(untrusted.err.find("certificate verify failed"), std::string::npos) << untrusted.err;
  RunResult plain_url =
      cli({"status", "cli:tls", "--server", "127.0.0.1:" + std::to_string(server.port()),
           "--tls-ca", certs().ca()});
  EXPECT_EQ(plain_url.exit_code, 2);
  EXPECT_NE(plain_url.err.find("not rediss://"), std::string::npos) << plain_url.err;
}

TEST_F(TlsClient, TheCliWatchesLockEventsOverRediss) {
  Child watch = Child::start({HOLDFAST_BIN, "locks", "watch", "cli:", "--json", "--server", url(),
                              "--tls-ca", certs().ca()});
  // Its watch is on once the server counts a reader: a change after that is told.
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  const std::string metrics_url =
      "https://127.0.0.1:" + std::to_string(server.http_port()) + "/metrics";
  bool watching = false;
  while (!watching && std::chrono::steady_clock::now() < deadline)
    watching = curl({metrics_url}).out.find("holdfast_event_watchers 1") != std::string::npos;
  ASSERT_TRUE(watching);
  Client client(url(), {.tls_ca = certs().ca()});
  auto hold = client.try_acquire("cli:watched", {.ttl = 30s});
  ASSERT_TRUE(hold.has_value());
  std::string line;
  ASSERT_TRUE(watch.read_line(&line));
  EXPECT_NE(line.find("\"event\":\"acquired\""), std::string::npos) << line;
  EXPECT_NE(line.find("\"key\":\"cli:watched\""), std::string::npos) << line;
  watch.signal(SIGTERM);
  watch.wait();
}

TEST_F(TlsClient, TheCliSignsInByItsClientCertificate) {
  TestCertificates::Pair ops = certs().client("ops-bot");
  // A server that knows the certificate's name, and requires client certificates.
  TempDir dir;
  std::ofstream(dir.path() + "/credentials.toml")
      << "[[member]]\nuserId = \"ops\"\ncertCommonName = \"ops-bot\"\n";
  std::ofstream(dir.path() + "/holdfast.toml") << "[auth]\ncredentials = \"credentials.toml\"\n";
  auto flags = tls_flags("require");
  flags.insert(flags.end(), {"--config", dir.path() + "/holdfast.toml"});
  ServerProcess strict(flags);
  const std::string strict_url = "rediss://127.0.0.1:" + std::to_string(strict.port());
  RunResult r = cli({"acquire", "cli:cert", "--json", "--server", strict_url, "--tls-ca",
                     certs().ca(), "--tls-cert", ops.cert, "--tls-key", ops.key});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"heldBy\":\"user:ops\""), std::string::npos) << r.out;
  // Without the certificate the server refuses the connection: unreachable.
  RunResult without = cli({"status", "cli:cert", "--server", strict_url, "--tls-ca", certs().ca()});
  EXPECT_EQ(without.exit_code, 4) << without.err;
}

}  // namespace
}  // namespace holdfast::testing
