// Several keys at once over each transport against a real server: acquireAll and
// tryAcquireAll take every key or none, as one group with one handle that renews and releases
// all of them, and withLocks runs a function while holding the group. A node over PostgreSQL
// keeps no place in the queues for a waiting group, so what that place promises is checked on
// the embedded store only.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import { InvalidArgumentError, LeaseLostError, LockTimeoutError, type HoldfastClient } from "@holdfast/client";

import { clientMaker, serverForFile } from "./support/fixtures.js";
import { TRANSPORTS } from "./support/server.js";
import { waitFor, waitForWaiters } from "./support/wait.js";

const server = serverForFile();
const overPostgres = Boolean(process.env.HOLDFAST_TEST_STORE_URL);

for (const transport of TRANSPORTS) {
  describe(`several keys at once over ${transport}`, () => {
    const newClient = clientMaker(server, transport);
    let client: HoldfastClient;
    let other: HoldfastClient;
    before(() => {
      client = newClient();
      other = newClient();
    });
    const key = (name: string) => `${transport}:group:${name}`;
    const heldKeys = async (...names: string[]) =>
      Promise.all(names.map(async (n) => (await other.locks.status(key(n))).held));

    test("acquireAll answers one group: a hold per key in key order, each in its own mode", async () => {
      const g = await client.locks.acquireAll(
        [key("b"), { key: key("a"), mode: "shared" }, { key: key("pool"), permits: 3, take: 2 }],
        { ttlMs: 30_000, timeoutMs: 1_000, owner: "batch-1" },
      );
      assert.deepEqual(
        g.holds.map((h) => [h.key, h.mode, h.permits, h.take]),
        [
          [key("a"), "shared", null, null],
          [key("b"), "exclusive", null, null],
          [key("pool"), "semaphore", 3, 2],
        ],
      );
      assert.ok(g.holds.every((h) => h.handle === g.handle && h.leaseExpiresAt.getTime() === g.leaseExpiresAt.getTime()));
      assert.ok(g.holds.every((h) => h.owner === "batch-1"));
      const tokens = g.holds.map((h) => h.token);
      assert.deepEqual([...tokens].sort((x, y) => x - y), tokens, "tokens in key order");
      assert.equal(new Set(tokens).size, 3);

      const a = await other.locks.status(key("a"));
      assert.equal(a.held && a.mode, "shared");
      assert.equal(a.held && a.token, g.holds[0]!.token);

      const renewed = await client.locks.renew(g, { ttlMs: 120_000 });
      assert.equal(renewed.renewed, true);
      for (const name of ["a", "b", "pool"]) {
        const s = await other.locks.status(key(name));
        assert.ok(s.held && s.leaseExpiresAt!.getTime() > g.leaseExpiresAt.getTime() + 60_000, `${name} renewed with the group`);
      }

      assert.deepEqual(await client.locks.release(g), { released: true });
      assert.deepEqual(await heldKeys("a", "b", "pool"), [false, false, false]);
      assert.deepEqual(await client.locks.release(g), { released: false, reason: "not_holder" });
      assert.deepEqual(await client.locks.renew(g, { ttlMs: 1_000 }), { renewed: false, reason: "lease_lost" });
    });

    test("the hold of any one key, with the group's handle, releases the whole group", async () => {
      const g = await client.locks.acquireAll([key("c"), key("d")], { ttlMs: 30_000, timeoutMs: 0 });
      const stored = JSON.parse(JSON.stringify(g.holds[1])) as { key: string; handle: string };
      assert.deepEqual(await other.locks.release(stored), { released: true });
      assert.deepEqual(await heldKeys("c", "d"), [false, false]);
    });

    test("all or nothing: one busy key and no key is taken", async () => {
      const busy = await other.locks.acquire(key("y"), { ttlMs: 30_000, timeoutMs: 0 });
      assert.equal(await client.locks.tryAcquireAll([key("x"), key("y")], { ttlMs: 30_000 }), null);
      assert.deepEqual(await heldKeys("x"), [false], "x was not taken alone");

      const e = await client.locks
        .acquireAll([key("y"), key("x")], { ttlMs: 30_000, timeoutMs: 150 })
        .then(() => assert.fail("granted"), (err: unknown) => err);
      assert.ok(e instanceof LockTimeoutError, String(e));
      assert.equal(e.key, key("x"), "named by the first key in key order");
      assert.equal(e.timeoutMs, 150);
      assert.deepEqual(await heldKeys("x"), [false]);

      // A shared group fits beside a shared hold, not beside an exclusive one.
      await other.locks.release(busy);
      const reader = await other.locks.tryAcquire(key("y"), { ttlMs: 30_000, mode: "shared" });
      assert.ok(reader);
      assert.equal(await client.locks.tryAcquireAll([key("x"), key("y")], { ttlMs: 30_000 }), null);
      const g = await client.locks.tryAcquireAll([key("x"), { key: key("y"), mode: "shared" }], { ttlMs: 30_000 });
      assert.ok(g, "every key fits");
      await client.locks.release(g);
      await other.locks.release(reader);
    });

    test("a waiting group is granted once its last busy key frees", async () => {
      const busy = await other.locks.acquire(key("w2"), { ttlMs: 30_000, timeoutMs: 0 });
      const waiting = client.locks.acquireAll([key("w1"), key("w2")], { ttlMs: 30_000, timeoutMs: 10_000 });
      await waitForWaiters(other, key("w2"), 1);
      if (!overPostgres) {
        // It waits in w1's queue too, so a later request does not take w1 meanwhile.
        assert.equal((await other.locks.status(key("w1"))).waiters, 1);
        assert.equal(await other.locks.tryAcquire(key("w1"), { ttlMs: 30_000 }), null);
      }
      await other.locks.release(busy);
      const g = await waiting;
      assert.deepEqual(
        g.holds.map((h) => h.key),
        [key("w1"), key("w2")],
      );
      assert.ok(g.holds[1]!.token > busy.token);
      await client.locks.release(g);
    });

    test("withLocks runs fn holding every key, with a token per key, and releases the group", async () => {
      const result = await client.withLocks([key("from"), key("to")], async (ctx) => {
        assert.deepEqual(ctx.keys, [key("from"), key("to")]);
        assert.ok(ctx.group);
        for (const name of ["from", "to"]) {
          const s = await other.locks.status(key(name));
          assert.equal(s.held && s.token, ctx.token(key(name)));
        }
        assert.throws(() => ctx.token(key("elsewhere")), InvalidArgumentError);
        return "moved";
      });
      assert.equal(result, "moved");
      assert.deepEqual(await heldKeys("from", "to"), [false, false]);

      const boom = new Error("boom");
      await assert.rejects(
        client.withLocks([key("from"), { key: key("to"), mode: "shared" }], () => {
          throw boom;
        }),
        (e) => e === boom,
      );
      assert.deepEqual(await heldKeys("from", "to"), [false, false], "released when fn throws");
    });

    test("withLocks renews the group while fn runs, and ends in LockTimeoutError when a key stays busy", async () => {
      const ttlMs = 1_000;
      await client.withLocks(
        [key("r1"), key("r2")],
        async (ctx) => {
          const first = ctx.group!.leaseExpiresAt.getTime();
          // The work outlasts one lease: until renewals every ttl/3 have moved both keys' expiry
          // by a whole TTL (a wait for them, not a sleep that a busy machine could outrun).
          await waitFor("the group to be renewed past its first end", async () => {
            const held = await Promise.all(["r1", "r2"].map((name) => other.locks.status(key(name))));
            return held.every((s) => s.held && s.leaseExpiresAt!.getTime() >= first + ttlMs);
          });
          assert.equal(ctx.signal.aborted, false, String(ctx.signal.reason instanceof LeaseLostError && ctx.signal.reason.message));
          for (const name of ["r1", "r2"]) {
            const s = await other.locks.status(key(name));
            assert.ok(s.held && s.token === ctx.token(key(name)), `${name} is the same hold`);
          }
        },
        { ttlMs, timeoutMs: 1_000 },
      );

      const busy = await other.locks.acquire(key("r2"), { ttlMs: 30_000, timeoutMs: 0 });
      let ran = false;
      const e = await client
        .withLocks([key("r1"), key("r2")], () => (ran = true), { timeoutMs: 100 })
        .catch((err: unknown) => err);
      assert.ok(e instanceof LockTimeoutError, String(e));
      assert.equal(ran, false);
      await other.locks.release(busy);
    });

    test("bad key lists are refused and change nothing", async () => {
      const refusal = async (p: Promise<unknown>) =>
        p.then(
          () => assert.fail("accepted"),
          (e: unknown) => {
            assert.ok(e instanceof InvalidArgumentError, String(e));
            return e;
          },
        );
      let e = await refusal(client.locks.tryAcquireAll(key("k") as never, { ttlMs: 1_000 }));
      assert.equal(e.details.field, "keys");
      e = await refusal(client.locks.tryAcquireAll([key("k"), { key: "" }], { ttlMs: 1_000 }));
      assert.equal(e.details.field, "keys[1]");
      e = await refusal(client.locks.acquireAll([{ key: key("k"), mode: "readers" as never }], { ttlMs: 1_000, timeoutMs: 0 }));
      assert.equal(e.details.field, "keys[0].mode");
      // Checked by the server:
      e = await refusal(client.locks.tryAcquireAll([key("k"), key("k")], { ttlMs: 1_000 }));
      assert.equal(e.details.key, key("k"));
      await refusal(client.locks.tryAcquireAll([], { ttlMs: 1_000 }));
      await refusal(client.locks.tryAcquireAll([key("k"), { key: key("j"), permits: 2, take: 3 }], { ttlMs: 1_000 }));
      assert.deepEqual(await heldKeys("k", "j"), [false, false], "nothing changed");
    });
  });
}
