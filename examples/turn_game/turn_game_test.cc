// Runs the turn-taking example against a real server with credentials and a throw-away
// PostgreSQL: the whole game, turns alternating, out-of-turn attempts refused by the server,
// and a late move refused by the database's fence.
#include <gtest/gtest.h>

#include <fstream>

#include "auth/credentials.h"
#include "support/postgres.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

std::vector<std::string> auth_flags(const TempDir& dir) {
  auto hash = [](const std::string& t) { return to_hex(sha256(t)); };
  std::ofstream(dir.path() + "/credentials.toml")
      << "[[member]]\nuserId = \"alice\"\ntokenSha256 = \"" << hash("alice-secret")
      << "\"\n[[member]]\nuserId = \"bob\"\ntokenSha256 = \"" << hash("bob-secret")
      << "\"\n[[member]]\nuserId = \"root\"\nrole = \"admin\"\ntokenSha256 = \""
      << hash("root-secret") << "\"\n";
  std::ofstream(dir.path() + "/holdfast.toml") << "[auth]\ncredentials = \"credentials.toml\"\n";
  return {"--config", dir.path() + "/holdfast.toml"};
}

TEST(TurnGameExample, SignedInPlayersAlternateAndStaleMovesAreRefused) {
  TestPostgres postgres;
  TempDir config;
  ServerProcess server(auth_flags(config));
  RunResult r =
      run({EXAMPLE_BIN, "--server", server.url(), "--db", postgres.url(), "--game", "7", "--white",
           "alice:alice-secret", "--black", "bob:bob-secret", "--admin", "root-secret"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "alice (white) starts: game:7:turn is assigned to alice\n"
            "bob may not move yet: LOCK_NOT_HOLDER\n"
            "bob cannot take the turn: LOCK_ACCESS_DENIED\n"
            "alice takes 1, 20 left\n"
            "bob takes 1, 19 left\n"
            "alice takes 3, 16 left\n"
            "bob takes 1, 15 left\n"
            "alice takes 3, 12 left\n"
            "bob takes 1, 11 left\n"
            "alice takes 3, 8 left\n"
            "bob takes 1, 7 left\n"
            "alice takes 3, 4 left\n"
            "bob takes 1, 3 left\n"
            "alice takes 3, 0 left\n"
            "alice wins; game:7:turn is free again\n"
            "white's first move, replayed late with its token: refused\n");
  auto c = server.client();
  ASSERT_EQ(c.call({"AUTH", "root-secret"}).str, "OK");
  EXPECT_EQ(c.call({"LOCK.HOLDER", "game:7:turn"}).number("held"), 0);
  EXPECT_EQ(sql_value(postgres.url(), "SELECT stones FROM turn_game_boards WHERE id = '7'"), "0");
}

}  // namespace
}  // namespace holdfast::testing
