// A server configuration with credentials, for client and CLI tests in auth mode. Token hashes
// come from `holdfast auth hash-token`, so these tests use nothing of the server's code.
//   alice, bob: members ("alice-secret", "bob-secret"); root: admin ("root-secret").
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/process.h"

namespace holdfast::testing {

class AuthConfig {
 public:
  explicit AuthConfig(int acquires_per_hour = 600) {
    std::ofstream(dir_.path() + "/credentials.toml")
        << member("alice", "member", "alice-secret") << member("bob", "member", "bob-secret")
        << member("root", "admin", "root-secret");
    std::ofstream(dir_.path() + "/holdfast.toml")
        << "[auth]\ncredentials = \"credentials.toml\"\n\n[limits]\nacquirePerUserPerHour = "
        << acquires_per_hour << "\n";
  }
  // Flags for ServerProcess.
  std::vector<std::string> flags() const { return {"--config", dir_.path() + "/holdfast.toml"}; }

 private:
  static std::string hash(const std::string& token) {
    RunResult r = run({HOLDFAST_BIN, "auth", "hash-token", token});
    if (r.exit_code != 0 || r.out.size() < 64)
      throw std::runtime_error("hash-token failed: " + r.err);
    return r.out.substr(0, 64);
  }
  static std::string member(const std::string& id, const std::string& role,
                            const std::string& token) {
    return "[[member]]\nuserId = \"" + id + "\"\nrole = \"" + role + "\"\ntokenSha256 = \"" +
           hash(token) + "\"\n\n";
  }

  TempDir dir_;
};

}  // namespace holdfast::testing
