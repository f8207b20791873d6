// A two-player game whose turn is an identity-aware hold.
//
//  1. The game assigns the key game:<id>:turn to the first player ("white").
//  2. Each player waits for its turn (the key is assigned to it), makes a move, and hands the
//     turn on with transfer(key, other, me): atomic, and refused if the turn is no longer ours.
//  3. A move is guarded by as_holder(): out of turn it throws NotHolderError without moving.
//  4. At the end the game unassigns the key.
//
// The game is Nim with 21 stones: take 1 to 3, whoever takes the last stone wins. Each player
// runs in its own thread with its own client, as two processes (or two web sessions) would.
//
//   example_turn_game [--server holdfast://127.0.0.1:7420] [--game 42]
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "holdfast/client.h"

namespace {

struct Game {
  std::string turn_key;
  std::atomic<int> stones{21};
  std::mutex print;
  std::string winner;
};

// Waits until the turn is ours or the game is over.
bool wait_for_turn(holdfast::Client& client, Game& game, const std::string& me) {
  for (;;) {
    if (game.stones.load() == 0) return false;
    holdfast::HolderInfo h = client.holder(game.turn_key);
    if (h.holder && *h.holder == me) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void play(const std::string& server, Game& game, const std::string& me, const std::string& other) {
  holdfast::Client client(server);
  while (wait_for_turn(client, game, me)) {
    client.as_holder(game.turn_key, me, [&] {
      const int left = game.stones.load();
      const int take = left % 4 == 0 ? 1 : left % 4;  // leave a multiple of four when possible
      game.stones = left - take;
      std::lock_guard<std::mutex> lock(game.print);
      std::cout << me << " takes " << take << ", " << game.stones.load() << " left" << std::endl;
      if (game.stones.load() == 0) game.winner = me;
    });
    client.transfer(game.turn_key, other, me);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string server = "holdfast://127.0.0.1:7420";
  std::string id = "42";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--server") server = argv[i + 1];
    if (flag == "--game") id = argv[i + 1];
  }
  try {
    holdfast::Client referee(server);
    Game game;
    game.turn_key = "game:" + id + ":turn";
    referee.assign(game.turn_key, "white");
    std::cout << "white starts (" << game.turn_key << " is assigned to white)" << std::endl;

    // Black tries to move during white's turn: the guard refuses without running the move.
    try {
      referee.as_holder(game.turn_key, "black",
                        [] { std::cout << "black moved out of turn!" << std::endl; });
    } catch (const holdfast::NotHolderError& e) {
      std::cout << "black may not move yet: " << e.code() << std::endl;
    }
    // Nor can black hand white's turn on: transfer is conditional on the current holder.
    try {
      referee.transfer(game.turn_key, "black", "black");
    } catch (const holdfast::NotHolderError& e) {
      std::cout << "black cannot take the turn: " << e.code() << std::endl;
    }

    std::thread white(play, server, std::ref(game), "white", "black");
    std::thread black(play, server, std::ref(game), "black", "white");
    white.join();
    black.join();
    referee.unassign(game.turn_key);
    std::cout << game.winner << " wins; " << game.turn_key << " is free again" << std::endl;
    return 0;
  } catch (const holdfast::Error& e) {
    std::cerr << "turn_game: " << e.code() << ": " << e.what() << std::endl;
    return 1;
  }
}
