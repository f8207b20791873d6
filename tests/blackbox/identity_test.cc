// Identity-aware holds bound to the caller (docs/auth.md, "Holder ids"): with credentials a
// holder id left out is the caller's own, rules see the ids a call acts on (request.holderId,
// request.toId, request.fromId), and LOCK.CHECK answers the holder its fencing token.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>

#include "auth/credentials.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

// alice, bob, carol: members; dave: a member in group game/referee; root: admin; importer: a
// function.
std::vector<std::string> auth_flags(const TempDir& dir) {
  auto hash = [](const std::string& t) { return to_hex(sha256(t)); };
  std::ofstream out(dir.path() + "/credentials.toml");
  for (const char* member : {"alice", "bob", "carol"})
    out << "[[member]]\nuserId = \"" << member << "\"\ntokenSha256 = \""
        << hash(std::string(member) + "-secret") << "\"\n";
  out << "[[member]]\nuserId = \"dave\"\ngroups = [\"game/referee\"]\ntokenSha256 = \""
      << hash("dave-secret") << "\"\n";
  out << "[[member]]\nuserId = \"root\"\nrole = \"admin\"\ntokenSha256 = \"" << hash("root-secret")
      << "\"\n[[function]]\nname = \"importer\"\ntokenSha256 = \"" << hash("fn-secret") << "\"\n";
  std::ofstream(dir.path() + "/holdfast.toml") << "[auth]\ncredentials = \"credentials.toml\"\n";
  return {"--config", dir.path() + "/holdfast.toml"};
}

// The rule set of docs/auth.md, "Rules over holder ids".
const char* kTurnRules = R"toml([ruleSet]
name = "turns"
resourceType = "lock"

[rules.lock]
assign   = "record.key.startsWith('game:') && request.holderId == user.userId"
transfer = "request.fromId == user.userId || isMemberOf('game', 'referee')"
unassign = "has(request.holderId) && request.holderId == user.userId"
)toml";

class Identity : public ::testing::Test {
 protected:
  TempDir dir;
  ServerProcess server{auth_flags(dir)};

  RespClient as(const std::string& who) {
    auto c = server.client();
    EXPECT_EQ(c.call({"AUTH", who + "-secret"}).str, "OK");
    return c;
  }

  struct Reply {
    int status = 0;
    json::value body;
  };
  Reply http(const std::string& who, const std::string& method, const std::string& path,
             const std::string& body = "") {
    std::vector<std::string> argv = {"curl",
                                     "-s",
                                     "-X",
                                     method,
                                     "-H",
                                     "Authorization: Bearer " + who + "-secret",
                                     "-w",
                                     "\n%{http_code}",
                                     server.http_url() + path};
    if (!body.empty()) argv.insert(argv.end(), {"--data-binary", body});
    auto r = run(argv);
    const auto nl = r.out.rfind('\n');
    Reply reply;
    reply.status = std::stoi(r.out.substr(nl + 1));
    reply.body = json::parse(r.out.substr(0, nl));
    return reply;
  }
};

TEST_F(Identity, AssignWithoutAHolderIdAssignsTheKeyToTheCaller) {
  auto alice = as("alice");
  auto a = alice.call({"LOCK.ASSIGN", "turn"});
  ASSERT_FALSE(a.is_error()) << a.debug();
  EXPECT_EQ(a.text("holder"), "alice");
  EXPECT_EQ(a.text("heldBy"), "user:alice");
  // TTL and TIMEOUT are options, not a holder id, when the holder is left out.
  auto timed = alice.call({"LOCK.ASSIGN", "turn:timed", "TTL", "60000", "TIMEOUT", "0"});
  ASSERT_FALSE(timed.is_error()) << timed.debug();
  EXPECT_EQ(timed.text("holder"), "alice");
  EXPECT_GT(timed.number("leaseExpiresAt"), 0);
  // Named, the holder is whoever is named (no rule set: every member may).
  EXPECT_EQ(alice.call({"LOCK.ASSIGN", "turn:bob", "bob"}).text("holder"), "bob");
}

TEST_F(Identity, TransferFromDefaultsToTheCallerSoANonHolderCannotMoveTheTurn) {
  auto alice = as("alice");
  auto bob = as("bob");
  auto carol = as("carol");
  ASSERT_FALSE(alice.call({"LOCK.ASSIGN", "turn"}).is_error());
  auto stolen = carol.call({"LOCK.TRANSFER", "turn", "carol"});
  EXPECT_EQ(stolen.error_code(), "LOCK_NOT_HOLDER") << stolen.debug();
  EXPECT_EQ(carol.call({"LOCK.HOLDER", "turn"}).text("holder"), "alice");
  auto moved = alice.call({"LOCK.TRANSFER", "turn", "bob"});
  ASSERT_FALSE(moved.is_error()) << moved.debug();
  EXPECT_EQ(moved.text("holder"), "bob");
  EXPECT_EQ(alice.call({"LOCK.TRANSFER", "turn", "alice"}).error_code(), "LOCK_NOT_HOLDER");
  EXPECT_EQ(bob.call({"LOCK.TRANSFER", "turn", "alice"}).text("holder"), "alice");
}

TEST_F(Identity, UnassignWithoutAHolderIdFreesOnlyTheCallersOwnAssignment) {
  auto alice = as("alice");
  auto bob = as("bob");
  ASSERT_FALSE(alice.call({"LOCK.ASSIGN", "turn"}).is_error());
  EXPECT_EQ(bob.call({"LOCK.UNASSIGN", "turn"}).error_code(), "LOCK_NOT_HOLDER");
  EXPECT_EQ(bob.call({"LOCK.HOLDER", "turn"}).text("holder"), "alice");
  EXPECT_EQ(alice.call({"LOCK.UNASSIGN", "turn"}).number("released"), 1);
  EXPECT_EQ(alice.call({"LOCK.UNASSIGN", "turn"}).number("released"), 0);
}

TEST_F(Identity, CheckAnswersTheTokenToTheHolderAndRefusesEveryoneElse) {
  auto alice = as("alice");
  auto bob = as("bob");
  EXPECT_EQ(alice.call({"LOCK.CHECK", "turn"}).str,
            "LOCK_NOT_HOLDER the key is not held by alice (it is free) key=turn holderId=alice "
            "assigned=0");
  auto a = alice.call({"LOCK.ASSIGN", "turn"});
  ASSERT_FALSE(a.is_error()) << a.debug();

  auto mine = alice.call({"LOCK.CHECK", "turn"});
  ASSERT_FALSE(mine.is_error()) << mine.debug();
  EXPECT_EQ(mine.text("holder"), "alice");
  EXPECT_EQ(mine.number("token"), a.number("token"));
  EXPECT_EQ(bob.call({"LOCK.HOLDER", "turn"}).number("token"), a.number("token"));
  EXPECT_EQ(bob.call({"LOCK.CHECK", "turn"}).str,
            "LOCK_NOT_HOLDER the key is not held by bob (it is assigned to another holder) "
            "key=turn holderId=bob assigned=1");
  EXPECT_EQ(alice.call({"LOCK.CHECK", "turn", "bob"}).error_code(), "LOCK_NOT_HOLDER");
  EXPECT_EQ(bob.call({"LOCK.CHECK", "turn", "alice"}).number("token"), a.number("token"));

  // The turn moves on: the new holder's token is newer, the old holder is refused.
  ASSERT_FALSE(alice.call({"LOCK.TRANSFER", "turn", "bob"}).is_error());
  EXPECT_GT(bob.call({"LOCK.CHECK", "turn"}).number("token"), a.number("token"));
  EXPECT_EQ(alice.call({"LOCK.CHECK", "turn"}).error_code(), "LOCK_NOT_HOLDER");

  // A key held by a handle is nobody's turn.
  ASSERT_FALSE(alice.call({"LOCK.TRY", "by-handle", "TTL", "60000"}).is_null());
  EXPECT_EQ(alice.call({"LOCK.CHECK", "by-handle"}).str,
            "LOCK_NOT_HOLDER the key is not held by alice (it is held by a handle, not assigned) "
            "key=by-handle holderId=alice assigned=0");
}

TEST_F(Identity, AFunctionHasNoHolderIdOfItsOwnAndMustNameOne) {
  auto fn = as("fn");
  auto r = fn.call({"LOCK.ASSIGN", "turn"});
  EXPECT_EQ(r.error_code(), "INVALID_ARGUMENT") << r.debug();
  EXPECT_NE(r.str.find("field=holderId"), std::string::npos) << r.str;
  EXPECT_EQ(fn.call({"LOCK.TRANSFER", "turn", "bob"}).error_code(), "INVALID_ARGUMENT");
  EXPECT_EQ(fn.call({"LOCK.CHECK", "turn"}).error_code(), "INVALID_ARGUMENT");
  EXPECT_EQ(fn.call({"LOCK.ASSIGN", "turn", "alice"}).text("holder"), "alice");
  // A function's unassign without a holder id frees whoever holds the key.
  EXPECT_EQ(fn.call({"LOCK.UNASSIGN", "turn"}).number("released"), 1);
}

TEST_F(Identity, RulesSeeTheHolderIdsACallActsOn) {
  ASSERT_FALSE(as("root").call({"RULES.SET", kTurnRules}).is_error());
  auto alice = as("alice");
  auto bob = as("bob");
  const std::string turn = "game:7:turn";

  // A member may only assign to themselves.
  EXPECT_EQ(alice.call({"LOCK.ASSIGN", turn, "bob"}).error_code(), "LOCK_ACCESS_DENIED");
  EXPECT_EQ(alice.call({"LOCK.HOLDER", turn}).number("held"), 0);
  EXPECT_EQ(alice.call({"LOCK.ASSIGN", "lobby"}).error_code(), "LOCK_ACCESS_DENIED");
  ASSERT_EQ(alice.call({"LOCK.ASSIGN", turn}).text("holder"), "alice");

  // Only the current holder may transfer: naming the holder as FROM is refused by the rule,
  // and a transfer from oneself by the server, since bob does not hold the key.
  EXPECT_EQ(bob.call({"LOCK.TRANSFER", turn, "bob", "FROM", "alice"}).error_code(),
            "LOCK_ACCESS_DENIED");
  EXPECT_EQ(bob.call({"LOCK.TRANSFER", turn, "bob"}).error_code(), "LOCK_NOT_HOLDER");
  EXPECT_EQ(as("carol").call({"LOCK.TRANSFER", turn, "carol"}).error_code(), "LOCK_NOT_HOLDER");
  EXPECT_EQ(alice.call({"LOCK.TRANSFER", turn, "bob"}).text("holder"), "bob");

  // Admins pass every rule, and the rule lets referees reassign.
  EXPECT_EQ(as("root").call({"LOCK.TRANSFER", turn, "carol", "FROM", "bob"}).text("holder"),
            "carol");
  EXPECT_EQ(as("dave").call({"LOCK.TRANSFER", turn, "alice", "FROM", "carol"}).text("holder"),
            "alice");

  // Unassign: only one's own assignment.
  EXPECT_EQ(bob.call({"LOCK.UNASSIGN", turn, "alice"}).error_code(), "LOCK_ACCESS_DENIED");
  EXPECT_EQ(bob.call({"LOCK.UNASSIGN", turn}).error_code(), "LOCK_NOT_HOLDER");
  EXPECT_EQ(alice.call({"LOCK.UNASSIGN", turn}).number("released"), 1);
}

TEST_F(Identity, HttpDefaultsToTheCallerAndChecksByPath) {
  auto a = http("alice", "POST", "/v1/locks/assign", R"({"key":"game/1:turn"})");
  ASSERT_EQ(a.status, 200) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("holder").as_string(), "alice");
  const std::int64_t token = a.body.at("token").to_number<std::int64_t>();

  auto mine = http("alice", "GET", "/v1/locks/game%2F1:turn/check");
  ASSERT_EQ(mine.status, 200) << json::serialize(mine.body);
  EXPECT_EQ(mine.body.at("token").to_number<std::int64_t>(), token);
  auto named = http("bob", "GET", "/v1/locks/game%2F1%3Aturn/check?holderId=alice");
  EXPECT_EQ(named.status, 200) << json::serialize(named.body);
  auto theirs = http("bob", "GET", "/v1/locks/game%2F1:turn/check");
  EXPECT_EQ(theirs.status, 409);
  EXPECT_EQ(theirs.body.at("errorCode").as_string(), "LOCK_NOT_HOLDER");
  EXPECT_EQ(theirs.body.at("details").at("holderId").as_string(), "bob");
  EXPECT_EQ(http("bob", "POST", "/v1/locks/game%2F1:turn/check").status, 405);
  EXPECT_EQ(http("bob", "GET", "/v1/locks/game%2F1:turn/check?who=bob").status, 400);

  auto moved = http("alice", "POST", "/v1/locks/transfer", R"({"key":"game/1:turn","toId":"bob"})");
  ASSERT_EQ(moved.status, 200) << json::serialize(moved.body);
  EXPECT_EQ(moved.body.at("holder").as_string(), "bob");
  auto holder = http("carol", "GET", "/v1/locks/holder?key=game/1:turn");
  EXPECT_EQ(holder.body.at("token").to_number<std::int64_t>(),
            moved.body.at("token").to_number<std::int64_t>());
  auto freed = http("bob", "POST", "/v1/locks/unassign", R"({"key":"game/1:turn"})");
  EXPECT_EQ(freed.body.at("released").as_bool(), true) << json::serialize(freed.body);
}

TEST(IdentityOpenMode, WithoutCredentialsHolderIdsMustBeNamed) {
  ServerProcess server;
  auto c = server.client();
  for (const std::vector<std::string>& cmd : {std::vector<std::string>{"LOCK.ASSIGN", "k"},
                                              {"LOCK.ASSIGN", "k", "TTL", "1000"},
                                              {"LOCK.TRANSFER", "k", "b"},
                                              {"LOCK.CHECK", "k"}}) {
    auto r = c.call(cmd);
    EXPECT_EQ(r.error_code(), "INVALID_ARGUMENT") << cmd[1] << " " << r.debug();
    EXPECT_NE(r.str.find("local open mode"), std::string::npos) << r.str;
  }
  EXPECT_EQ(c.call({"LOCK.HOLDER", "k"}).number("held"), 0);
  // A holder literally named like an option is still a holder when the count says so.
  EXPECT_EQ(c.call({"LOCK.ASSIGN", "k", "TTL"}).text("holder"), "TTL");
  EXPECT_EQ(c.call({"LOCK.CHECK", "k", "TTL"}).text("holder"), "TTL");
  // Unassign without a holder id still frees whoever holds the key.
  EXPECT_EQ(c.call({"LOCK.UNASSIGN", "k"}).number("released"), 1);
}

}  // namespace
}  // namespace holdfast::testing
