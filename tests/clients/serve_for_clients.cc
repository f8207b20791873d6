// Serves a real `holdfast serve` to client tests written in other languages (Python, Node.js),
// through the same test support the C++ suites use: a free port, a private data dir and Unix
// socket, and with HOLDFAST_TEST_STORE_URL set a node over PostgreSQL in a schema of its own.
//
// Usage: serve_for_clients [--auth]
//   --auth: with credentials (tests/support/auth_config.h): members alice ("alice-secret") and
//   bob ("bob-secret"), admin root ("root-secret"), function importer ("fn-secret").
// Prints one line, {"port": N, "unix": "...", "store": "embedded"|"postgres"}, then reads
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

using holdfast::testing::AuthConfig;
using holdfast::testing::ServerProcess;

int main(int argc, char** argv) {
  const bool auth = argc > 1 && std::string(argv[1]) == "--auth";
  try {
    std::optional<AuthConfig> config;
    if (auth) config.emplace();
    ServerProcess server(auth ? config->flags() : std::vector<std::string>{});
    std::cout << "{\"port\": " << server.port() << ", \"unix\": \"" << server.unix_path()
              << "\", \"store\": \"" << (server.store_url().empty() ? "embedded" : "postgres")
              << "\"}" << std::endl;
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
