#include "tls/tls_tools.h"

#include <sstream>
#include <stdexcept>

namespace holdfast::testing {

std::unique_ptr<TestCertificates> TlsSuite::certs_;

std::vector<std::string> TlsSuite::tls_flags(const std::string& client_auth, bool with_ca) {
  std::vector<std::string> flags = {"--tls-cert", certs().server().cert, "--tls-key",
                                    certs().server().key};
  if (with_ca) flags.insert(flags.end(), {"--tls-ca", certs().ca()});
  if (!client_auth.empty()) flags.insert(flags.end(), {"--tls-client-auth", client_auth});
  return flags;
}

RunResult TlsSuite::redis_cli(int port, const std::vector<std::string>& args,
                              const TestCertificates::Pair* client, const std::string& input,
                              const std::string& ca) {
  std::vector<std::string> argv = {REDIS_CLI_BIN, "--tls",
                                   "--cacert",    ca.empty() ? certs().ca() : ca,
                                   "-p",          std::to_string(port)};
  if (client != nullptr) argv.insert(argv.end(), {"--cert", client->cert, "--key", client->key});
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, input);
}

RunResult TlsSuite::curl(const std::vector<std::string>& args,
                         const TestCertificates::Pair* client) {
  std::vector<std::string> argv = {"curl", "-sS", "--cacert", certs().ca(), "-w", "\n%{http_code}"};
  if (client != nullptr) argv.insert(argv.end(), {"--cert", client->cert, "--key", client->key});
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

RunResult TlsSuite::s_client(int port, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"openssl",
                                   "s_client",
                                   "-connect",
                                   "127.0.0.1:" + std::to_string(port),
                                   "-CAfile",
                                   certs().ca(),
                                   "-verify_return_error"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run(argv, "");
}

double TlsSuite::metric(const ServerProcess& server, const std::string& series,
                        const TestCertificates::Pair* client) {
  std::vector<std::string> argv = {"curl", "-sS", "--cacert", certs().ca()};
  if (client != nullptr) argv.insert(argv.end(), {"--cert", client->cert, "--key", client->key});
  argv.push_back("https://127.0.0.1:" + std::to_string(server.http_port()) + "/metrics");
  RunResult r = run(argv);
  if (r.exit_code != 0) throw std::runtime_error("GET /metrics failed: " + r.err);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  throw std::runtime_error("no series " + series + " in /metrics");
}

std::string TlsSuite::field(const std::string& output, const std::string& name) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line == name && std::getline(lines, line)) return line;
  }
  return "";
}

}  // namespace holdfast::testing
