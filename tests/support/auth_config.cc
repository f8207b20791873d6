#include "support/auth_config.h"

#include <fstream>

#include "auth/credentials.h"

namespace holdfast::testing {
namespace {

std::string hash(const std::string& token) { return to_hex(sha256(token)); }

}  // namespace

AuthConfig::AuthConfig(int cap, const std::string& extra_members) {
  std::ofstream(dir_.path() + "/credentials.toml")
      << "[[member]]\nuserId = \"alice\"\nrole = \"member\"\ngroups = "
         "[\"ops/core\"]\ntokenSha256 = \""
      << hash("alice-secret")
      << "\"\n\n[[member]]\nuserId = \"bob\"\nrole = \"member\"\ntokenSha256 = \""
      << hash("bob-secret")
      << "\"\n\n[[member]]\nuserId = \"root\"\nrole = \"admin\"\ntokenSha256 = \""
      << hash("root-secret") << "\"\n\n[[function]]\nname = \"importer\"\ntokenSha256 = \""
      << hash("fn-secret") << "\"\n"
      << extra_members;
  std::ofstream(dir_.path() + "/holdfast.toml")
      << "[auth]\ncredentials = \"credentials.toml\"\n\n[limits]\nacquirePerUserPerHour = " << cap
      << "\n";
}

void AuthConfig::add_member(const std::string& id, const std::string& token) {
  std::ofstream(dir_.path() + "/credentials.toml", std::ios::app)
      << "\n[[member]]\nuserId = \"" << id << "\"\ntokenSha256 = \"" << hash(token) << "\"\n";
}

}  // namespace holdfast::testing
