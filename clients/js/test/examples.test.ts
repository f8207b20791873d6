// The examples in examples/ (the lease-lock uses of a web back end, the kanban board and the
// turn-based game) run against a real server over each transport.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import { NotHolderError, type HoldfastClient } from "@holdfast/client";

import { defineChess } from "../examples/chess.js";
import { TaskStore, defineBoards } from "../examples/kanban.js";
import { describeLock, refreshCache, runJobSlice, startPortfolioImport } from "../examples/portfolio_import.js";
import { clientMaker, serverForFile } from "./support/fixtures.js";
import { TRANSPORTS } from "./support/server.js";
import { waitForWaiters } from "./support/wait.js";

const server = serverForFile();

for (const transport of TRANSPORTS) {
  describe(`examples over ${transport}`, () => {
    const newClient = clientMaker(server, transport);
    let client: HoldfastClient;
    let other: HoldfastClient;
    before(() => {
      client = newClient();
      other = newClient();
    });
    const user = (name: string) => `${transport}-${name}`;

    test("a portfolio import runs once; an import that cannot get the key reports started: false", async () => {
      const userId = user("u1");
      let imports = 0;
      const rows = async () => {
        imports += 1;
      };
      assert.deepEqual(await startPortfolioImport(client, userId, rows), { started: true });
      assert.equal(imports, 1);
      assert.equal((await client.locks.status(`portfolio-import:${userId}`)).held, false, "released after the import");

      const running = await other.locks.acquire(`portfolio-import:${userId}`, { ttlMs: 60_000, timeoutMs: 0 });
      const second = startPortfolioImport(client, userId, rows);
      // The second import waits in the queue; when the running one finishes it goes ahead.
      await waitForWaiters(other, `portfolio-import:${userId}`, 1);
      assert.equal(imports, 1);
      await other.locks.release(running);
      assert.deepEqual(await second, { started: true });
      assert.equal(imports, 2);
    });

    test("an import whose key stays held past the wait gives up without importing", async () => {
      const userId = user("u2");
      const running = await other.locks.acquire(`portfolio-import:${userId}`, { ttlMs: 60_000, timeoutMs: 0 });
      let imports = 0;
      const outcome = await startPortfolioImport(
        client,
        userId,
        async () => {
          imports += 1;
        },
        200,
      );
      assert.deepEqual(outcome, { started: false });
      assert.equal(imports, 0);
      await other.locks.release(running);
    });

    test("a cache refresh is skipped while another holds its key", async () => {
      const userId = user("u3");
      let refreshes = 0;
      const refresh = async () => {
        refreshes += 1;
        // A second refresh started from inside the first finds the key taken.
        assert.equal(await refreshCache(other, userId, async () => void (refreshes += 100)), false);
      };
      assert.equal(await refreshCache(client, userId, refresh), true);
      assert.equal(refreshes, 1);
    });

    test("describing a lock: holder and expiry, or free", async () => {
      const key = `${transport}:report`;
      assert.equal(await describeLock(client, key), "free");
      const h = await client.locks.acquire(key, { ttlMs: 60_000, timeoutMs: 0 });
      assert.equal(await describeLock(client, key), `held by user:local, lease expires ${h.leaseExpiresAt.toISOString()}`);
      await client.locks.release(h);
    });

    test("a restarted job run takes its own lease back; another run cannot", async () => {
      const key = `${transport}:jobs:nightly`;
      // The first attempt of run-7 took the key and then vanished without releasing it.
      await other.locks.acquire(key, { ttlMs: 60_000, timeoutMs: 0, owner: "run-7" });
      assert.deepEqual(await runJobSlice(client, key, "run-8", async () => {}), { ran: false, retook: false });
      let sliced = false;
      assert.deepEqual(await runJobSlice(client, key, "run-7", async () => void (sliced = true)), { ran: true, retook: true });
      assert.equal(sliced, true);
      assert.equal((await client.locks.status(key)).held, false);
    });

    for (const form of ["Board", "DeclaredBoard"] as const) {
      test(`kanban ${form}: concurrent moves of one task are applied one after the other`, async () => {
        const boards = defineBoards(client);
        const store = new TaskStore();
        const taskId = `${transport}-${form}-t1`;
        store.add({ id: taskId, column: "todo", history: [] });
        // Two board instances, as two replicas of a service would be.
        const a = new boards[form](store);
        const b = new boards[form](store);
        const columns = ["doing", "review", "done", "doing", "done", "review"];
        await Promise.all(columns.map((column, i) => (i % 2 ? a : b).moveTask({ taskId, column })));
        const task = await store.load(taskId);
        // Every move read the state the previous one saved: none was lost.
        assert.equal(task.history.length, columns.length);
        assert.equal(task.column, task.history.at(-1));
        assert.deepEqual([...task.history].sort(), [...columns].sort());
        if (form === "DeclaredBoard") assert.ok(task.updatedAt instanceof Date);
      });
    }

    test("kanban without the lock loses moves (the store really interleaves)", async () => {
      const store = new TaskStore();
      store.add({ id: "t", column: "todo", history: [] });
      const unlocked = async (column: string) => {
        const task = await store.load("t");
        task.history.push(column);
        await store.save(task);
      };
      await Promise.all(["a", "b", "c", "d"].map(unlocked));
      assert.ok((await store.load("t")).history.length < 4);
    });

    test("the turn game: only the player whose turn it is may move, and each move passes the turn", async () => {
      const turnKey = `${transport}:game:1:turn`;
      const Chess = defineChess(client, turnKey);
      const game = new Chess();
      assert.deepEqual(await game.as("ann").join(), { color: "white" });
      assert.deepEqual(await game.as("ben").join(), { color: "black" });
      assert.deepEqual(await game.as("cat").join(), { error: "Game full" });
      assert.equal((await client.getLock(turnKey)).holder, "ann");

      await assert.rejects(game.as("ben").move({ from: "e7", to: "e5" }), (e) => e instanceof NotHolderError && e.message === "Not your turn");
      assert.deepEqual(await game.as("ann").move({ from: "e2", to: "e4" }), {
        board: { moves: ["e2-e4"], players: { white: "ann", black: "ben" }, turn: "black" },
        turn: "black",
      });
      assert.equal((await client.getLock(turnKey)).holder, "ben");
      await assert.rejects(game.as("ann").move({ from: "d2", to: "d4" }), NotHolderError);
      await assert.rejects(game.as("cat").move({ from: "a7", to: "a6" }), NotHolderError, "spectators cannot move");
      await game.as("ben").move({ from: "e7", to: "e5" });
      assert.equal((await client.getLock(turnKey)).holder, "ann");
      assert.deepEqual(game.as("cat").board().moves, ["e2-e4", "e7-e5"], "anyone may look");
      await client.releaseLock(turnKey);
    });
  });
}
