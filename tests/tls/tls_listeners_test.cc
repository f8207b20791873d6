// TLS on the listeners, from the outside, with the tools people use: redis-cli --tls and curl
// lock and release; a plaintext client, a wrong CA, TLS 1.1 and bad client certificates are
// refused (openssl s_client shows the refusals) and counted; a client that never finishes its
// handshake stalls nobody; the Unix socket stays plain; the lock-event stream and the web page
// are served over HTTPS too. Every server here runs embedded, and
// again as a node over PostgreSQL (ctest tls_tests.postgres).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>

#include "support/eventually.h"
#include "support/resp_client.h"
#include "tls/tls_tools.h"

namespace holdfast::testing {
namespace {

class TlsListeners : public TlsSuite {};

TEST_F(TlsListeners, RedisCliLocksAndReleasesOverTlsAndTheUnixSocketStaysPlain) {
  ServerProcess server(tls_flags());
  RunResult granted = redis_cli(server.port(), {"LOCK.TRY", "jobs:tls", "TTL", "30000"});
  ASSERT_EQ(granted.exit_code, 0) << granted.err;
  const std::string handle = field(granted.out, "handle");
  ASSERT_EQ(handle.size(), 26u) << granted.out;
  EXPECT_EQ(field(granted.out, "heldBy"), "user:local");
  RunResult released = redis_cli(server.port(), {"LOCK.RELEASE", "jobs:tls", handle});
  EXPECT_EQ(field(released.out, "released"), "1") << released.out << released.err;

  // The Unix socket speaks plain RESP beside the TLS port.
  RunResult unix_ping = run({REDIS_CLI_BIN, "-s", server.unix_path(), "PING"});
  EXPECT_EQ(unix_ping.out, "PONG\n") << unix_ping.err;
  RunResult status = run({REDIS_CLI_BIN, "-s", server.unix_path(), "LOCK.STATUS", "jobs:tls"});
  EXPECT_EQ(field(status.out, "held"), "0") << status.out;
}

TEST_F(TlsListeners, CurlLocksAndReleasesOverHttps) {
  ServerProcess server(tls_flags());
  const std::string base = "https://127.0.0.1:" + std::to_string(server.http_port());
  RunResult granted = curl({"-X", "POST", base + "/v1/locks/try-acquire", "--data",
                            R"({"key":"reports","ttlMs":30000})"});
  ASSERT_EQ(granted.exit_code, 0) << granted.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(granted.out, m, std::regex(R"re("handle":"([0-9A-Z]{26})")re")))
      << granted.out;
  EXPECT_NE(granted.out.find("\"heldBy\":\"user:local\""), std::string::npos) << granted.out;
  RunResult released = curl({"-X", "POST", base + "/v1/locks/release", "--data",
                             R"({"key":"reports","handle":")" + m[1].str() + "\"}"});
  EXPECT_NE(released.out.find("\"released\":true"), std::string::npos) << released.out;
  EXPECT_EQ(released.out.substr(released.out.size() - 3), "200");

  // Plain HTTP to the same port is not answered.
  RunResult plain =
      run({"curl", "-sS", "http://127.0.0.1:" + std::to_string(server.http_port()) + "/healthz"});
  EXPECT_NE(plain.exit_code, 0) << plain.out;
}

TEST_F(TlsListeners, TheEventStreamAndTheWebPageOverHttps) {
  ServerProcess server(tls_flags());
  const std::string base = "https://127.0.0.1:" + std::to_string(server.http_port());
  Child stream =
      Child::start({"curl", "-sSN", "--cacert", certs().ca(), base + "/v1/events?prefix=tls:"});
  // The stream's first lines say it is on (it opens once events flow): a change after them is told.
  std::string line;
  bool on = false;
  while (!on && stream.read_line(&line)) on = line == ": holdfast lock events";
  ASSERT_TRUE(on) << "last line: " << line;
  RespClient c = RespClient::unix_socket(server.unix_path());
  ASSERT_FALSE(c.call({"LOCK.TRY", "tls:events", "TTL", "30000"}).is_null());
  bool acquired = false;
  while (!acquired && stream.read_line(&line)) acquired = line == "event: acquired";
  ASSERT_TRUE(acquired) << "last line: " << line;
  ASSERT_TRUE(stream.read_line(&line));
  EXPECT_NE(line.find("\"key\":\"tls:events\""), std::string::npos) << line;
  stream.signal(SIGTERM);
  stream.wait();

  // The page's files come over HTTPS too.
  RunResult page = curl({base + "/ui/"});
  EXPECT_NE(page.out.find("<title>Holdfast locks</title>"), std::string::npos) << page.err;
  EXPECT_EQ(page.out.substr(page.out.size() - 3), "200");
  // The stream's reader hung up (read through TLS): the server lets the watch go.
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  std::string metrics;
  do {
    metrics = curl({base + "/metrics"}).out;
  } while (metrics.find("holdfast_event_watchers 0") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_NE(metrics.find("holdfast_event_watchers 0"), std::string::npos) << metrics;
}

TEST_F(TlsListeners, PlaintextClientsGetACleanCloseAndOneDebugLineEach) {
  ServerProcess server([&] {
    auto flags = tls_flags();
    flags.insert(flags.end(), {"--log-level", "debug"});
    return flags;
  }());
  server.drain_output();  // the start-up lines
  auto resp = RespClient::tcp(server.port());
  resp.send_raw("*1\r\n$4\r\nPING\r\n");
  EXPECT_TRUE(resp.wait_closed(10000));
  RunResult http =
      run({"curl", "-sS", "http://127.0.0.1:" + std::to_string(server.http_port()) + "/healthz"});
  EXPECT_NE(http.exit_code, 0);
  EXPECT_EQ(metric(server, "holdfast_tls_handshake_failures_total{reason=\"plaintext\"}"), 2);
  // One line per connection, at debug level, naming the connection and the reason.
  const std::string log = server.drain_output(300);
  std::size_t lines = 0;
  for (std::size_t at = log.find("TLS handshake failed"); at != std::string::npos;
       at = log.find("TLS handshake failed", at + 1)) {
    ++lines;
    const std::size_t begin = log.rfind('\n', at) + 1;
    const std::string line = log.substr(begin, log.find('\n', at) - begin);
    EXPECT_NE(line.find(" debug "), std::string::npos) << line;
    EXPECT_NE(line.find("reason=plaintext"), std::string::npos) << line;
    EXPECT_NE(line.find("connection="), std::string::npos) << line;
  }
  EXPECT_EQ(lines, 2u) << log;
}

TEST_F(TlsListeners, AtTheDefaultLevelARefusedHandshakeLogsNothing) {
  ServerProcess server(tls_flags());
  server.drain_output();
  auto resp = RespClient::tcp(server.port());
  resp.send_raw("PING\r\n");
  EXPECT_TRUE(resp.wait_closed(10000));
  EXPECT_EQ(metric(server, "holdfast_tls_handshake_failures_total{reason=\"plaintext\"}"), 1);
  EXPECT_EQ(server.drain_output(300), "");
}

TEST_F(TlsListeners, AWrongCaAndTls11AreRefusedAndCounted) {
  ServerProcess server(tls_flags());
  // The client does not trust the server's CA: it refuses the handshake, the server counts it
  // (redis-cli tries twice; openssl s_client once).
  const std::string refused = "holdfast_tls_handshake_failures_total{reason=\"peer_refused\"}";
  RunResult wrong_ca = redis_cli(server.port(), {"PING"}, nullptr, "", certs().other_ca());
  EXPECT_NE(wrong_ca.out, "PONG\n");
  EXPECT_NE(wrong_ca.err.find("certificate verify failed"), std::string::npos) << wrong_ca.err;
  const double by_redis_cli = metric(server, refused);
  EXPECT_GE(by_redis_cli, 1);
  RunResult s_client_wrong_ca =
      run({"openssl", "s_client", "-connect", "127.0.0.1:" + std::to_string(server.port()),
           "-CAfile", certs().other_ca(), "-verify_return_error"});
  EXPECT_NE(s_client_wrong_ca.exit_code, 0);
  EXPECT_EQ(metric(server, refused), by_redis_cli + 1);
  // TLS 1.1, with the client's own floor lowered so that the refusal is the server's, on both
  // listeners.
  for (int port : {server.port(), server.http_port()}) {
    RunResult old = s_client(port, {"-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"});
    EXPECT_NE(old.exit_code, 0) << old.out;
    EXPECT_NE((old.out + old.err).find("alert protocol version"), std::string::npos)
        << old.out << old.err;
  }
  EXPECT_EQ(metric(server, "holdfast_tls_handshake_failures_total{reason=\"protocol_version\"}"),
            2);
  // TLS 1.2 and 1.3 are spoken, on both listeners.
  for (int port : {server.port(), server.http_port()}) {
    for (const char* version : {"-tls1_2", "-tls1_3"}) {
      RunResult ok = s_client(port, {version});
      EXPECT_EQ(ok.exit_code, 0) << version << "\n" << ok.out << ok.err;
      EXPECT_NE(ok.out.find(std::string("New, TLSv1.") + (version[6] == '2' ? "2," : "3,")),
                std::string::npos)
          << ok.out;
    }
  }
}

TEST_F(TlsListeners, RequireRefusesAMissingExpiredOrForeignClientCertificate) {
  ServerProcess server(tls_flags("require"));
  const auto good = certs().client("worker-1");
  const auto expired = certs().expired_client("worker-2");
  const auto stranger = certs().stranger("worker-3");
  EXPECT_EQ(redis_cli(server.port(), {"PING"}, &good).out, "PONG\n");
  // TLS 1.3 sends the refusal after the client's side of the handshake: redis-cli sees it at
  // its first read, so no PONG comes back either way.
  EXPECT_NE(redis_cli(server.port(), {"PING"}).out, "PONG\n");
  EXPECT_EQ(
      metric(server, "holdfast_tls_handshake_failures_total{reason=\"no_client_certificate\"}",
             &good),
      1);
  EXPECT_NE(redis_cli(server.port(), {"PING"}, &expired).out, "PONG\n");
  EXPECT_NE(redis_cli(server.port(), {"PING"}, &stranger).out, "PONG\n");
  EXPECT_EQ(
      metric(server, "holdfast_tls_handshake_failures_total{reason=\"bad_client_certificate\"}",
             &good),
      2);
  // openssl s_client shows the server's alert.
  RunResult none = s_client(server.port(), {"-tls1_2"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE((none.out + none.err).find("alert handshake failure"), std::string::npos)
      << none.out << none.err;
  // HTTPS the same: curl without a certificate is refused, with one it is served.
  const std::string health = "https://127.0.0.1:" + std::to_string(server.http_port()) + "/healthz";
  EXPECT_NE(curl({health}).exit_code, 0);
  RunResult with_cert = curl({health}, &good);
  EXPECT_EQ(with_cert.exit_code, 0) << with_cert.err;
  EXPECT_EQ(with_cert.out.substr(with_cert.out.size() - 3), "200");
}

TEST_F(TlsListeners, RequestServesClientsWithoutACertificateButNotWithABadOne) {
  ServerProcess server(tls_flags("request"));
  EXPECT_EQ(redis_cli(server.port(), {"PING"}).out, "PONG\n");
  const auto expired = certs().expired_client("late");
  const auto stranger = certs().stranger("elsewhere");
  EXPECT_NE(redis_cli(server.port(), {"PING"}, &expired).out, "PONG\n");
  EXPECT_NE(redis_cli(server.port(), {"PING"}, &stranger).out, "PONG\n");
  EXPECT_EQ(
      metric(server, "holdfast_tls_handshake_failures_total{reason=\"bad_client_certificate\"}"),
      2);
}

TEST_F(TlsListeners, AClientThatNeverFinishesItsHandshakeStallsNobodyAndIsCutOff) {
  TempDir dir;
  std::ofstream(dir.path() + "/holdfast.toml") << "[tls]\nhandshakeTimeoutMs = 300\n";
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--config", dir.path() + "/holdfast.toml"});
  ServerProcess server(flags);
  // Connected, silent: the loop serves other clients meanwhile.
  auto silent = RespClient::tcp(server.port());
  auto half = RespClient::tcp(server.port());
  half.send_raw(std::string("\x16\x03\x01\x02\x00", 5));  // a ClientHello's header, no more
  auto silent_https = RespClient::tcp(server.http_port());
  EXPECT_EQ(redis_cli(server.port(), {"PING"}).out, "PONG\n");
  EXPECT_TRUE(silent.wait_closed(30000));
  EXPECT_TRUE(half.wait_closed(30000));
  EXPECT_TRUE(silent_https.wait_closed(kEventuallyMs));
  EXPECT_EQ(metric(server, "holdfast_tls_handshake_failures_total{reason=\"timeout\"}"), 3);
  EXPECT_EQ(redis_cli(server.port(), {"PING"}).out, "PONG\n");
}

// Polls LOCK.STATUS on the plain Unix socket until `key` has `n` waiters; false after a
// generous bound (a loaded machine is slow to start curl and finish a handshake).
bool waiters_become(RespClient& plain, const std::string& key, std::int64_t n) {
  for (int i = 0; i < 3000; ++i) {
    if (plain.call({"LOCK.STATUS", key}).number("waiters") == n) return true;
    ::usleep(10'000);
  }
  return false;
}

TEST_F(TlsListeners, AnHttpsClientThatHangsUpWhileWaitingLeavesTheQueue) {
  ServerProcess server(tls_flags());
  auto plain = RespClient::unix_socket(server.unix_path());
  ASSERT_FALSE(plain.call({"LOCK.TRY", "https:wait", "TTL", "60000"}).is_null());
  Child waiting =
      Child::start({"curl", "-sS", "--cacert", certs().ca(), "-X", "POST",
                    "https://127.0.0.1:" + std::to_string(server.http_port()) + "/v1/locks/acquire",
                    "--data", R"({"key":"https:wait","ttlMs":1000,"timeoutMs":60000})"});
  ASSERT_TRUE(waiters_become(plain, "https:wait", 1));
  waiting.signal(SIGKILL);
  waiting.wait();
  // The session watched its TLS stream while the call waited: the hang-up ended it.
  EXPECT_TRUE(waiters_become(plain, "https:wait", 0));
}

TEST_F(TlsListeners, AnHttpsConnectionServesTheNextRequestAfterOneThatWaited) {
  ServerProcess server(tls_flags());
  auto plain = RespClient::unix_socket(server.unix_path());
  const RespValue hold = plain.call({"LOCK.TRY", "https:next", "TTL", "60000"});
  ASSERT_FALSE(hold.is_null());
  const std::string base = "https://127.0.0.1:" + std::to_string(server.http_port());
  // Two requests on one kept-alive connection: a blocking acquire, then a status.
  Child both =
      Child::start({"curl", "-sS", "--cacert", certs().ca(), "-w", "\nconnects=%{num_connects}\n",
                    "-X", "POST", base + "/v1/locks/acquire", "--data",
                    R"({"key":"https:next","ttlMs":30000,"timeoutMs":60000})", "--next", "--cacert",
                    certs().ca(), "-w", "\nconnects=%{num_connects}\n",
                    base + "/v1/locks/status?key=https:next"});
  ASSERT_TRUE(waiters_become(plain, "https:next", 1));
  EXPECT_EQ(plain.call({"LOCK.RELEASE", "https:next", hold.text("handle")}).number("released"), 1);
  std::string out, line;
  while (both.read_line(&line, 30000)) out += line + "\n";
  EXPECT_EQ(both.wait(), 0) << out;
  EXPECT_NE(out.find("\"handle\":{"), std::string::npos) << out;   // granted after the release
  EXPECT_NE(out.find("\"held\":true"), std::string::npos) << out;  // then the status
  EXPECT_NE(out.find("connects=1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("connects=0\n"), std::string::npos) << out;  // the same connection
}

}  // namespace
}  // namespace holdfast::testing
