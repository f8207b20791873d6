#include "auth/credentials.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace holdfast {
namespace {

std::string entry_hash(const std::string& token) { return to_hex(sha256(token)); }

std::string sample() {
  return "[[member]]\nuserId = \"alice\"\nrole = \"member\"\ngroups = [\"ops/core\", "
         "\"team/red\"]\ntokenSha256 = \"" +
         entry_hash("alice-token") +
         "\"\n\n[[member]]\nuserId = \"root\"\nrole = \"admin\"\ntokenSha256 = \"" +
         entry_hash("root-token") + "\"\n\n[[function]]\nname = \"importer\"\ntokenSha256 = \"" +
         entry_hash("fn-token") + "\"\n";
}

TEST(Sha256, KnownVector) {
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(parse_sha256_hex(to_hex(sha256("abc"))), sha256("abc"));
  EXPECT_FALSE(parse_sha256_hex("abc").has_value());
  EXPECT_FALSE(parse_sha256_hex(std::string(64, 'g')).has_value());
}

TEST(Credentials, ParsesMembersWithRolesAndGroupsAndFunctions) {
  auto creds = parse_credentials(sample(), "creds.toml");
  ASSERT_TRUE(creds.ok()) << creds.error().message;
  ASSERT_EQ(creds->size(), 3u);
  const Principal& alice = (*creds)[0].principal;
  EXPECT_EQ(alice.held_by(), "user:alice");
  EXPECT_EQ(alice.role, Role::kMember);
  EXPECT_TRUE(alice.is_member_of("ops", "core"));
  EXPECT_FALSE(alice.is_member_of("ops", "red"));
  EXPECT_EQ((*creds)[1].principal.role, Role::kAdmin);
  EXPECT_EQ((*creds)[2].principal.held_by(), "function:importer");
  EXPECT_TRUE((*creds)[2].principal.is_function());
}

TEST(Credentials, MistakesAreNamed) {
  const std::string h = entry_hash("t");
  struct Case {
    std::string text, message;
  } cases[] = {
      {"[[member]]\nrole = \"member\"\ntokenSha256 = \"" + h + "\"\n", "userId is required"},
      {"[[member]]\nuserId = \"a\"\nrole = \"boss\"\ntokenSha256 = \"" + h + "\"\n",
       "role must be member, admin or owner"},
      {"[[member]]\nuserId = \"a\"\ntokenSha256 = \"xyz\"\n", "tokenSha256 must be 64 hex digits"},
      {"[[member]]\nuserId = \"a\"\n", "tokenSha256 or certCommonName is required"},
      {"[[member]]\nuserId = \"a\"\ngroups = [\"nogroup\"]\ntokenSha256 = \"" + h + "\"\n",
       "\"type/id\""},
      {"[[member]]\nuserId = \"a\"\ntoken = \"plain\"\ntokenSha256 = \"" + h + "\"\n",
       "unknown key 'token'"},
      {"[[member]]\nuserId = \"a\"\ntokenSha256 = \"" + h +
           "\"\n[[member]]\nuserId = \"a\"\ntokenSha256 = \"" + entry_hash("u") + "\"\n",
       "listed twice"},
      {"[[member]]\nuserId = \"a\"\ntokenSha256 = \"" + h +
           "\"\n[[function]]\nname = \"f\"\ntokenSha256 = \"" + h + "\"\n",
       "reuses another entry's token"},
      {"[[member]]\nuserId = \"a\"\ncertCommonName = \"\"\n",
       "certCommonName must be a non-empty string"},
      {"[[member]]\nuserId = \"a\"\ncertCommonName = 7\n",
       "certCommonName must be a non-empty string"},
      {"[[member]]\nuserId = \"a\"\ncertCommonName = \"svc\"\n[[function]]\nname = "
       "\"f\"\ncertCommonName = \"svc\"\n",
       "function f reuses another entry's certCommonName \"svc\""},
      {"[[robot]]\nname = \"x\"\n", "unknown table 'robot'"},
      {"[[member]\n", "creds.toml: 1:"},
  };
  for (const auto& c : cases) {
    auto r = parse_credentials(c.text, "creds.toml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

class Store : public ::testing::Test {
 protected:
  std::string path =
      (std::filesystem::temp_directory_path() / ("creds-" + std::to_string(::getpid()) + ".toml"))
          .string();
  void write(const std::string& text) { std::ofstream(path) << text; }
  void TearDown() override { std::filesystem::remove(path); }
};

TEST_F(Store, AuthenticatesByTokenAndOptionalUserName) {
  write(sample());
  auto store = CredentialStore::open(path);
  ASSERT_TRUE(store.ok());
  auto& s = **store;
  EXPECT_EQ(s.authenticate(std::nullopt, "alice-token")->id, "alice");
  EXPECT_EQ(s.authenticate("alice", "alice-token")->id, "alice");
  EXPECT_FALSE(s.authenticate("root", "alice-token").has_value());
  EXPECT_FALSE(s.authenticate(std::nullopt, "wrong").has_value());
  EXPECT_FALSE(s.authenticate(std::nullopt, "").has_value());
  EXPECT_TRUE(s.authenticate("importer", "fn-token")->is_function());
}

TEST_F(Store, ReloadSwapsCredentialsAndKeepsTheOldOnesOnError) {
  write(sample());
  auto store = CredentialStore::open(path);
  ASSERT_TRUE(store.ok());
  write("[[member]]\nuserId = \"bob\"\ntokenSha256 = \"" + entry_hash("bob-token") + "\"\n");
  ASSERT_TRUE((*store)->reload().ok());
  EXPECT_FALSE((*store)->authenticate(std::nullopt, "alice-token").has_value());
  EXPECT_EQ((*store)->authenticate(std::nullopt, "bob-token")->id, "bob");
  write("[[member]]\nuserId = 7\n");
  EXPECT_FALSE((*store)->reload().ok());
  EXPECT_EQ((*store)->authenticate(std::nullopt, "bob-token")->id, "bob");
}

TEST_F(Store, AuthenticatesByCertificateCommonNameBesideTokens) {
  // One member by certificate only, one function by both, one member by token only.
  write(
      "[[member]]\nuserId = \"carol\"\nrole = \"admin\"\ncertCommonName = \"carol.example\"\n"
      "[[function]]\nname = \"billing\"\ncertCommonName = \"billing-svc\"\ntokenSha256 = \"" +
      entry_hash("billing-token") + "\"\n[[member]]\nuserId = \"dave\"\ntokenSha256 = \"" +
      entry_hash("dave-token") + "\"\n");
  auto store = CredentialStore::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto& s = **store;
  auto carol = s.authenticate_certificate("carol.example");
  ASSERT_TRUE(carol.has_value());
  EXPECT_EQ(carol->held_by(), "user:carol");
  EXPECT_EQ(carol->role, Role::kAdmin);
  EXPECT_EQ(s.authenticate_certificate("billing-svc")->held_by(), "function:billing");
  EXPECT_EQ(s.authenticate(std::nullopt, "billing-token")->held_by(), "function:billing");
  // A name no entry carries, a case that differs, and nothing: no caller.
  EXPECT_FALSE(s.authenticate_certificate("dave").has_value());
  EXPECT_FALSE(s.authenticate_certificate("Carol.example").has_value());
  EXPECT_FALSE(s.authenticate_certificate("").has_value());
  // An entry without a token is never matched by a token, the empty one included.
  EXPECT_FALSE(s.authenticate("carol", "").has_value());
  EXPECT_EQ(s.authenticate(std::nullopt, "dave-token")->id, "dave");
}

TEST(CredentialStoreOpen, AMissingFileIsAnError) {
  auto r = CredentialStore::open("/nonexistent/creds.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/creds.toml"), std::string::npos);
}

}  // namespace
}  // namespace holdfast
