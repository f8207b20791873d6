// Lock rule sets against the real server: the seed's lock-policy, revocation mid-hold,
// conflicts, deletion, compile errors, persistence across a restart, and the HTTP routes.
#include <gtest/gtest.h>

#include <fstream>

#include "auth/credentials.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

const char* kLockPolicy = R"toml([ruleSet]
name = "lock-policy"
resourceType = "lock"

[rules.lock]
acquire = "record.key.startsWith('user:' + user.userId + ':')"
renew   = "record.key.startsWith('user:' + user.userId + ':')"
)toml";

class Rules : public ::testing::Test {
 protected:
  TempDir dir;
  std::vector<std::string> flags() {
    auto hash = [](const std::string& t) { return to_hex(sha256(t)); };
    std::ofstream(dir.path() + "/credentials.toml")
        << "[[member]]\nuserId = \"alice\"\ngroups = [\"ops/core\"]\ntokenSha256 = \""
        << hash("alice-secret") << "\"\n[[member]]\nuserId = \"bob\"\ntokenSha256 = \""
        << hash("bob-secret")
        << "\"\n[[member]]\nuserId = \"root\"\nrole = \"admin\"\ntokenSha256 = \""
        << hash("root-secret") << "\"\n[[function]]\nname = \"importer\"\ntokenSha256 = \""
        << hash("fn-secret") << "\"\n";
    std::ofstream(dir.path() + "/holdfast.toml") << "[auth]\ncredentials = \"credentials.toml\"\n";
    return {"--config", dir.path() + "/holdfast.toml"};
  }
  ServerProcess server{flags()};

  RespClient as(const std::string& token) {
    auto c = server.client();
    EXPECT_EQ(c.call({"AUTH", token}).str, "OK");
    return c;
  }
  void push(const std::string& toml) {
    auto r = as("root-secret").call({"RULES.SET", toml});
    ASSERT_FALSE(r.is_error()) << r.debug();
  }
};

TEST_F(Rules, TheSeedPolicyScopesMembersToTheirOwnNamespace) {
  push(kLockPolicy);
  auto alice = as("alice-secret");
  EXPECT_FALSE(alice.call({"LOCK.TRY", "user:alice:x", "TTL", "60000"}).is_error());
  auto denied = alice.call({"LOCK.TRY", "user:bob:x", "TTL", "60000"});
  EXPECT_EQ(denied.error_code(), "LOCK_ACCESS_DENIED");
  EXPECT_EQ(denied.str.find("startsWith"), std::string::npos)
      << "the rule must not be echoed: " << denied.str;
  EXPECT_EQ(
      alice.call({"LOCK.ACQUIRE", "jobs:nightly", "TTL", "1000", "TIMEOUT", "0"}).error_code(),
      "LOCK_ACCESS_DENIED");
  // Operations the set does not define are denied for members.
  EXPECT_EQ(alice.call({"LOCK.ASSIGN", "user:alice:turn", "alice"}).error_code(),
            "LOCK_ACCESS_DENIED");
  // Admins pass every rule; functions are never subject to rules.
  EXPECT_FALSE(as("root-secret").call({"LOCK.TRY", "user:bob:y", "TTL", "60000"}).is_error());
  EXPECT_FALSE(as("fn-secret").call({"LOCK.TRY", "jobs:nightly", "TTL", "60000"}).is_error());
}

TEST_F(Rules, ARuleSeesTheOperationAndTheModeAsked) {
  // Anyone may read, one permit of four at a time; writing takes ops/core and one attempt.
  push(R"toml([ruleSet]
name = "readers"
resourceType = "lock"
[rules.lock]
acquire = """request.mode == 'shared' ? true
  : request.mode == 'semaphore' ? request.permits == 4 && request.take == 1
  : request.operation == 'tryAcquire' && isMemberOf('ops', 'core')"""
renew = "request.operation == 'renew'"
assign = "request.operation == 'assign' && request.mode == 'exclusive' && !has(request.take)"
)toml");
  auto bob = as("bob-secret");
  auto alice = as("alice-secret");
  const bool over_postgres = !server.store_url().empty();
  // Allowed by the rule; a node over PostgreSQL then refuses the mode itself.
  auto allowed = [&](const RespValue& r) {
    EXPECT_NE(r.error_code(), "LOCK_ACCESS_DENIED") << r.debug();
    if (!over_postgres) {
      EXPECT_FALSE(r.is_error()) << r.debug();
    }
  };
  allowed(bob.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"}));
  allowed(bob.call({"LOCK.ACQUIRE", "doc", "TTL", "60000", "TIMEOUT", "0", "MODE", "shared"}));
  EXPECT_EQ(bob.call({"LOCK.TRY", "doc", "TTL", "60000"}).error_code(), "LOCK_ACCESS_DENIED");
  EXPECT_EQ(bob.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "EXCLUSIVE"}).error_code(),
            "LOCK_ACCESS_DENIED");

  auto written = alice.call({"LOCK.TRY", "page", "TTL", "60000"});
  EXPECT_FALSE(written.is_error()) << written.debug();
  EXPECT_EQ(alice.call({"LOCK.ACQUIRE", "page2", "TTL", "60000", "TIMEOUT", "0"}).error_code(),
            "LOCK_ACCESS_DENIED")
      << "a blocking acquire is operation 'acquire'";
  EXPECT_EQ(
      alice.call({"LOCK.RENEW", "page", written.text("handle"), "TTL", "60000"}).number("renewed"),
      1);

  allowed(bob.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "4"}));
  allowed(bob.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "4", "TAKE", "1"}));
  EXPECT_EQ(
      bob.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "4", "TAKE", "2"}).error_code(),
      "LOCK_ACCESS_DENIED");
  EXPECT_EQ(bob.call({"LOCK.TRY", "pool2", "TTL", "60000", "PERMITS", "8"}).error_code(),
            "LOCK_ACCESS_DENIED");

  auto assigned = bob.call({"LOCK.ASSIGN", "turn", "bob"});
  EXPECT_FALSE(assigned.is_error()) << assigned.debug();
}

TEST_F(Rules, RevokedAccessStopsRenewButNotRelease) {
  push(kLockPolicy);
  auto alice = as("alice-secret");
  auto hold = alice.call({"LOCK.TRY", "user:alice:report", "TTL", "60000"});
  ASSERT_FALSE(hold.is_error());
  // The policy changes under the running holder: only ops admins may renew now.
  push(R"toml([ruleSet]
name = "lock-policy"
resourceType = "lock"
[rules.lock]
acquire = "record.key.startsWith('user:' + user.userId + ':')"
renew = "isMemberOf('ops', 'admins')"
)toml");
  EXPECT_EQ(alice.call({"LOCK.RENEW", "user:alice:report", hold.text("handle"), "TTL", "60000"})
                .error_code(),
            "LOCK_ACCESS_DENIED");
  EXPECT_EQ(
      alice.call({"LOCK.RELEASE", "user:alice:report", hold.text("handle")}).number("released"), 1);
}

TEST_F(Rules, StatusIsOpenToMembersAndListIsNot) {
  push(kLockPolicy);
  as("alice-secret").call({"LOCK.TRY", "user:alice:x", "TTL", "60000"});
  auto bob = as("bob-secret");
  EXPECT_EQ(bob.call({"LOCK.STATUS", "user:alice:x"}).text("heldBy"), "user:alice");
  EXPECT_EQ(bob.call({"LOCK.LIST"}).error_code(), "FORBIDDEN");
  EXPECT_EQ(server.client().call({"LOCK.STATUS", "user:alice:x"}).error_code(), "NOAUTH");
}

TEST_F(Rules, ASecondNameConflictsTheSameNameReplacesAndDeleteReopens) {
  push(kLockPolicy);
  auto root = as("root-secret");
  auto conflict = root.call(
      {"RULES.SET",
       "[ruleSet]\nname = \"other\"\nresourceType = \"lock\"\n[rules.lock]\nacquire = \"true\"\n"});
  EXPECT_EQ(conflict.error_code(), "RULESET_CONFLICT");
  auto replaced = root.call({"RULES.SET", kLockPolicy});
  EXPECT_EQ(replaced.number("replaced"), 1);
  auto got = root.call({"RULES.GET"});
  EXPECT_EQ(got.text("name"), "lock-policy");
  EXPECT_EQ(got.text("toml"), kLockPolicy);
  EXPECT_EQ(as("alice-secret").call({"RULES.SET", kLockPolicy}).error_code(), "FORBIDDEN");
  EXPECT_EQ(root.call({"RULES.DELETE", "nope"}).error_code(), "NOT_FOUND");
  EXPECT_EQ(root.call({"RULES.DELETE", "lock-policy"}).str, "OK");
  EXPECT_TRUE(root.call({"RULES.GET"}).is_null());
  EXPECT_FALSE(as("alice-secret").call({"LOCK.TRY", "jobs:nightly", "TTL", "1000"}).is_error());
}

TEST_F(Rules, ARuleThatDoesNotCompileIsRefusedNamingItAndItsPosition) {
  auto root = as("root-secret");
  auto r = root.call({"RULES.SET",
                      "[ruleSet]\nname = \"p\"\nresourceType = \"lock\"\n[rules.lock]\nacquire = "
                      "\"true\"\nrenew = \"record.key.startsWith(\"\n"});
  EXPECT_EQ(r.error_code(), "INVALID_ARGUMENT");
  EXPECT_NE(r.str.find("rules.lock.renew: 1:"), std::string::npos) << r.str;
  EXPECT_TRUE(root.call({"RULES.GET"}).is_null());
  auto release = root.call(
      {"RULES.SET",
       "[ruleSet]\nname = \"p\"\nresourceType = \"lock\"\n[rules.lock]\nrelease = \"false\"\n"});
  EXPECT_NE(release.str.find("release is never gated"), std::string::npos) << release.str;
}

TEST_F(Rules, TheRuleSetSurvivesARestart) {
  push(kLockPolicy);
  server.kill9();
  server.start();
  EXPECT_EQ(as("alice-secret").call({"LOCK.TRY", "jobs:nightly", "TTL", "1000"}).error_code(),
            "LOCK_ACCESS_DENIED");
  EXPECT_EQ(as("root-secret").call({"RULES.GET"}).text("name"), "lock-policy");
}

TEST_F(Rules, HttpRoutesPutGetDelete) {
  auto curl = [&](std::vector<std::string> args, const std::string& body = "") {
    std::vector<std::string> argv = {"curl",           "-s", "-w",
                                     "\n%{http_code}", "-H", "Authorization: Bearer root-secret"};
    argv.insert(argv.end(), args.begin(), args.end());
    if (!body.empty()) argv.insert(argv.end(), {"--data-binary", "@-"});
    return run(argv, body).out;
  };
  auto put = curl({"-X", "PUT", server.http_url() + "/v1/rule-sets/lock-policy"}, kLockPolicy);
  EXPECT_EQ(put, "{\"name\":\"lock-policy\",\"replaced\":false}\n200");
  auto mismatch = curl({"-X", "PUT", server.http_url() + "/v1/rule-sets/other"}, kLockPolicy);
  EXPECT_EQ(mismatch.substr(mismatch.size() - 3), "400");
  auto get = curl({server.http_url() + "/v1/rule-sets"});
  EXPECT_NE(get.find("\"name\":\"lock-policy\""), std::string::npos) << get;
  auto denied =
      run({"curl", "-s", "-w", "\n%{http_code}", "-X", "POST", "-H",
           "Authorization: Bearer alice-secret", server.http_url() + "/v1/locks/try-acquire", "-d",
           R"({"key":"jobs:x","ttlMs":1000})"});
  EXPECT_NE(denied.out.find("LOCK_ACCESS_DENIED"), std::string::npos);
  EXPECT_EQ(denied.out.substr(denied.out.size() - 3), "403");
  EXPECT_EQ(curl({"-X", "DELETE", server.http_url() + "/v1/rule-sets/lock-policy"}),
            "{\"deleted\":true}\n200");
  EXPECT_EQ(curl({"-X", "DELETE", server.http_url() + "/v1/rule-sets/lock-policy"}).substr(0, 24),
            "{\"errorCode\":\"NOT_FOUND\"");
}

}  // namespace
}  // namespace holdfast::testing
