// Identity-aware holds from the C++ client against a server with credentials: holder ids left
// out mean the connecting user, and as_holder() runs only for the holder the server confirms,
// handing it the hold's fencing token.
#include <gtest/gtest.h>

#include "holdfast/client.h"
#include "support/auth_config.h"
#include "support/server_process.h"

namespace holdfast {
namespace {

using testing::AuthConfig;
using testing::ServerProcess;

class ClientIdentity : public ::testing::Test {
 protected:
  std::string url(const std::string& who) const {
    return "holdfast://:" + who + "-secret@127.0.0.1:" + std::to_string(server.port());
  }

  AuthConfig config;
  ServerProcess server{config.flags()};
  Client alice{url("alice")};
  Client bob{url("bob")};
};

TEST_F(ClientIdentity, AssignTransferAndUnassignDefaultToTheConnectingUser) {
  Assignment a = alice.assign("turn");
  EXPECT_EQ(a.holder, "alice");
  EXPECT_EQ(a.held_by, "user:alice");
  EXPECT_EQ(alice.holder("turn").token, a.token);
  EXPECT_THROW(bob.transfer("turn", "bob"), NotHolderError);
  EXPECT_THROW(bob.unassign("turn"), NotHolderError);
  TransferResult t = alice.transfer("turn", "bob");
  EXPECT_EQ(t.holder, "bob");
  EXPECT_GT(t.token, a.token);
  EXPECT_TRUE(bob.unassign("turn"));
  EXPECT_FALSE(bob.holder("turn").held);
}

TEST_F(ClientIdentity, AsHolderRunsOnlyForTheHolderAndHandsItTheToken) {
  Assignment a = alice.assign("turn");
  EXPECT_EQ(alice.as_holder("turn", [](std::uint64_t token) { return token; }), a.token);
  bool ran = false;
  try {
    bob.as_holder("turn", [&] { ran = true; });
    ADD_FAILURE() << "bob's turn was allowed";
  } catch (const NotHolderError& e) {
    EXPECT_EQ(e.code(), "LOCK_NOT_HOLDER");
    EXPECT_NE(std::string(e.what()).find("not held by bob"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(ran);

  // The turn moves on: the new holder runs with a newer token, the old one no longer runs.
  TransferResult t = alice.transfer("turn", "bob");
  EXPECT_EQ(bob.as_holder("turn", [](std::uint64_t token) { return token; }), t.token);
  EXPECT_THROW(alice.as_holder("turn", [&] { ran = true; }), NotHolderError);
  EXPECT_FALSE(ran);
  // A named holder is checked by the server too.
  EXPECT_EQ(alice.verify_holder("turn", "bob").token, t.token);
  EXPECT_THROW(alice.as_holder("free-key", [&] { ran = true; }), NotHolderError);
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace holdfast
