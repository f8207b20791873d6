// The rule set and the rate limits are the cluster's, not a node's: a set pushed through one
// node is enforced by the others, and a member's acquire budget is shared by all nodes.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "auth/credentials.h"
#include "cluster.h"
#include "support/eventually.h"

namespace holdfast::testing {
namespace {

using Clock = std::chrono::steady_clock;

const char* kLockPolicy = R"toml([ruleSet]
name = "lock-policy"
resourceType = "lock"

[rules.lock]
acquire = "record.key.startsWith('user:' + user.userId + ':')"
)toml";

// holdfast.toml with credentials for alice (member) and root (admin), in a folder that
// outlives the nodes.
class PolicyConfig {
 public:
  explicit PolicyConfig(int cap) {
    auto hash = [](const std::string& t) { return to_hex(sha256(t)); };
    std::ofstream(dir_.path() + "/credentials.toml")
        << "[[member]]\nuserId = \"alice\"\ntokenSha256 = \"" << hash("alice-secret") << "\"\n"
        << "[[member]]\nuserId = \"root\"\nrole = \"admin\"\ntokenSha256 = \""
        << hash("root-secret") << "\"\n";
    std::ofstream(dir_.path() + "/holdfast.toml")
        << "[auth]\ncredentials = \"credentials.toml\"\n\n[limits]\n"
        << "acquirePerUserPerHour = " << cap << "\n";
  }
  std::vector<std::string> flags() const { return {"--config", dir_.path() + "/holdfast.toml"}; }

 private:
  TempDir dir_;
};

RespClient as(ServerProcess& node, const std::string& token) {
  auto c = node.client();
  EXPECT_EQ(c.call({"AUTH", token}).str, "OK");
  return c;
}

// Asks until `code` comes back (a notification is on its way; failing that, the node's
// heartbeat sees the new version); false if it never does. Every 10 ms, so that the asking
// stays far below the member's acquire budget.
bool until_error(RespClient& c, const std::vector<std::string>& cmd, const std::string& code) {
  const auto deadline = Clock::now() + kEventually;
  while (Clock::now() < deadline) {
    auto r = c.call(cmd);
    if (r.is_error() ? r.error_code() == code : code.empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(SharedPolicy, ARuleSetPushedOnNodeOneIsEnforcedOnNodeTwo) {
  PolicyConfig config(1000);
  Cluster cluster(3, config.flags());
  auto alice2 = as(cluster.node(1), "alice-secret");
  const std::vector<std::string> outside = {"LOCK.TRY", "jobs:nightly", "TTL", "1000"};
  ASSERT_FALSE(alice2.call(outside).is_error());

  auto pushed = as(cluster.node(0), "root-secret").call({"RULES.SET", kLockPolicy});
  ASSERT_FALSE(pushed.is_error()) << pushed.debug();
  ASSERT_TRUE(until_error(alice2, {"LOCK.TRY", "jobs:other", "TTL", "1000"}, "LOCK_ACCESS_DENIED"))
      << "node 2 never enforced the rule set";
  EXPECT_FALSE(alice2.call({"LOCK.TRY", "user:alice:x", "TTL", "1000"}).is_error());

  auto root3 = as(cluster.node(2), "root-secret");
  EXPECT_EQ(root3.call({"RULES.GET"}).text("name"), "lock-policy");
  auto conflict = root3.call(
      {"RULES.SET",
       "[ruleSet]\nname = \"other\"\nresourceType = \"lock\"\n[rules.lock]\nacquire = \"true\"\n"});
  EXPECT_EQ(conflict.error_code(), "RULESET_CONFLICT");
  EXPECT_EQ(root3.call({"RULES.DELETE", "lock-policy"}).str, "OK");
  EXPECT_TRUE(until_error(alice2, {"LOCK.TRY", "jobs:third", "TTL", "1000"}, ""))
      << "node 2 kept enforcing a deleted rule set";
}

TEST(SharedPolicy, AMembersAcquireBudgetIsSharedByEveryNode) {
  PolicyConfig config(3);
  Cluster cluster(3, config.flags());
  for (int n = 0; n < 3; ++n) {
    auto r = as(cluster.node(n), "alice-secret")
                 .call({"LOCK.TRY", "k" + std::to_string(n), "TTL", "60000"});
    EXPECT_FALSE(r.is_error()) << r.debug();
  }
  auto limited = as(cluster.node(1), "alice-secret").call({"LOCK.TRY", "k9", "TTL", "60000"});
  ASSERT_EQ(limited.error_code(), "RATE_LIMITED") << limited.debug();
  EXPECT_NE(limited.str.find("retryAfterMs="), std::string::npos);
  // A blocking acquire over the cap waits inside its timeout, on any node.
  auto waited = as(cluster.node(2), "alice-secret")
                    .call({"LOCK.ACQUIRE", "free", "TTL", "1000", "TIMEOUT", "200"});
  EXPECT_EQ(waited.str, "LOCK_TIMEOUT no grant within the timeout key=free timeoutMs=200");
}

}  // namespace
}  // namespace holdfast::testing
