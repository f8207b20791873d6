// The identity-aware calls (acquireLock, transferLock, releaseLock, getLock) and lockedAs,
// with their refusals, over each transport against a real server.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import {
  LockHeldError,
  LockTimeoutError,
  NotHolderError,
  type HoldfastClient,
} from "@holdfast/client";

import { clientMaker, serverForFile } from "./support/fixtures.js";
import { TRANSPORTS } from "./support/server.js";
import { waitForWaiters } from "./support/wait.js";

const server = serverForFile();

for (const transport of TRANSPORTS) {
  describe(`identity-aware locks over ${transport}`, () => {
    const newClient = clientMaker(server, transport);
    let client: HoldfastClient;
    before(() => {
      client = newClient();
    });
    const key = (name: string) => `${transport}:${name}`;

    test("assign, look up, transfer and release a turn", async () => {
      const turn = key("game:1:turn");
      assert.deepEqual(await client.getLock(turn), { holder: null });

      const a = await client.acquireLock(turn, "white");
      assert.equal(a.key, turn);
      assert.equal(a.holder, "white");
      assert.ok(a.acquiredAt instanceof Date);
      assert.equal(a.expiresAt, null, "no TTL: it never expires");
      assert.ok(a.token > 0);

      const info = await client.getLock(turn);
      assert.equal(info.holder, "white");
      if (info.holder !== null) {
        assert.equal(info.acquiredAt.getTime(), a.acquiredAt.getTime());
        assert.equal(info.expiresAt, null);
        assert.equal(info.token, a.token);
      }

      const again = await client.acquireLock(turn, "white");
      assert.equal(again.token, a.token, "re-assigning to the holder refreshes and keeps the token");

      const moved = await client.transferLock(turn, "black", "white");
      assert.equal(moved.holder, "black");
      assert.ok(moved.token > a.token, "a transfer mints a new token");
      assert.equal((await client.getLock(turn)).holder, "black");

      assert.equal(await client.releaseLock(turn, "black"), true);
      assert.deepEqual(await client.getLock(turn), { holder: null });
      assert.equal(await client.releaseLock(turn), false, "already free");
    });

    test("refusals: held by another, not the holder, timed out", async () => {
      const turn = key("game:2:turn");
      await client.acquireLock(turn, "white");
      await assert.rejects(client.acquireLock(turn, "black"), (e) => e instanceof LockHeldError && e.code === "LOCK_HELD");
      const waited = await client.acquireLock(turn, "black", 100).catch((e: unknown) => e);
      assert.ok(waited instanceof LockTimeoutError);
      assert.equal(waited.key, turn);
      assert.equal(waited.timeoutMs, 100);
      await assert.rejects(
        client.transferLock(turn, "black", "mallory"),
        (e) => e instanceof NotHolderError && e.code === "LOCK_NOT_HOLDER",
      );
      await assert.rejects(client.releaseLock(turn, "mallory"), NotHolderError);
      assert.equal((await client.getLock(turn)).holder, "white", "refusals change nothing");
      assert.equal(await client.releaseLock(turn), true, "without a caller id anyone may release");
    });

    test("a waiting acquireLock gets the turn when it is released", async () => {
      const turn = key("game:3:turn");
      await client.acquireLock(turn, "white");
      const waiting = client.acquireLock(turn, "black", { timeoutMs: 5_000, ttlMs: 60_000 });
      await waitForWaiters(client, turn, 1);  // queued on the server; now free the key
      await client.releaseLock(turn, "white");
      const got = await waiting;
      assert.equal(got.holder, "black");
      assert.ok(got.expiresAt instanceof Date && got.expiresAt.getTime() - got.acquiredAt.getTime() === 60_000);
      await client.releaseLock(turn);
    });

    test("transferLock without from moves the turn from whoever holds it", async () => {
      const turn = key("game:4:turn");
      await assert.rejects(client.transferLock(turn, "black"), NotHolderError, "nobody to move it from");
      await client.acquireLock(turn, "white");
      assert.equal((await client.transferLock(turn, "black")).holder, "black");
      assert.equal((await client.transferLock(turn, "white")).holder, "white");
      await client.releaseLock(turn);
    });

    test("lockedAs lets the holder (or anyone while unassigned) in, and refuses the others", async () => {
      const turn = key("game:5:turn");
      class Game {
        moves: string[] = [];
        caller: { id: string } = { id: "" };

        as(id: string) {
          this.caller = { id };
          return this;
        }

        @client.lockedAs(turn)
        async move(params: { to: string }) {
          this.moves.push(`${this.caller.id}:${params.to}`);
        }
      }
      const game = new Game();
      await game.as("anyone").move({ to: "e4" });  // not assigned yet: not in play
      await client.acquireLock(turn, "white");
      await game.as("white").move({ to: "e5" });
      const refused = await game
        .as("black")
        .move({ to: "d4" })
        .catch((e: unknown) => e);
      assert.ok(refused instanceof NotHolderError);
      assert.equal(refused.message, "Not your turn");
      assert.equal(refused.details.key, turn);
      assert.deepEqual(game.moves, ["anyone:e4", "white:e5"]);
      await client.releaseLock(turn);
    });

    test("lockedAs takes the key from the parameters and the caller from an option", async () => {
      const play = client.lockedAs(`${transport}:table:{tableId}`, {
        callerId: (_self, args) => (args[0] as { player: string }).player,
      })(async (p: { tableId: string; player: string }) => `${p.player} played`);
      await client.acquireLock(`${transport}:table:7`, "ann");
      assert.equal(await play({ tableId: "7", player: "ann" }), "ann played");
      await assert.rejects(play({ tableId: "7", player: "bob" }), NotHolderError);
      assert.equal(await play({ tableId: "8", player: "bob" }), "bob played", "another table is not in play");
      await client.releaseLock(`${transport}:table:7`);
    });
  });
}
