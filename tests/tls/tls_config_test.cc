// The certificate's life: files that do not load stop the start with one line that names the
// file and why (exit 2); SIGHUP loads the certificate again for new connections while the open
// ones keep going, and keeps the old one when the new files do not load.
#include <signal.h>

#include <filesystem>
#include <fstream>

#include "holdfast/client.h"
#include "support/eventually.h"
#include "tls/tls_tools.h"

namespace holdfast::testing {
namespace {

namespace fs = std::filesystem;

class TlsConfig : public TlsSuite {
 protected:
  // `holdfast serve` with `flags` (and free ports): its exit code and standard error.
  static RunResult serve(std::vector<std::string> flags) {
    TempDir data;
    std::vector<std::string> argv = {HOLDFAST_BIN, "serve",       "--data-dir", data.path(),
                                     "--listen",   "127.0.0.1:0", "--http",     "127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return run(argv);
  }

  // The subject of the certificate a new connection to `port` is shown.
  static std::string served_subject(int port) {
    RunResult r = s_client(port);
    const auto at = r.out.find("subject=");
    return at == std::string::npos ? "" : r.out.substr(at, r.out.find('\n', at) - at);
  }
};

TEST_F(TlsConfig, FilesThatDoNotLoadStopTheStartWithOneLineNamingThem) {
  TempDir dir;
  const std::string missing = dir.path() + "/missing.pem";
  const std::string junk = dir.path() + "/junk.pem";
  std::ofstream(junk) << "not a certificate\n";
  const auto server = certs().server();
  const auto other = certs().client("someone");
  struct Case {
    std::vector<std::string> flags;
    std::string line;
  } cases[] = {
      {{"--tls-cert", missing, "--tls-key", server.key},
       "holdfast serve: tls: cannot read --tls-cert " + missing + ": No such file or directory"},
      {{"--tls-cert", server.cert, "--tls-key", missing},
       "holdfast serve: tls: cannot read --tls-key " + missing + ": No such file or directory"},
      {{"--tls-cert", junk, "--tls-key", server.key},
       "holdfast serve: tls: --tls-cert " + junk + " has no certificate"},
      {{"--tls-cert", server.cert, "--tls-key", server.cert},
       "holdfast serve: tls: --tls-key " + server.cert +
           " has no private key (a PEM key without a pass phrase is needed)"},
      {{"--tls-cert", server.cert, "--tls-key", other.key},
       "holdfast serve: tls: the key in --tls-key " + other.key +
           " does not match the certificate in --tls-cert " + server.cert},
      {{"--tls-cert", server.cert, "--tls-key", server.key, "--tls-ca", junk},
       "holdfast serve: tls: --tls-ca " + junk + " has no certificate"},
      {{"--tls-cert", server.cert, "--tls-key", server.key, "--tls-ca", missing},
       "holdfast serve: tls: cannot read --tls-ca " + missing + ": No such file or directory"},
      {{"--tls-cert", server.cert}, "holdfast serve: --tls-cert needs --tls-key"},
      {{"--tls-cert", server.cert, "--tls-key", server.key, "--tls-client-auth", "require"},
       "holdfast serve: [tls] clientAuth (--tls-client-auth) require needs --tls-ca: the CA "
       "that client certificates must chain to"},
  };
  for (const auto& c : cases) {
    RunResult r = serve(c.flags);
    EXPECT_EQ(r.exit_code, 2) << c.line;
    EXPECT_EQ(r.err, c.line + "\n");
    EXPECT_EQ(r.out, "");  // never ready
  }
  // The file names itself as [tls] when it comes from holdfast.toml, resolved against it.
  std::ofstream(dir.path() + "/holdfast.toml")
      << "[tls]\ncert = \"missing.pem\"\nkey = \"" << server.key << "\"\n";
  RunResult from_file = serve({"--config", dir.path() + "/holdfast.toml"});
  EXPECT_EQ(from_file.exit_code, 2);
  EXPECT_EQ(from_file.err, "holdfast serve: tls: cannot read [tls] cert " + missing +
                               ": No such file or directory\n");
}

TEST_F(TlsConfig, SighupServesANewCertificateToNewConnectionsAndKeepsTheOpenOnes) {
  TempDir dir;
  const std::string cert = dir.path() + "/server.pem", key = dir.path() + "/server.key";
  fs::copy_file(certs().server().cert, cert);
  fs::copy_file(certs().server().key, key);
  ServerProcess server({"--tls-cert", cert, "--tls-key", key});
  EXPECT_NE(served_subject(server.port()).find("O = first"), std::string::npos);

  // A client whose connection stays open across the rotation.
  Client client("rediss://127.0.0.1:" + std::to_string(server.port()), {.tls_ca = certs().ca()});
  client.ping();
  ASSERT_EQ(client.stats().connections_opened, 1u);

  const auto second = certs().another_server("second");
  fs::copy_file(second.cert, cert, fs::copy_options::overwrite_existing);
  fs::copy_file(second.key, key, fs::copy_options::overwrite_existing);
  ::kill(server.pid(), SIGHUP);
  bool rotated = false;
  for (int i = 0; i < 500 && !rotated; ++i)
    rotated = served_subject(server.port()).find("O = second") != std::string::npos;
  EXPECT_TRUE(rotated);
  EXPECT_NE(served_subject(server.http_port()).find("O = second"), std::string::npos);
  // The connection opened before the signal keeps working: no new one was needed.
  auto hold = client.try_acquire("after-rotation", {.ttl = std::chrono::seconds(30)});
  ASSERT_TRUE(hold.has_value());
  EXPECT_TRUE(client.release(*hold).released);
  EXPECT_EQ(client.stats().connections_opened, 1u);

  // A key that does not match: the previous certificate stays, and the log says why.
  server.drain_output();
  fs::copy_file(certs().client("x").key, key, fs::copy_options::overwrite_existing);
  ::kill(server.pid(), SIGHUP);
  std::string log;
  for (int i = 0; i < 100 && log.find("keeping the previous TLS certificate") == std::string::npos;
       ++i)
    log += server.drain_output(100);
  EXPECT_NE(log.find("SIGHUP: keeping the previous TLS certificate: tls: the key in --tls-key " +
                     key + " does not match the certificate in --tls-cert " + cert),
            std::string::npos)
      << log;
  EXPECT_NE(served_subject(server.port()).find("O = second"), std::string::npos);
  client.ping();
}

TEST_F(TlsConfig, SighupLoadsTheCaAgainForTheClientCertificatesOfNewConnections) {
  TempDir dir;
  const std::string ca = dir.path() + "/ca.pem";
  fs::copy_file(certs().ca(), ca);
  auto flags = tls_flags("", /*with_ca=*/false);
  flags.insert(flags.end(), {"--tls-ca", ca, "--tls-client-auth", "require"});
  ServerProcess server(flags);
  const auto ours = certs().client("worker-1");
  const auto theirs = certs().stranger("worker-2");
  EXPECT_EQ(redis_cli(server.port(), {"PING"}, &ours).out, "PONG\n");
  EXPECT_NE(redis_cli(server.port(), {"PING"}, &theirs).out, "PONG\n");

  // The CA file now names the other CA: its certificates are accepted, ours no longer are.
  fs::copy_file(certs().other_ca(), ca, fs::copy_options::overwrite_existing);
  ::kill(server.pid(), SIGHUP);
  bool reloaded = false;
  for (auto until = std::chrono::steady_clock::now() + kEventually;
       !reloaded && std::chrono::steady_clock::now() < until;)
    reloaded = redis_cli(server.port(), {"PING"}, &theirs).out == "PONG\n";
  EXPECT_TRUE(reloaded);
  EXPECT_NE(redis_cli(server.port(), {"PING"}, &ours).out, "PONG\n");
}

}  // namespace
}  // namespace holdfast::testing
