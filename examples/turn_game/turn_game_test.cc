// Runs the turn-taking example against a real server: the whole game, turns alternating.
#include <gtest/gtest.h>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

TEST(TurnGameExample, PlayersAlternateAndAnOutOfTurnMoveIsRefused) {
  ServerProcess server;
  RunResult r = run({EXAMPLE_BIN, "--server", server.url(), "--game", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "white starts (game:7:turn is assigned to white)\n"
            "black may not move yet: LOCK_NOT_HOLDER\n"
            "black cannot take the turn: LOCK_NOT_HOLDER\n"
            "white takes 1, 20 left\n"
            "black takes 1, 19 left\n"
            "white takes 3, 16 left\n"
            "black takes 1, 15 left\n"
            "white takes 3, 12 left\n"
            "black takes 1, 11 left\n"
            "white takes 3, 8 left\n"
            "black takes 1, 7 left\n"
            "white takes 3, 4 left\n"
            "black takes 1, 3 left\n"
            "white takes 3, 0 left\n"
            "white wins; game:7:turn is free again\n");
  EXPECT_EQ(server.client().call({"LOCK.HOLDER", "game:7:turn"}).number("held"), 0);
}

}  // namespace
}  // namespace holdfast::testing
