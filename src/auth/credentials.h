// The credentials file (docs/reference.md section 6, "Configuration"): members with userId, role
// and groups, functions with a name, each with the SHA-256 of its bearer token, the common name
// of its client certificate (certCommonName, docs/tls.md), or both. Tokens themselves are never
// stored. Authentication hashes the presented token and compares it with every entry in constant
// time, so neither a token nor which entry matched leaks through timing.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/authenticator.h"
#include "core/error.h"
#include "core/principal.h"

namespace holdfast {

using Sha256 = std::array<std::uint8_t, 32>;

Sha256 sha256(std::string_view data);
std::string to_hex(const Sha256& digest);
std::optional<Sha256> parse_sha256_hex(std::string_view hex);

struct Credential {
  Principal principal;
  std::optional<Sha256> token_sha256;  // none: the entry signs in by certificate only
  std::string cert_common_name;        // empty: not by certificate
};

// Parses credentials TOML text; `origin` names it in errors (a path).
Result<std::vector<Credential>> parse_credentials(std::string_view toml_text,
                                                  const std::string& origin);
Result<std::vector<Credential>> load_credentials(const std::string& path);

// An Authenticator over a credentials file that can be reloaded (SIGHUP) while serving.
class CredentialStore final : public Authenticator {
 public:
  static Result<std::unique_ptr<CredentialStore>> open(const std::string& path);

  std::optional<Principal> authenticate(std::optional<std::string_view> user,
                                        std::string_view token) const override;
  std::optional<Principal> authenticate_certificate(std::string_view common_name) const override;
  // Re-reads the file. On error the old credentials stay in force and the error is returned.
  Status reload();
  std::size_t size() const;
  const std::string& path() const { return path_; }

 private:
  explicit CredentialStore(std::string path) : path_(std::move(path)) {}
  std::string path_;
  mutable std::mutex mu_;  // reload may come from a signal handler's loop callback
  std::shared_ptr<const std::vector<Credential>> entries_;
};

}  // namespace holdfast
