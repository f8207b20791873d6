// Client certificates as callers: a verified certificate whose common name a member or a
// function of the credentials file carries (certCommonName) is that caller, over RESP without
// AUTH and over HTTP without a bearer token; its holds name it in heldBy and the rules apply to
// it. A verified certificate with a name nobody carries is unauthenticated, as with no token,
// and tokens keep working beside certificates.
#include <regex>

#include "holdfast/client.h"
#include "support/auth_config.h"
#include "support/resp_client.h"
#include "tls/tls_tools.h"

namespace holdfast::testing {
namespace {

constexpr const char* kCertCallers =
    "\n[[member]]\nuserId = \"carol\"\nrole = \"member\"\ncertCommonName = \"carol.example\"\n"
    "\n[[function]]\nname = \"billing\"\ncertCommonName = \"billing-svc\"\n";

class TlsCallers : public TlsSuite {
 protected:
  AuthConfig config{600, kCertCallers};
  ServerProcess server{[this] {
    auto flags = config.flags();
    for (auto& f : tls_flags()) flags.push_back(f);
    return flags;
  }()};
  TestCertificates::Pair carol = certs().client("carol.example");
  TestCertificates::Pair billing = certs().client("billing-svc");
  TestCertificates::Pair mallory = certs().client("mallory");

  std::string https(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(server.http_port()) + path;
  }
  // Body and status of an HTTPS request: the status is the last line curl -w wrote.
  static std::pair<std::string, std::string> split(const RunResult& r) {
    const auto nl = r.out.rfind('\n');
    return {r.out.substr(0, nl), r.out.substr(nl + 1)};
  }
};

TEST_F(TlsCallers, AKnownCertificateIsItsCallerOverRespWithoutAuth) {
  RunResult r = redis_cli(server.port(), {"LOCK.TRY", "jobs:1", "TTL", "30000"}, &carol);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(field(r.out, "heldBy"), "user:carol") << r.out;
  // A member may not list; a function may.
  EXPECT_NE(redis_cli(server.port(), {"LOCK.LIST"}, &carol).out.find("FORBIDDEN"),
            std::string::npos);
  RunResult list = redis_cli(server.port(), {"LOCK.LIST"}, &billing);
  EXPECT_NE(list.out.find("user:carol"), std::string::npos) << list.out;
  RunResult fn = redis_cli(server.port(), {"LOCK.TRY", "jobs:2", "TTL", "30000"}, &billing);
  EXPECT_EQ(field(fn.out, "heldBy"), "function:billing") << fn.out;
  // What the status of the key shows to anyone.
  auto root = RespClient::unix_socket(server.unix_path());
  ASSERT_EQ(root.call({"AUTH", "root-secret"}).str, "OK");
  EXPECT_EQ(root.call({"LOCK.STATUS", "jobs:1"}).text("heldBy"), "user:carol");
}

TEST_F(TlsCallers, TheRulesApplyToACertificatesCaller) {
  auto root = RespClient::unix_socket(server.unix_path());
  ASSERT_EQ(root.call({"AUTH", "root-secret"}).str, "OK");
  const auto set =
      root.call({"RULES.SET",
                 "[ruleSet]\nname = \"own-keys\"\nresourceType = \"lock\"\n\n[rules.lock]\n"
                 "acquire = \"record.key.startsWith('user:' + user.userId + ':')\"\n"});
  ASSERT_FALSE(set.is_error()) << set.debug();
  RunResult own =
      redis_cli(server.port(), {"LOCK.TRY", "user:carol:inbox", "TTL", "30000"}, &carol);
  EXPECT_EQ(field(own.out, "heldBy"), "user:carol") << own.out;
  RunResult other =
      redis_cli(server.port(), {"LOCK.TRY", "user:alice:inbox", "TTL", "30000"}, &carol);
  EXPECT_NE(other.out.find("ACCESS_DENIED"), std::string::npos) << other.out;
  // The same over HTTPS with the same certificate.
  auto denied = split(curl({"-X", "POST", https("/v1/locks/try-acquire"), "--data",
                            R"({"key":"user:alice:outbox","ttlMs":30000})"},
                           &carol));
  EXPECT_EQ(denied.second, "403") << denied.first;
  EXPECT_NE(denied.first.find("ACCESS_DENIED"), std::string::npos);
}

TEST_F(TlsCallers, AKnownCertificateIsItsCallerOverHttpsWithoutABearer) {
  auto granted = split(curl({"-X", "POST", https("/v1/locks/try-acquire"), "--data",
                             R"({"key":"reports","ttlMs":30000})"},
                            &carol));
  EXPECT_EQ(granted.second, "200") << granted.first;
  EXPECT_NE(granted.first.find("\"heldBy\":\"user:carol\""), std::string::npos) << granted.first;
  EXPECT_EQ(split(curl({https("/v1/locks")}, &carol)).second, "403");
  EXPECT_EQ(split(curl({https("/v1/locks")}, &billing)).second, "200");
  // A bearer token wins over the certificate, and a wrong one is refused, not passed over.
  auto as_alice = split(
      curl({"-X", "POST", https("/v1/locks/try-acquire"), "-H",
            "Authorization: Bearer alice-secret", "--data", R"({"key":"reports-2","ttlMs":30000})"},
           &carol));
  EXPECT_NE(as_alice.first.find("\"heldBy\":\"user:alice\""), std::string::npos) << as_alice.first;
  EXPECT_EQ(split(curl({https("/v1/locks/status?key=reports"), "-H", "Authorization: Bearer wrong"},
                       &carol))
                .second,
            "401");
}

TEST_F(TlsCallers, AnUnknownNameIsUnauthenticatedAndTokensStillWork) {
  RunResult r = redis_cli(server.port(), {"LOCK.TRY", "jobs:3", "TTL", "30000"}, &mallory);
  EXPECT_NE(r.out.find("NOAUTH"), std::string::npos) << r.out;
  RunResult no_cert = redis_cli(server.port(), {"LOCK.TRY", "jobs:3", "TTL", "30000"});
  EXPECT_NE(no_cert.out.find("NOAUTH"), std::string::npos) << no_cert.out;
  // AUTH on the same connection.
  RunResult with_auth =
      redis_cli(server.port(), {}, &mallory, "AUTH alice-secret\nLOCK.TRY jobs:3 TTL 30000\n");
  EXPECT_EQ(field(with_auth.out, "heldBy"), "user:alice") << with_auth.out;
  EXPECT_EQ(split(curl({https("/v1/locks/status?key=jobs:3")}, &mallory)).second, "401");
  auto bearer = split(curl(
      {https("/v1/locks/status?key=jobs:3"), "-H", "Authorization: Bearer bob-secret"}, &mallory));
  EXPECT_EQ(bearer.second, "200") << bearer.first;
}

TEST_F(TlsCallers, AuthReplacesTheCertificatesCallerAndResetReturnsToIt) {
  RunResult r = redis_cli(server.port(), {}, &carol,
                          "LOCK.TRY k:1 TTL 30000\nAUTH alice-secret\nLOCK.TRY k:2 TTL 30000\n"
                          "AUTH nobody-knows-this\nLOCK.TRY k:3 TTL 30000\nRESET\n"
                          "LOCK.TRY k:4 TTL 30000\n");
  std::vector<std::string> held_by;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line == "heldBy" && std::getline(lines, line)) held_by.push_back(line);
  // A failed AUTH leaves the connection as it was (as in Redis).
  EXPECT_EQ(held_by,
            (std::vector<std::string>{"user:carol", "user:alice", "user:alice", "user:carol"}))
      << r.out;
  EXPECT_NE(r.out.find("WRONGPASS"), std::string::npos);
}

TEST_F(TlsCallers, TheCppClientSignsInByItsCertificate) {
  ClientOptions options{.tls_ca = certs().ca(), .tls_cert = carol.cert, .tls_key = carol.key};
  Client client("rediss://127.0.0.1:" + std::to_string(server.port()), options);
  auto hold = client.try_acquire("cpp:carol", {.ttl = std::chrono::seconds(30)});
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(hold->held_by, "user:carol");
  EXPECT_TRUE(client.release(*hold).released);
  // Without a certificate, nor a token: refused as unauthenticated.
  Client anonymous("rediss://127.0.0.1:" + std::to_string(server.port()), {.tls_ca = certs().ca()});
  EXPECT_THROW(anonymous.try_acquire("cpp:anon", {}), UnauthenticatedError);
}

class TlsOpenMode : public TlsSuite {};

TEST_F(TlsOpenMode, ACertificateChangesNothingWithoutCredentials) {
  ServerProcess server(tls_flags());
  const auto cert = certs().client("carol.example");
  RunResult r = redis_cli(server.port(), {"LOCK.TRY", "open:1", "TTL", "30000"}, &cert);
  EXPECT_EQ(field(r.out, "heldBy"), "user:local") << r.out;
}

}  // namespace
}  // namespace holdfast::testing
