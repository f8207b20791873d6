// A two-player game whose turn is an identity-aware lock: the turn belongs to a player id,
// only that player's moves go through ("Not your turn" for anyone else), and each move hands
// the turn to the opponent. Spectators may look at the board at any time.
import type { HoldfastClient } from "@holdfast/client";

type Color = "white" | "black";

export function defineChess(client: HoldfastClient, turnKey: string) {
  class Chess {
    /** Who is calling; the application's authentication sets it for each request. */
    caller: { id: string } = { id: "" };
    players: Partial<Record<Color, string>> = {};
    turn: Color = "white";
    moves: string[] = [];

    /** The application's way of saying who makes the next call. */
    as(callerId: string): this {
      this.caller = { id: callerId };
      return this;
    }

    async join(): Promise<{ color: Color } | { error: string }> {
      const slot: Color | null = !this.players.white ? "white" : !this.players.black ? "black" : null;
      if (!slot) return { error: "Game full" };
      this.players[slot] = this.caller.id;
      // With both seats taken the game is on: white moves first.
      if (slot === "black") await client.acquireLock(turnKey, this.players.white!);
      return { color: slot };
    }

    @client.lockedAs(turnKey)
    async move(params: { from: string; to: string }) {
      this.moves.push(`${params.from}-${params.to}`);
      this.turn = this.turn === "white" ? "black" : "white";
      await client.transferLock(turnKey, this.players[this.turn]!);
      return { board: this.board(), turn: this.turn };
    }

    // No lock: anyone may look, players and spectators alike.
    board() {
      return { moves: [...this.moves], players: { ...this.players }, turn: this.turn };
    }
  }
  return Chess;
}
