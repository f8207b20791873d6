// `holdfast auth`: the helpers that make the credentials file (docs/auth.md). The hash must be
// SHA-256 itself (checked against the standard's test vector, not against our own code), and a
// token from new-token must work against a server configured with its printed hash.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

// SHA-256("abc"), FIPS 180-2 appendix B.1.
const char* kAbcSha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

struct NewToken {
  std::string token, hash;
};

NewToken new_token() {
  RunResult r = run({HOLDFAST_BIN, "auth", "new-token"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  static const std::regex kLines("token +(hf_[0-9a-f]{64})\ntokenSha256 +([0-9a-f]{64})\n");
  if (!std::regex_match(r.out, m, kLines)) {
    ADD_FAILURE() << "unexpected output: " << r.out;
    return {};
  }
  return {m[1], m[2]};
}

TEST(AuthCli, HashTokenPrintsTheSha256OfTheArgumentOrOfStdin) {
  RunResult arg = run({HOLDFAST_BIN, "auth", "hash-token", "abc"});
  EXPECT_EQ(arg.exit_code, 0) << arg.err;
  EXPECT_EQ(arg.out, std::string(kAbcSha256) + "\n");
  // From stdin, the line ending is not part of the token.
  for (const char* input : {"abc", "abc\n", "abc\r\n"}) {
    RunResult in = run({HOLDFAST_BIN, "auth", "hash-token"}, input);
    EXPECT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.out, std::string(kAbcSha256) + "\n")
        << "stdin " << ::testing::PrintToString(input);
  }
}

TEST(AuthCli, AnEmptyTokenIsAUsageError) {
  RunResult r = run({HOLDFAST_BIN, "auth", "hash-token"}, "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the token is empty"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(AuthCli, NewTokenPrintsAFreshTokenWithTheHashOfIt) {
  NewToken a = new_token();
  NewToken b = new_token();
  EXPECT_NE(a.token, b.token);
  RunResult hashed = run({HOLDFAST_BIN, "auth", "hash-token", a.token});
  EXPECT_EQ(hashed.out, a.hash + "\n");
}

TEST(AuthCli, AServerConfiguredWithTheHashAcceptsTheNewToken) {
  NewToken t = new_token();
  TempDir dir;
  std::ofstream(dir.path() + "/credentials.toml")
      << "[[member]]\nuserId = \"dana\"\nrole = \"member\"\ntokenSha256 = \"" << t.hash << "\"\n";
  std::ofstream(dir.path() + "/holdfast.toml") << "[auth]\ncredentials = \"credentials.toml\"\n";
  ServerProcess server({"--config", dir.path() + "/holdfast.toml"});

  RunResult ok = run({HOLDFAST_BIN, "locks", "acquire", "k", "--ttl", "60000", "--json", "--server",
                      server.url(), "--token", t.token});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"heldBy\":\"user:dana\""), std::string::npos) << ok.out;
  RunResult wrong =
      run({HOLDFAST_BIN, "locks", "status", "k", "--server", server.url(), "--token", t.hash});
  EXPECT_EQ(wrong.exit_code, 3) << "the hash itself is not a token";
}

}  // namespace
}  // namespace holdfast::testing
