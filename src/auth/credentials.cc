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

Result<Sha256> read_hash(const std::string& origin, const toml::table& t, const std::string& who) {
  auto hex = t["tokenSha256"].value<std::string>();
  if (!hex)
    return cred_error(
        origin,
        who +
            ": tokenSha256 is required (hex SHA-256 of the token; see `holdfast auth hash-token`)");
  auto digest = parse_sha256_hex(*hex);
  if (!digest) return cred_error(origin, who + ": tokenSha256 must be 64 hex digits");
  return *digest;
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
              check_entry_keys(origin, t, "member", {"userId", "role", "groups", "tokenSha256"}, i))
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
      auto hash = read_hash(origin, t, "member " + *id);
      if (!hash.ok()) return std::move(hash).error();
      c.token_sha256 = *hash;
      if (!ids.insert("user:" + *id).second)
        return cred_error(origin, "member " + *id + " is listed twice");
      if (!hashes.insert(c.token_sha256).second)
        return cred_error(origin, "member " + *id + " reuses another entry's token");
      out.push_back(std::move(c));
    }
  }
  if (auto* functions = doc["function"].as_array()) {
    for (std::size_t i = 0; i < functions->size(); ++i) {
      const toml::table& t = *(*functions)[i].as_table();
      if (auto e = check_entry_keys(origin, t, "function", {"name", "tokenSha256"}, i)) return *e;
      Credential c;
      c.principal.kind = PrincipalKind::kFunction;
      auto name = t["name"].value<std::string>();
      if (!name || name->empty())
        return cred_error(origin, "[[function]] #" + std::to_string(i + 1) + ": name is required");
      c.principal.id = *name;
      auto hash = read_hash(origin, t, "function " + *name);
      if (!hash.ok()) return std::move(hash).error();
      c.token_sha256 = *hash;
      if (!ids.insert("function:" + *name).second)
        return cred_error(origin, "function " + *name + " is listed twice");
      if (!hashes.insert(c.token_sha256).second)
        return cred_error(origin, "function " + *name + " reuses another entry's token");
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
    if (CRYPTO_memcmp(c.token_sha256.data(), presented.data(), presented.size()) == 0) match = &c;
  }
  if (match == nullptr) return std::nullopt;
  if (user && *user != match->principal.id) return std::nullopt;
  return match->principal;
}

}  // namespace holdfast
