// Serves a real `holdfast serve` to client tests written in other languages (Python, Node.js),
// through the same test support the C++ suites use: a free port, a private data dir and Unix
// socket, and with HOLDFAST_TEST_STORE_URL set a node over PostgreSQL in a schema of its own.
//
// Usage: serve_for_clients [--auth] [--tls]
//   --auth: with credentials (tests/support/auth_config.h): members alice ("alice-secret") and
//   bob ("bob-secret"), admin root ("root-secret"), function importer ("fn-secret"); with
//   --tls also member carol, known by the client certificate "carol.example" alone.
//   --tls: the TCP listener speaks TLS only, with certificates made for the run
//   (tests/support/tls_certs.h); client certificates are requested, not required.
// Prints one line, {"port": N, "unix": "...", "store": "embedded"|"postgres"} (with --tls also
// "tls": {"ca", "cert", "key", "otherCa"}: PEM files of the CA, carol's certificate and key,
// and a CA the server does not trust), then reads
// commands on stdin, one per line:
//   restart   stop the server (SIGTERM) and start it again on the same port and data; prints
//             "restarted" once it is ready
//   kill9     kill the server with SIGKILL (no shutdown at all) and start it again the same way;
//             prints "restarted"
// and stops the server at end of input.
#include <iostream>
#include <optional>
#include <string>

#include "support/auth_config.h"
#include "support/server_process.h"
#include "support/tls_certs.h"

using holdfast::testing::AuthConfig;
using holdfast::testing::ServerProcess;
using holdfast::testing::TestCertificates;

int main(int argc, char** argv) {
  bool auth = false, tls = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--auth") {
      auth = true;
    } else if (flag == "--tls") {
      tls = true;
    } else {
      std::cerr << "serve_for_clients: unknown flag '" << flag << "'\n";
      return 2;
    }
  }
  try {
    std::optional<TestCertificates> certs;
    std::optional<TestCertificates::Pair> carol;
    if (tls) {
      certs.emplace();
      carol = certs->client("carol.example");
    }
    std::optional<AuthConfig> config;
    if (auth)
      config.emplace(600, tls ? "\n[[member]]\nuserId = \"carol\"\ncertCommonName = "
                                "\"carol.example\"\n"
                              : "");
    std::vector<std::string> flags = auth ? config->flags() : std::vector<std::string>{};
    if (tls)
      flags.insert(flags.end(), {"--tls-cert", certs->server().cert, "--tls-key",
                                 certs->server().key, "--tls-ca", certs->ca()});
    ServerProcess server(flags);
    std::cout << "{\"port\": " << server.port() << ", \"unix\": \"" << server.unix_path()
              << "\", \"store\": \"" << (server.store_url().empty() ? "embedded" : "postgres")
              << "\"";
    if (tls)
      std::cout << ", \"tls\": {\"ca\": \"" << certs->ca() << "\", \"cert\": \"" << carol->cert
                << "\", \"key\": \"" << carol->key << "\", \"otherCa\": \"" << certs->other_ca()
                << "\"}";
    std::cout << "}" << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line == "restart") {
        server.restart();
        std::cout << "restarted" << std::endl;
      } else if (line == "kill9") {
        server.kill9();
        server.start();
        std::cout << "restarted" << std::endl;
      } else if (!line.empty()) {
        std::cerr << "serve_for_clients: unknown command '" << line << "'\n";
        return 2;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "serve_for_clients: " << e.what() << "\n";
    return 1;
  }
}
