// client.locks over each transport against a real server: the lease-lock calls, their
// answers and refusals, re-take by owner, paging, and the fairness of blocking acquires.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import {
  HoldfastError,
  InvalidArgumentError,
  LockTimeoutError,
  type HoldfastClient,
  type LockHandle,
} from "@holdfast/client";

import { clientMaker, serverForFile } from "./support/fixtures.js";
import { TRANSPORTS } from "./support/server.js";
import { waitForWaiters } from "./support/wait.js";

const server = serverForFile();

for (const transport of TRANSPORTS) {
  describe(`locks over ${transport}`, () => {
    const newClient = clientMaker(server, transport);
    let client: HoldfastClient;
    before(() => {
      client = newClient();
    });
    const key = (name: string) => `${transport}:${name}`;

    test("acquire answers the hold; status shows it; release frees it once", async () => {
      const before = Date.now();
      const h = await client.locks.acquire(key("report"), { ttlMs: 60_000, timeoutMs: 1_000, owner: "run-1" });
      assert.equal(h.key, key("report"));
      assert.match(h.handle, /^[\x21-\x7e]{20,64}$/);
      assert.ok(Number.isSafeInteger(h.token) && h.token > 0);
      assert.equal(h.heldBy, "user:local");
      assert.equal(h.owner, "run-1");
      assert.ok(h.acquiredAt instanceof Date && h.acquiredAt.getTime() >= before - 1_000);
      assert.ok(Math.abs(h.leaseExpiresAt.getTime() - h.acquiredAt.getTime() - 60_000) <= 1);
      assert.equal(h.scope, "lease");
      assert.equal(h.kind, "handle");
      assert.equal(h.mode, "exclusive");
      assert.equal(h.permits, null);
      assert.equal(h.lockDelayMs, 0);

      const s = await client.locks.status(key("report"));
      assert.equal(s.held, true);
      if (!s.held) return;
      assert.equal(s.heldBy, "user:local");
      assert.equal(s.owner, "run-1");
      assert.equal(s.token, h.token);
      assert.equal(s.leaseExpiresAt?.getTime(), h.leaseExpiresAt.getTime());
      assert.equal(s.waiters, 0);
      assert.equal(s.mode, "exclusive");
      assert.deepEqual(s.holders.map((x) => x.token), [h.token], "an exclusive key's one hold is its only holder");
      assert.equal("handle" in s, false, "status never shows the handle");

      assert.deepEqual(await client.locks.release(h), { released: true });
      const free = await client.locks.status(key("report"));
      assert.deepEqual({ ...free }, {
        key: key("report"),
        held: false,
        waiters: 0,
        heldBy: null,
        owner: null,
        acquiredAt: null,
        leaseExpiresAt: null,
        token: null,
        scope: null,
        kind: null,
        holder: null,
        mode: null,
        permits: null,
        freePermits: null,
        lockDelayMs: null,
        holders: [],
        lockDelayUntil: null,
      });
      assert.deepEqual(await client.locks.release(h), { released: false, reason: "not_holder" });
    });

    test("tryAcquire answers null while the key is held, and a hold once it is free", async () => {
      const other = newClient();
      const h = await client.locks.tryAcquire(key("refresh"), { ttlMs: 30_000 });
      assert.ok(h);
      assert.equal(await other.locks.tryAcquire(key("refresh"), { ttlMs: 30_000 }), null);
      await client.locks.release(h);
      const mine = await other.locks.tryAcquire(key("refresh"), { ttlMs: 30_000 });
      assert.ok(mine && mine.token > h.token);
      await other.locks.release(mine);
    });

    test("a blocking acquire that is not granted in time throws LockTimeoutError", async () => {
      const h = await client.locks.acquire(key("busy"), { ttlMs: 30_000, timeoutMs: 0 });
      const started = Date.now();
      const e = await newClient()
        .locks.acquire(key("busy"), { ttlMs: 30_000, timeoutMs: 150 })
        .then(() => assert.fail("granted"), (err: unknown) => err);
      assert.ok(e instanceof LockTimeoutError);
      assert.ok(e instanceof HoldfastError);
      assert.equal(e.code, "LOCK_TIMEOUT");
      assert.equal(e.key, key("busy"));
      assert.equal(e.timeoutMs, 150);
      assert.match(e.message, /Could not acquire lock: .*busy/);
      assert.ok(Date.now() - started >= 140, "it waited on the server");
      await client.locks.release(h);
    });

    test("a waiter gets the key the moment the holder's lease ends", async () => {
      await client.locks.acquire(key("expiring"), { ttlMs: 300, timeoutMs: 0 });
      const next = await newClient().locks.acquire(key("expiring"), { ttlMs: 30_000, timeoutMs: 60_000 });
      assert.equal(next.key, key("expiring"));
      await client.locks.release(next);
    });

    test("renew extends the lease; a fenced handle's renew answers lease_lost", async () => {
      const h = await client.locks.acquire(key("long"), { ttlMs: 10_000, timeoutMs: 0, owner: "job-7" });
      const r = await client.locks.renew(h, { ttlMs: 120_000 });
      assert.equal(r.renewed, true);
      if (r.renewed) assert.ok(r.leaseExpiresAt.getTime() > h.leaseExpiresAt.getTime() + 100_000);
      const retaken = await newClient().locks.tryAcquire(key("long"), { ttlMs: 10_000, owner: "job-7" });
      assert.ok(retaken, "the same owner re-takes its hold");
      assert.notEqual(retaken.handle, h.handle);
      assert.ok(retaken.token > h.token);
      assert.deepEqual(await client.locks.renew(h, { ttlMs: 10_000 }), { renewed: false, reason: "lease_lost" });
      assert.deepEqual(await client.locks.release(h), { released: false, reason: "not_holder" });
      const s = await client.locks.status(key("long"));
      assert.equal(s.held && s.owner, "job-7");
      assert.deepEqual(await client.locks.release(retaken), { released: true });
    });

    test("a hold without an owner is never re-entered", async () => {
      const h = await client.locks.tryAcquire(key("plain"), { ttlMs: 10_000 });
      assert.ok(h);
      assert.equal(await client.locks.tryAcquire(key("plain"), { ttlMs: 10_000, owner: "x" }), null);
      await client.locks.release(h);
    });

    test("release takes the handle as plain data, e.g. after a JSON round trip", async () => {
      const h = await client.locks.acquire(key("stored"), { ttlMs: 10_000, timeoutMs: 0 });
      const stored = JSON.parse(JSON.stringify(h)) as LockHandle;
      assert.deepEqual(await newClient().locks.release(stored), { released: true });
    });

    test("list pages through every hold, without handles", async () => {
      const held: LockHandle[] = [];
      for (let i = 0; i < 5; i++) held.push(await client.locks.acquire(key(`page:${i}`), { ttlMs: 60_000, timeoutMs: 0 }));
      const pages = [];
      for await (const page of client.locks.list({ match: key("page:*"), count: 2 })) pages.push(page);
      const keys = pages.flatMap((p) => p.locks.map((l) => l.key)).sort();
      assert.deepEqual(keys, held.map((h) => h.key).sort());
      assert.ok(pages.every((p) => p.locks.length <= 2));
      assert.equal(pages.at(-1)!.nextCursor, "0");
      const first = pages[0]!.locks[0]!;
      assert.equal("handle" in first, false);
      assert.equal(first.kind, "handle");
      assert.ok(first.acquiredAt instanceof Date);
      for (const h of held) await client.locks.release(h);
      const none = [];
      for await (const page of client.locks.list({ match: key("page:*") })) none.push(...page.locks);
      assert.deepEqual(none, []);
    });

    test("blocking acquires from several clients are granted first in, first out", async () => {
      const holder = await client.locks.acquire(key("fifo"), { ttlMs: 30_000, timeoutMs: 0 });
      const order: string[] = [];
      const waiters = ["b", "c", "d"].map((name, i) => ({ name, client: newClient(), i }));
      const done: Promise<void>[] = [];
      for (const w of waiters) {
        done.push(
          w.client.locks.acquire(key("fifo"), { ttlMs: 30_000, timeoutMs: 10_000 }).then(async (h) => {
            order.push(w.name);
            await w.client.locks.release(h);
          }),
        );
        await waitForWaiters(client, key("fifo"), w.i + 1);  // queued before the next one asks
      }
      await client.locks.release(holder);
      await Promise.all(done);
      assert.deepEqual(order, ["b", "c", "d"]);
    });

    test("a waiting acquire does not hold up the client's other calls", async () => {
      const holder = await client.locks.acquire(key("parallel"), { ttlMs: 30_000, timeoutMs: 0 });
      const waiting = client.locks.acquire(key("parallel"), { ttlMs: 30_000, timeoutMs: 10_000 });
      await waitForWaiters(client, key("parallel"), 1);
      const s = await client.locks.status(key("parallel"));
      assert.equal(s.held && s.token, holder.token);
      await client.locks.release(holder);
      await client.locks.release(await waiting);
    });

    test("bad arguments are refused with InvalidArgumentError naming the field", async () => {
      const refusal = async (p: Promise<unknown>) =>
        p.then(() => assert.fail("accepted"), (e: unknown) => {
          assert.ok(e instanceof InvalidArgumentError, String(e));
          assert.equal(e.code, "INVALID_ARGUMENT");
          return e;
        });
      // Checked by the client, the same for every transport:
      let e = await refusal(client.locks.acquire(key("k"), { ttlMs: 1_000 } as never));
      assert.equal(e.details.field, "timeoutMs");
      e = await refusal(client.locks.acquire(key("k"), { ttlMs: 1.5, timeoutMs: 0 }));
      assert.equal(e.details.field, "ttlMs");
      e = await refusal(client.locks.release({ key: key("k") } as never));
      assert.equal(e.details.field, "handle");
      e = await refusal(client.locks.status(""));
      assert.equal(e.details.field, "key");
      // Checked by the server:
      e = await refusal(client.locks.tryAcquire(key("k"), { ttlMs: 0 }));
      assert.match(e.message, /TTL|ttlMs/);
      await refusal(client.locks.tryAcquire(`${key("k")}\u0001`, { ttlMs: 1_000 }));
      await refusal(client.locks.tryAcquire(key("k"), { ttlMs: 1_000, owner: "" }));
      assert.equal((await client.locks.status(key("k"))).held, false, "nothing changed");
    });

    test("keys with spaces, quotes and non-ASCII travel intact", async () => {
      const odd = key(`import "q3" = done ü 😀`);
      const h = await client.locks.acquire(odd, { ttlMs: 10_000, timeoutMs: 0 });
      assert.equal(h.key, odd);
      const e = await newClient()
        .locks.acquire(odd, { ttlMs: 10_000, timeoutMs: 50 })
        .catch((err: unknown) => err);
      assert.ok(e instanceof LockTimeoutError);
      assert.equal(e.key, odd);
      assert.equal((await client.locks.status(odd)).held, true);
      await client.locks.release(h);
    });
  });
}
