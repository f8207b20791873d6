// client.withLock against a real server: the result, the release on every way out, the
// background renewal, the abort of fn's signal when the lease is lost, and pass-through mode.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import {
  ConnectionError,
  createClient,
  LeaseLostError,
  LockTimeoutError,
  PassThroughError,
  type HoldfastClient,
} from "@holdfast/client";

import { clientMaker, serverForFile } from "./support/fixtures.js";
import { TRANSPORTS, TestServer } from "./support/server.js";
import { aborted, waitFor } from "./support/wait.js";

const server = serverForFile();

for (const transport of TRANSPORTS) {
  describe(`withLock over ${transport}`, () => {
    const newClient = clientMaker(server, transport);
    let client: HoldfastClient;
    let other: HoldfastClient;
    before(() => {
      client = newClient();
      other = newClient();
    });
    const key = (name: string) => `${transport}:${name}`;

    test("runs fn while holding the key, returns its result, then releases", async () => {
      const result = await client.withLock(key("task:1"), async (ctx) => {
        const s = await other.locks.status(key("task:1"));
        assert.equal(s.held, true);
        assert.equal(s.held && s.token, ctx.token);
        assert.equal(ctx.handle?.key, key("task:1"));
        assert.equal(ctx.signal.aborted, false);
        return { moved: true };
      });
      assert.deepEqual(result, { moved: true });
      assert.equal((await other.locks.status(key("task:1"))).held, false);
    });

    test("releases when fn throws, and the error comes through", async () => {
      const boom = new Error("boom");
      await assert.rejects(
        client.withLock(key("task:2"), async () => {
          throw boom;
        }),
        (e) => e === boom,
      );
      assert.equal((await other.locks.status(key("task:2"))).held, false);
    });

    test("a key held elsewhere ends in LockTimeoutError and fn does not run", async () => {
      const h = await other.locks.acquire(key("task:3"), { ttlMs: 30_000, timeoutMs: 0 });
      let ran = false;
      const e = await client
        .withLock(key("task:3"), async () => (ran = true), { timeoutMs: 100 })
        .catch((err: unknown) => err);
      assert.ok(e instanceof LockTimeoutError);
      assert.equal(e.message.startsWith(`Could not acquire lock: ${key("task:3")}`), true);
      assert.equal(e.timeoutMs, 100);
      assert.equal(ran, false);
      await other.locks.release(h);
    });

    test("a number as third argument is the acquire timeout", async () => {
      const h = await other.locks.acquire(key("task:4"), { ttlMs: 30_000, timeoutMs: 0 });
      const e = await client.withLock(key("task:4"), async () => 1, 50).catch((err: unknown) => err);
      assert.ok(e instanceof LockTimeoutError);
      assert.equal(e.timeoutMs, 50);
      await other.locks.release(h);
    });

    test("the lease is renewed in the background for as long as fn runs", async () => {
      // Long enough that a renewal delayed by a busy machine still lands within the lease.
      const ttlMs = 3_000;
      await client.withLock(
        key("long"),
        async (ctx) => {
          const firstExpiry = ctx.handle!.leaseExpiresAt.getTime();
          // Renewals every ttl/3 push the expiry forward; wait until it has moved by a whole
          // TTL: by then the first lease would have ended without them.
          await waitFor("the lease to be renewed past its first end", async () => {
            const s = await other.locks.status(key("long"));
            return s.held && s.leaseExpiresAt!.getTime() >= firstExpiry + ttlMs;
          });
          const s = await other.locks.status(key("long"));
          assert.equal(s.held && s.token, ctx.token, "still the same hold");
          assert.ok(Date.now() > firstExpiry, "past the first lease's end");
          assert.equal(ctx.signal.aborted, false);
        },
        { ttlMs, timeoutMs: 0 },
      );
      assert.equal((await other.locks.status(key("long"))).held, false);
    });

    test("fn's signal aborts with LeaseLostError when its owner re-takes the lease elsewhere", async () => {
      let retakenToken = 0;
      const reason = await client.withLock(
        key("import"),
        async (ctx) => {
          // A restarted run of the same owner takes the hold back, fencing this one.
          const retaken = await other.locks.tryAcquire(key("import"), { ttlMs: 30_000, owner: "run-42" });
          assert.ok(retaken);
          retakenToken = retaken.token;
          return aborted(ctx.signal);
        },
        { ttlMs: 1_500, timeoutMs: 0, owner: "run-42" },
      );
      assert.ok(reason instanceof LeaseLostError);
      assert.equal(reason.code, "LEASE_LOST");
      assert.equal(reason.key, key("import"));
      assert.match(reason.message, /lease_lost/);
      // The release in withLock's finally could not free the new holder's key.
      const s = await other.locks.status(key("import"));
      assert.equal(s.held && s.token, retakenToken);
    });

    test("renew: false leaves the lease to run out on its own", async () => {
      await client.withLock(
        key("norenew"),
        async (ctx) => {
          await waitFor("the lease to end", async () => !(await other.locks.status(key("norenew"))).held);
          assert.equal(ctx.signal.aborted, false, "nothing watches a lease that is not renewed");
        },
        { ttlMs: 200, timeoutMs: 0, renew: false },
      );
    });
  });
}

describe("withLock when the server goes away", () => {
  test("the lease runs out without a renewal getting through: the signal aborts", async () => {
    const gone = await TestServer.start();
    const client = createClient({ url: gone.respUrl, connectTimeoutMs: 500, callTimeoutMs: 500 });
    try {
      const outcome = client.withLock(
        "jobs:doomed",
        async (ctx) => {
          await gone.stop("SIGKILL");
          return aborted(ctx.signal);
        },
        { ttlMs: 600, timeoutMs: 0 },
      );
      // fn ends once its signal aborts; then the release cannot reach the server either.
      const e = await outcome.catch((err: unknown) => err);
      assert.ok(e instanceof ConnectionError, String(e));
    } finally {
      await client.close();
      await gone.cleanup();
    }
  });
});

describe("pass-through mode", () => {
  test("withLock, withLocks and locked run fn directly, say so once, and other calls refuse", async () => {
    const notices: string[] = [];
    const client = createClient({ passThrough: true, logger: { warn: (m) => notices.push(m) } });
    assert.equal(client.passThrough, true);
    const first = await client.withLock("task:1", async (ctx) => {
      assert.equal(ctx.handle, null);
      assert.equal(ctx.token, null);
      assert.equal(ctx.signal.aborted, false);
      return 1;
    });
    const second = await client.withLock("task:1", () => 2);
    const third = await client.locked("task:{id}")(async (p: { id: string }) => p.id)({ id: "x" });
    const fourth = await client.withLocks(["a", { key: "b", mode: "shared" }], (ctx) => {
      assert.equal(ctx.group, null);
      assert.equal(ctx.token("b"), null);
      return ctx.keys.join();
    });
    assert.deepEqual([first, second, third, fourth], [1, 2, "x", "a,b"]);
    assert.equal(notices.length, 1);
    assert.match(notices[0]!, /pass-through/);
    await assert.rejects(client.locks.acquire("k", { ttlMs: 1, timeoutMs: 0 }), PassThroughError);
    await assert.rejects(client.locks.acquireAll(["k"], { ttlMs: 1, timeoutMs: 0 }), PassThroughError);
    await assert.rejects(client.getLock("turn"), (e) => e instanceof PassThroughError && e.code === "PASS_THROUGH");
  });

  test("a client needs a url unless it is in pass-through mode", () => {
    assert.throws(() => createClient({}), /url/);
    assert.throws(() => createClient({ url: "ftp://example.com" }), /unsupported scheme 'ftp'/);
  });
});
