// Lock kinds over each transport against a real server: shared holds beside each other and
// not beside a writer, a semaphore's permits, and the lock-delay that keeps a key closed after
// a hold vanished.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import { InvalidArgumentError, type HoldfastClient, type LockHandle } from "@holdfast/client";

import { clientMaker, serverForFile } from "./support/fixtures.js";
import { TRANSPORTS } from "./support/server.js";
import { waitFor, waitForWaiters } from "./support/wait.js";

const server = serverForFile();

async function refusal(p: Promise<unknown>, field?: string): Promise<InvalidArgumentError> {
  return p.then(
    () => assert.fail("accepted"),
    (e: unknown) => {
      assert.ok(e instanceof InvalidArgumentError, String(e));
      if (field !== undefined) assert.equal(e.details.field, field, e.message);
      return e;
    },
  );
}

for (const transport of TRANSPORTS) {
  describe(`lock kinds over ${transport}`, () => {
    const newClient = clientMaker(server, transport);
    let client: HoldfastClient;
    let other: HoldfastClient;
    before(() => {
      client = newClient();
      other = newClient();
    });
    const key = (name: string) => `${transport}:kinds:${name}`;

    test("shared holds coexist, each with its own handle; a writer waits for all of them", async () => {
      const a = await client.locks.tryAcquire(key("catalog"), { ttlMs: 30_000, mode: "shared" });
      const b = await other.locks.tryAcquire(key("catalog"), { ttlMs: 30_000, mode: "shared" });
      assert.ok(a && b, "two readers hold the key together");
      assert.equal(a.mode, "shared");
      assert.equal(b.mode, "shared");
      assert.equal(a.permits, null);
      assert.notEqual(a.handle, b.handle);
      assert.ok(b.token > a.token);
      assert.equal(await other.locks.tryAcquire(key("catalog"), { ttlMs: 30_000 }), null, "no writer beside readers");

      const s = await client.locks.status(key("catalog"));
      assert.ok(s.held);
      assert.equal(s.mode, "shared");
      assert.deepEqual(
        s.holders.map((h) => [h.token, h.mode]),
        [
          [a.token, "shared"],
          [b.token, "shared"],
        ],
      );
      assert.equal(s.permits, null);
      assert.equal("handle" in s.holders[0]!, false);

      const writer = newClient().locks.acquire(key("catalog"), { ttlMs: 30_000, timeoutMs: 10_000, mode: "exclusive" });
      await waitForWaiters(client, key("catalog"), 1);
      assert.equal(
        await newClient().locks.tryAcquire(key("catalog"), { ttlMs: 30_000, mode: "shared" }),
        null,
        "a reader does not pass a waiting writer",
      );
      assert.deepEqual(await client.locks.release(a), { released: true });
      assert.equal((await client.locks.status(key("catalog"))).waiters, 1, "one reader left: the writer still waits");
      assert.deepEqual(await other.locks.release(b), { released: true });
      const w = await writer;
      assert.equal(w.mode, "exclusive");
      assert.ok(w.token > b.token);
      assert.equal(await client.locks.tryAcquire(key("catalog"), { ttlMs: 30_000, mode: "shared" }), null, "no reader beside the writer");
      await client.locks.release(w);
    });

    test("a semaphore grants holds while their permits fit", async () => {
      const big = await client.locks.tryAcquire(key("pool"), { ttlMs: 30_000, permits: 3, take: 2 });
      assert.ok(big);
      assert.equal(big.mode, "semaphore");
      assert.equal(big.take, 2);
      assert.equal(big.permits, 3);
      const one = await other.locks.tryAcquire(key("pool"), { ttlMs: 30_000, permits: 3 });
      assert.ok(one);
      assert.equal(one.take, 1, "take defaults to 1");
      assert.equal(await other.locks.tryAcquire(key("pool"), { ttlMs: 30_000, permits: 3 }), null, "all 3 permits are taken");

      const s = await client.locks.status(key("pool"));
      assert.ok(s.held);
      assert.equal(s.mode, "semaphore");
      assert.equal(s.permits, 3);
      assert.equal(s.freePermits, 0);
      assert.deepEqual(
        s.holders.map((h) => [h.token, h.permits, h.take]),
        [
          [big.token, 3, 2],
          [one.token, 3, 1],
        ],
      );

      // The key's permits are decided by its holds: another number, or a mode, is refused.
      const e = await refusal(other.locks.tryAcquire(key("pool"), { ttlMs: 30_000, permits: 4 }));
      assert.match(e.message, /semaphore of 3 permits/);
      await refusal(other.locks.tryAcquire(key("pool"), { ttlMs: 30_000, mode: "shared" }));
      await refusal(other.locks.tryAcquire(key("pool"), { ttlMs: 30_000, permits: 3, take: 4 }));

      await client.locks.release(big);
      const two = await other.locks.acquire(key("pool"), { ttlMs: 30_000, timeoutMs: 0, permits: 3, take: 2 });
      assert.equal(two.take, 2);
      const after = await client.locks.status(key("pool"));
      assert.equal(after.held && after.freePermits, 0);
      await other.locks.release(two);
      await other.locks.release(one);
      assert.equal((await client.locks.status(key("pool"))).held, false);
    });

    test("withLock takes a key shared: two readers run at once", async () => {
      let release!: () => void;
      const secondIn = new Promise<void>((resolve) => (release = resolve));
      const first = client.withLock(
        key("shared-run"),
        async (ctx) => {
          assert.equal(ctx.handle?.mode, "shared");
          await secondIn; // only ends once the second reader is inside too
          return ctx.token;
        },
        { mode: "shared", timeoutMs: 5_000 },
      );
      const second = other.withLock(
        key("shared-run"),
        async (ctx) => {
          release();
          return ctx.token;
        },
        { mode: "shared", timeoutMs: 5_000 },
      );
      const [t1, t2] = await Promise.all([first, second]);
      assert.notEqual(t1, t2);
      assert.equal((await client.locks.status(key("shared-run"))).held, false, "both released");
    });

    test("a lock-delay keeps the key closed after the lease runs out, then opens it", async () => {
      const delayMs = 1_200;
      const h = await client.locks.acquire(key("delayed"), { ttlMs: 200, timeoutMs: 0, lockDelayMs: delayMs });
      assert.equal(h.lockDelayMs, delayMs);
      const held = await other.locks.status(key("delayed"));
      assert.equal(held.held && held.lockDelayMs, delayMs);

      let until: Date | null = null;
      await waitFor("the lease to end into its lock-delay", async () => {
        const s = await other.locks.status(key("delayed"));
        if (!s.held) until = s.lockDelayUntil;
        return !s.held;
      });
      assert.ok(until !== null, "status shows when the key opens again");
      const opens = (until as Date).getTime();
      assert.ok(Math.abs(opens - (h.leaseExpiresAt.getTime() + delayMs)) <= 50, "counted from the lease's end");
      assert.equal(await other.locks.tryAcquire(key("delayed"), { ttlMs: 30_000 }), null, "closed to everyone");

      let next: LockHandle | null = null;
      await waitFor(
        "the key to open",
        async () => (next = await other.locks.tryAcquire(key("delayed"), { ttlMs: 30_000 })) !== null,
        delayMs + 5_000,
      );
      assert.ok(Date.now() >= opens - 50, "not before the delay ended");
      const s = await other.locks.status(key("delayed"));
      assert.equal(s.held && s.lockDelayUntil, null, "open again");
      await other.locks.release(next!);
    });

    test("a release closes nothing, whatever the hold's lock-delay", async () => {
      const h = await client.locks.acquire(key("released"), { ttlMs: 30_000, timeoutMs: 0, lockDelayMs: 60_000 });
      await client.locks.release(h);
      const s = await other.locks.status(key("released"));
      assert.equal(s.lockDelayUntil, null);
      const next = await other.locks.tryAcquire(key("released"), { ttlMs: 30_000 });
      assert.ok(next);
      await other.locks.release(next);
    });

    test("an assignment carries its lock-delay", async () => {
      const a = await client.acquireLock(key("turn"), "white", { ttlMs: 30_000, lockDelayMs: 500 });
      assert.equal(a.lockDelayMs, 500);
      assert.equal(await client.releaseLock(key("turn"), "white"), true);
    });

    test("a shared or semaphore hold may have a lock-delay", async () => {
      const h = await client.locks.tryAcquire(key("shared-delay"), { ttlMs: 30_000, mode: "shared", lockDelayMs: 100 });
      assert.ok(h);
      assert.equal(h.mode, "shared");
      assert.equal(h.lockDelayMs, 100);
      const p = await client.locks.tryAcquire(key("sem-delay"), { ttlMs: 30_000, permits: 2, lockDelayMs: 100 });
      assert.equal(p?.lockDelayMs, 100);
      await client.locks.release(h);
      await client.locks.release(p!);
    });

    test("bad modes and lock-delays are refused and change nothing", async () => {
      // Checked by the client, the same over every transport:
      await refusal(client.locks.tryAcquire(key("bad"), { ttlMs: 1_000, mode: "semaphore" as never }), "mode");
      await refusal(client.locks.tryAcquire(key("bad"), { ttlMs: 1_000, permits: 1.5 }), "permits");
      await refusal(client.locks.acquire(key("bad"), { ttlMs: 1_000, timeoutMs: 0, permits: 2, take: "1" as never }), "take");
      await refusal(client.locks.tryAcquire(key("bad"), { ttlMs: 1_000, lockDelayMs: 0.5 }), "lockDelayMs");
      // Checked by the server:
      const e = await refusal(client.locks.tryAcquire(key("bad"), { ttlMs: 1_000, lockDelayMs: 60_001 }), "lockDelayMs");
      assert.match(e.message, /0 to 60000/);
      await refusal(client.locks.tryAcquire(key("bad"), { ttlMs: 1_000, mode: "shared", permits: 2 }));
      await refusal(client.locks.tryAcquire(key("bad"), { ttlMs: 1_000, take: 1 }));
      await refusal(client.locks.tryAcquire(key("bad"), { ttlMs: 1_000, permits: 0 }));
      await refusal(client.acquireLock(key("bad"), "white", { lockDelayMs: -1 }), "lockDelayMs");
      assert.equal((await client.locks.status(key("bad"))).held, false, "nothing changed");
    });
  });
}
