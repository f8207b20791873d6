#include "auth/credentials.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <toml++/toml.h>
#include <fstream>
#include <set>
#include <sstream>

namespace holdfast {

Sha256 sha256(std::string_view data) {
  Sha256 out{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr);
  return out;
}

std::string to_hex(const Sha256& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (auto b : digest) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

std::optional<Sha256> parse_sha256_hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  Sha256 out{};
  for (std::size_t i = 0; i < 32; ++i) {
    int v = 0;
    for (int k = 0; k < 2; ++k) {
      char c = hex[2 * i + static_cast<std::size_t>(k)];
      int d = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + d;
    }
    out[i] = static_cast<std::uint8_t>(v);
  }
  return out;
}

namespace {

Error cred_error(const std::string& origin, const std::string& message) {
  return invalid_argument(origin + ": " + message);
}

std::optional<Error> check_entry_keys(const std::string& origin, const toml::table& t,
                                      const char* what, const std::set<std::string>& known,
                                      std::size_t index) {
  for (const auto& [k, v] : t) {
    if (!known.count(std::string(k.str())))
      return cred_error(origin, std::string("unknown key '") + std::string(k.str()) + "' in [[" +
                                    what + "]] #" + std::to_string(index + 1));
  }
  return std::nullopt;
}

// An entry's tokenSha256 and certCommonName: at least one of them, each well formed.
std::optional<Error> read_secrets(const std::string& origin, const toml::table& t,
                                  const std::string& who, Credential& c) {
  if (const toml::node* cn = t.get("certCommonName")) {
    auto name = cn->value<std::string>();
    if (!cn->is_string() || !name || name->empty())
      return cred_error(origin, who + ": certCommonName must be a non-empty string");
    c.cert_common_name = *name;
  }
  const toml::node* hex = t.get("tokenSha256");
  if (hex == nullptr) {
    if (!c.cert_common_name.empty()) return std::nullopt;
    return cred_error(origin, who +
                                  ": tokenSha256 or certCommonName is required (tokenSha256: hex "
                                  "SHA-256 of the token; see `holdfast auth hash-token`)");
  }
  auto text = hex->value<std::string>();
  auto digest = text && hex->is_string() ? parse_sha256_hex(*text) : std::nullopt;
  if (!digest) return cred_error(origin, who + ": tokenSha256 must be 64 hex digits");
  c.token_sha256 = *digest;
  return std::nullopt;
}

// No two entries share a token or a certificate name: either would make one caller another.
std::optional<Error> check_unique(const std::string& origin, const Credential& c,
                                  const std::string& who, std::set<Sha256>& hashes,
                                  std::set<std::string>& common_names) {
  if (c.token_sha256 && !hashes.insert(*c.token_sha256).second)
    return cred_error(origin, who + " reuses another entry's token");
  if (!c.cert_common_name.empty() && !common_names.insert(c.cert_common_name).second)
    return cred_error(
        origin, who + " reuses another entry's certCommonName \"" + c.cert_common_name + "\"");
  return std::nullopt;
}

}  // namespace

Result<std::vector<Credential>> parse_credentials(std::string_view text,
                                                  const std::string& origin) {
  toml::table doc;
  try {
    doc = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return cred_error(origin, std::to_string(e.source().begin.line) + ":" +
                                  std::to_string(e.source().begin.column) + ": " +
                                  std::string(e.description()));
  }
  std::vector<Credential> out;
  std::set<std::string> ids;
  std::set<Sha256> hashes;
  std::set<std::string> common_names;
  for (const auto& [k, v] : doc) {
    std::string key(k.str());
    if (key != "member" && key != "function")
      return cred_error(origin,
                        "unknown table '" + key + "' (expected [[member]] and [[function]])");
    if (!v.is_array_of_tables())
      return cred_error(origin, "'" + key + "' must be an array of tables ([[" + key + "]])");
  }
  if (auto* members = doc["member"].as_array()) {
    for (std::size_t i = 0; i < members->size(); ++i) {
      const toml::table& t = *(*members)[i].as_table();
      if (auto e =
              check_entry_keys(origin, t, "member",
                               {"userId", "role", "groups", "tokenSha256", "certCommonName"}, i))
        return *e;
      Credential c;
      c.principal.kind = PrincipalKind::kMember;
      auto id = t["userId"].value<std::string>();
      if (!id || id->empty())
        return cred_error(origin, "[[member]] #" + std::to_string(i + 1) + ": userId is required");
      c.principal.id = *id;
      std::string role = t["role"].value_or(std::string("member"));
      if (role == "member") {
        c.principal.role = Role::kMember;
      } else if (role == "admin") {
        c.principal.role = Role::kAdmin;
      } else if (role == "owner") {
        c.principal.role = Role::kOwner;
      } else {
        return cred_error(
            origin,
            "member " + *id + ": role must be member, admin or owner, not \"" + role + "\"");
      }
      if (const toml::node* g = t.get("groups")) {
        const toml::array* groups = g->as_array();
        if (groups == nullptr)
          return cred_error(origin,
                            "member " + *id + ": groups must be an array of \"type/id\" strings");
        for (const auto& node : *groups) {
          auto s = node.value<std::string>();
          auto slash = s ? s->find('/') : std::string::npos;
          if (!s || slash == std::string::npos || slash == 0 || slash + 1 == s->size())
            return cred_error(origin,
                              "member " + *id + ": each group must be a \"type/id\" string");
          c.principal.groups.emplace_back(s->substr(0, slash), s->substr(slash + 1));
        }
      }
      if (auto e = read_secrets(origin, t, "member " + *id, c)) return *e;
      if (!ids.insert("user:" + *id).second)
        return cred_error(origin, "member " + *id + " is listed twice");
      if (auto e = check_unique(origin, c, "member " + *id, hashes, common_names)) return *e;
      out.push_back(std::move(c));
    }
  }
  if (auto* functions = doc["function"].as_array()) {
    for (std::size_t i = 0; i < functions->size(); ++i) {
      const toml::table& t = *(*functions)[i].as_table();
      if (auto e =
              check_entry_keys(origin, t, "function", {"name", "tokenSha256", "certCommonName"}, i))
        return *e;
      Credential c;
      c.principal.kind = PrincipalKind::kFunction;
      auto name = t["name"].value<std::string>();
      if (!name || name->empty())
        return cred_error(origin, "[[function]] #" + std::to_string(i + 1) + ": name is required");
      c.principal.id = *name;
      if (auto e = read_secrets(origin, t, "function " + *name, c)) return *e;
      if (!ids.insert("function:" + *name).second)
        return cred_error(origin, "function " + *name + " is listed twice");
      if (auto e = check_unique(origin, c, "function " + *name, hashes, common_names)) return *e;
      out.push_back(std::move(c));
    }
  }
  return out;
}

Result<std::vector<Credential>> load_credentials(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_argument("cannot read credentials file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_credentials(ss.str(), path);
}

Result<std::unique_ptr<CredentialStore>> CredentialStore::open(const std::string& path) {
  auto store = std::unique_ptr<CredentialStore>(new CredentialStore(path));
  if (auto st = store->reload(); !st.ok()) return std::move(st).error();
  return store;
}

Status CredentialStore::reload() {
  auto entries = load_credentials(path_);
  if (!entries.ok()) return std::move(entries).error();
  auto fresh = std::make_shared<const std::vector<Credential>>(std::move(*entries));
  std::lock_guard<std::mutex> lock(mu_);
  entries_ = std::move(fresh);
  return ok_status();
}

std::size_t CredentialStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_ ? entries_->size() : 0;
}

std::optional<Principal> CredentialStore::authenticate(std::optional<std::string_view> user,
                                                       std::string_view token) const {
  std::shared_ptr<const std::vector<Credential>> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries = entries_;
  }
  if (!entries || token.empty()) return std::nullopt;
  const Sha256 presented = sha256(token);
  const Credential* match = nullptr;
  // Compare against every entry, always: the time taken does not depend on which one matches.
  for (const Credential& c : *entries) {
    if (c.token_sha256 &&
        CRYPTO_memcmp(c.token_sha256->data(), presented.data(), presented.size()) == 0)
      match = &c;
  }
  if (match == nullptr) return std::nullopt;
  if (user && *user != match->principal.id) return std::nullopt;
  return match->principal;
}

std::optional<Principal> CredentialStore::authenticate_certificate(
    std::string_view common_name) const {
  std::shared_ptr<const std::vector<Credential>> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries = entries_;
  }
  if (!entries || common_name.empty()) return std::nullopt;
  // The name is not a secret (the certificate's signature is what proves it), so no
  // constant-time compare is needed.
  for (const Credential& c : *entries)
    if (c.cert_common_name == common_name) return c.principal;
  return std::nullopt;
}

}  // namespace holdfast
