// A two-player game whose turn is an identity-aware hold, played by players who sign in.
//
//  1. Each player connects with its own token, so the server knows who calls: a holder id
//     left out is the player's own userId. An admin installs a rule set: a member may only
//     take the turn for themselves, and only the current holder may hand it on.
//  2. White takes the first turn (assign without a holder id). Black's attempts to move, and to
//     take the turn from white, are refused by the server.
//  3. Each player waits for its turn, then moves under as_holder(): the server checks that the
//     turn is the player's (LOCK.CHECK) and hands over the hold's fencing token, and the move
//     is written to the board in PostgreSQL as a fenced update carrying that token. Then the
//     player hands the turn on with transfer(key, other): atomic, and refused if the turn is
//     no longer ours. Whoever takes the last stone unassigns the key: the game is over.
//  4. A move that arrives late, after the turn moved on (a player that stalled between its
//     check and its write), carries an old token: the database refuses it.
//
// The game is Nim with 21 stones: take 1 to 3, whoever takes the last stone wins. Each player
// runs in its own thread with its own client and database connection, as two processes (or
// two web sessions) would.
//
//   example_turn_game --server holdfast://127.0.0.1:7420 --db postgresql://... --game 42
//       --white alice:TOKEN --black bob:TOKEN --admin TOKEN    (one command line)
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "holdfast/client.h"
#include "holdfast/sql/advisory_lock.h"
#include "holdfast/sql/fencing.h"

namespace {

// Members take the turn only for themselves and hand it on only while they hold it.
constexpr const char* kTurnRules = R"toml([ruleSet]
name = "turns"
resourceType = "lock"

[rules.lock]
assign   = "record.key.startsWith('game:') && request.holderId == user.userId"
transfer = "request.fromId == user.userId"
unassign = "has(request.holderId) && request.holderId == user.userId"
)toml";

struct Player {
  std::string user;   // the userId: the player's holder id
  std::string token;  // its bearer token
};

struct Game {
  std::string id;
  std::string turn_key;
  std::string server;  // holdfast://host:port
  std::string db_url;
  std::mutex print;
  std::uint64_t first_token = 0;  // the token of the first move, for the late-move demo
};

std::string url_for(const Game& game, const Player& p) {
  const std::string rest = game.server.substr(game.server.find("://") + 3);
  return "holdfast://" + p.user + ":" + p.token + "@" + rest;
}

// Runs `sql` with $1 = the game id; the first column of its one row.
std::string query_one(PGconn* conn, const char* sql, const std::string& game_id) {
  const char* params[] = {game_id.c_str()};
  PGresult* r = PQexecParams(conn, sql, 1, nullptr, params, nullptr, nullptr, 0);
  const bool ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
  std::string value = ok ? PQgetvalue(r, 0, 0) : "";
  const std::string error = ok ? "" : PQresultErrorMessage(r);
  PQclear(r);
  if (!ok) throw std::runtime_error("query failed: " + error);
  return value;
}

int stones_left(PGconn* db, const Game& game) {
  return std::stoi(query_one(db, "SELECT stones FROM turn_game_boards WHERE id = $1", game.id));
}

holdfast::sql::FencedUpdate move_to(const Game& game, int stones, const std::string& by) {
  return {.schema = std::nullopt,
          .table = "turn_game_boards",
          .key_column = "id",
          .key_value = game.id,
          .fence_column = "fence",
          .set = {{"stones", std::to_string(stones)}, {"last_move_by", by}}};
}

// Waits until the turn is ours (true) or the game is over: the key was freed (false).
bool wait_for_turn(holdfast::Client& client, const Game& game, const std::string& me) {
  for (;;) {
    holdfast::HolderInfo h = client.holder(game.turn_key);
    if (!h.held) return false;
    if (h.holder == me) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void play(Game& game, const Player& me, const Player& other) {
  holdfast::Client client(url_for(game, me));
  holdfast::sql::PgConnection db(game.db_url);
  while (wait_for_turn(client, game, me.user)) {
    const bool won = client.as_holder(game.turn_key, [&](std::uint64_t token) {
      const int left = stones_left(db.get(), game);
      const int take = left % 4 == 0 ? 1 : left % 4;  // leave a multiple of four when possible
      const auto written =
          holdfast::sql::fenced_update(db.get(), move_to(game, left - take, me.user), token);
      std::lock_guard<std::mutex> lock(game.print);
      if (!written.applied()) {
        std::cout << me.user << "'s move was refused by the database" << std::endl;
        return false;
      }
      if (game.first_token == 0) game.first_token = token;
      std::cout << me.user << " takes " << take << ", " << left - take << " left" << std::endl;
      return left - take == 0;
    });
    if (won) {
      client.unassign(game.turn_key);  // our own assignment: the game is over
      return;
    }
    client.transfer(game.turn_key, other.user);  // from us, only while the turn is ours
  }
}

// "alice:TOKEN" -> {alice, TOKEN}
Player player_flag(const std::string& value) {
  const auto colon = value.find(':');
  if (colon == std::string::npos) throw std::invalid_argument("expected USER:TOKEN, not " + value);
  return {value.substr(0, colon), value.substr(colon + 1)};
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags = {{"--server", "holdfast://127.0.0.1:7420"},
                                              {"--game", "42"}};
  for (int i = 1; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  for (const char* needed : {"--db", "--white", "--black", "--admin"}) {
    if (!flags.count(needed)) {
      std::cerr << "usage: example_turn_game --db POSTGRES_URL --white USER:TOKEN --black "
                   "USER:TOKEN --admin TOKEN [--server URL] [--game ID]\n";
      return 2;
    }
  }
  try {
    const Player white = player_flag(flags["--white"]);
    const Player black = player_flag(flags["--black"]);
    Game game;
    game.id = flags["--game"];
    game.turn_key = "game:" + game.id + ":turn";
    game.server = flags["--server"];
    game.db_url = flags["--db"];

    holdfast::sql::PgConnection db(game.db_url);
    PQclear(PQexec(db.get(),
                   "SET client_min_messages = warning;"
                   "CREATE TABLE IF NOT EXISTS turn_game_boards (id text PRIMARY KEY, stones int,"
                   " last_move_by text, fence bigint)"));
    query_one(db.get(),
              "INSERT INTO turn_game_boards VALUES ($1, 21, NULL, NULL) ON CONFLICT (id) DO "
              "UPDATE SET stones = 21, last_move_by = NULL, fence = NULL RETURNING stones",
              game.id);

    holdfast::Client admin(url_for(game, {"", flags["--admin"]}));
    admin.push_rule_set(kTurnRules);

    holdfast::Client white_client(url_for(game, white));
    holdfast::Client black_client(url_for(game, black));
    white_client.assign(game.turn_key);  // no holder id: white's own
    std::cout << white.user << " (white) starts: " << game.turn_key << " is assigned to "
              << white_client.holder(game.turn_key).holder.value_or("nobody") << std::endl;

    // Black tries to move during white's turn: the server refuses, the move does not run.
    try {
      black_client.as_holder(game.turn_key, [] { std::cout << "black moved out of turn!\n"; });
    } catch (const holdfast::NotHolderError& e) {
      std::cout << black.user << " may not move yet: " << e.code() << std::endl;
    }
    // Nor can black take white's turn: the rule lets only the holder hand it on.
    try {
      black_client.transfer(game.turn_key, black.user, white.user);
    } catch (const holdfast::AccessDeniedError& e) {
      std::cout << black.user << " cannot take the turn: " << e.code() << std::endl;
    }

    std::thread white_player(play, std::ref(game), white, black);
    std::thread black_player(play, std::ref(game), black, white);
    white_player.join();
    black_player.join();

    const std::string winner =
        query_one(db.get(), "SELECT last_move_by FROM turn_game_boards WHERE id = $1", game.id);
    std::cout << winner << " wins; " << game.turn_key << " is "
              << (white_client.holder(game.turn_key).held ? "still held" : "free again")
              << std::endl;

    // White's first move, arriving only now (white stalled after its check): its token is
    // older than the board's fence, so the database refuses it.
    const auto late =
        holdfast::sql::fenced_update(db.get(), move_to(game, 21, white.user), game.first_token);
    std::cout << "white's first move, replayed late with its token: "
              << (late.outcome == holdfast::sql::FenceOutcome::kStale ? "refused" : "NOT refused")
              << std::endl;
    admin.delete_rule_set("turns");
    return late.outcome == holdfast::sql::FenceOutcome::kStale ? 0 : 1;
  } catch (const holdfast::Error& e) {
    std::cerr << "turn_game: " << e.code() << ": " << e.what() << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "turn_game: " << e.what() << std::endl;
    return 1;
  }
}
