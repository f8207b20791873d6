// Every error class: the refusals a real server with credentials, a rule set and a rate limit
// answers, over each transport; a server that is gone or is not Holdfast; and the mapping of
// every wire code.
import assert from "node:assert/strict";
import { once } from "node:events";
import * as http from "node:http";
import * as net from "node:net";
import { describe, test } from "node:test";

import {
  ConnectionError,
  createClient,
  errorFromWire,
  ForbiddenError,
  HoldfastError,
  InternalError,
  InvalidArgumentError,
  LockAccessDeniedError,
  LockHeldError,
  LockTimeoutError,
  MethodNotAllowedError,
  NotFoundError,
  NotHolderError,
  ProtocolError,
  RateLimitedError,
  RulesetConflictError,
  StoreUnavailableError,
  UnauthenticatedError,
  UnavailableError,
} from "@holdfast/client";

import { serverForFile } from "./support/fixtures.js";
import { TRANSPORTS, TestServer, type Member } from "./support/server.js";
import { waitForWaiters } from "./support/wait.js";

const members: Member[] = [
  { userId: "root", role: "admin", token: "root-token" },
  { userId: "alice", role: "member", token: "alice-token" },
  // Acquire attempts are capped per user, admins included: each transport's tests get their own.
  ...TRANSPORTS.map((t) => ({ userId: `bob-${t}`, role: "member" as const, token: `bob-${t}-token` })),
  ...TRANSPORTS.map((t) => ({ userId: `admin-${t}`, role: "admin" as const, token: `admin-${t}-token` })),
];

// Members may take only keys in their own namespace.
const rules = `[ruleSet]\nname = "lock-policy"\nresourceType = "lock"\n[rules.lock]\nacquire = "record.key.startsWith('user:' + user.userId + ':')"\n`;
const server = serverForFile({ members, config: "[limits]\nacquirePerUserPerHour = 3\n" }, async (s) => {
  const put = await fetch(`${s.httpUrl}/v1/rule-sets/lock-policy`, {
    method: "PUT",
    headers: { authorization: "Bearer root-token" },
    body: rules,
  });
  assert.equal(put.status, 200, await put.text());
});

for (const transport of TRANSPORTS) {
  describe(`refusals over ${transport}`, () => {
    const as = (token: string) => createClient({ url: server().url(transport), token });

    test("an unknown token is UnauthenticatedError", async () => {
      const client = as("nobody");
      try {
        await assert.rejects(client.locks.status("k"), (e) => e instanceof UnauthenticatedError && e instanceof HoldfastError);
      } finally {
        await client.close();
      }
    });

    test("a token in the URL works like the token option", async () => {
      const client = createClient({ url: server().url(transport).replace("//", "//:alice-token@") });
      try {
        assert.equal((await client.locks.status("user:alice:x")).held, false);
      } finally {
        await client.close();
      }
    });

    test("list by a member is ForbiddenError; by an admin it pages", async () => {
      const alice = as("alice-token");
      const root = as("root-token");
      try {
        await assert.rejects(alice.locks.list().next(), (e) => e instanceof ForbiddenError && e.code === "FORBIDDEN");
        const page = await root.locks.list().next();
        assert.equal(page.done, false);
      } finally {
        await alice.close();
        await root.close();
      }
    });

    test("a key the rule set does not allow is LockAccessDeniedError; release is never gated", async () => {
      const alice = as("alice-token");
      try {
        await assert.rejects(
          alice.locks.tryAcquire("jobs:nightly", { ttlMs: 1_000 }),
          (e) => e instanceof LockAccessDeniedError && e.code === "LOCK_ACCESS_DENIED" && !e.message.includes("startsWith"),
        );
        await assert.rejects(alice.acquireLock(`user:bob:${transport}`, "alice"), LockAccessDeniedError);
        // A handle nobody holds is a not_holder answer, not a refusal.
        assert.deepEqual(await alice.locks.release({ key: "jobs:nightly", handle: "x".repeat(26) }), {
          released: false,
          reason: "not_holder",
        });
      } finally {
        await alice.close();
      }
    });

    test("over the acquire cap a tryAcquire is RateLimitedError with retryAfterMs", async () => {
      const bob = as(`bob-${transport}-token`);
      try {
        const key = `user:bob-${transport}:report`;
        const first = await bob.locks.tryAcquire(key, { ttlMs: 60_000 });
        assert.ok(first);
        assert.equal(await bob.locks.tryAcquire(key, { ttlMs: 60_000 }), null);
        assert.equal(await bob.locks.tryAcquire(key, { ttlMs: 60_000 }), null);
        const e = await bob.locks.tryAcquire(key, { ttlMs: 60_000 }).catch((err: unknown) => err);
        assert.ok(e instanceof RateLimitedError, String(e));
        assert.equal(e.code, "RATE_LIMITED");
        assert.ok(typeof e.retryAfterMs === "number" && e.retryAfterMs > 0 && e.retryAfterMs <= 3_600_000);
        await bob.locks.release(first);
      } finally {
        await bob.close();
      }
    });

    test("assignment conflicts are LockHeldError and NotHolderError", async () => {
      const root = as(`admin-${transport}-token`);
      try {
        const turn = `admin:${transport}:turn`;
        await root.acquireLock(turn, "white");
        await assert.rejects(root.acquireLock(turn, "black"), LockHeldError);
        await assert.rejects(root.transferLock(turn, "black", "black"), NotHolderError);
        // With credentials, a release without a caller id is the caller's own assignment.
        await assert.rejects(root.releaseLock(turn), NotHolderError);
        assert.equal(await root.releaseLock(turn, "white"), true);
      } finally {
        await root.close();
      }
    });
  });
}

describe("a server that goes away or is not Holdfast", () => {
  test("a blocked acquire when the server shuts down is UnavailableError", async () => {
    const doomed = await TestServer.start();
    const holder = createClient({ url: doomed.httpUrl });
    const viaHttp = createClient({ url: doomed.httpUrl });
    const viaResp = createClient({ url: doomed.respUrl });
    try {
      await holder.locks.acquire("k", { ttlMs: 60_000, timeoutMs: 0 });
      const http = viaHttp.locks.acquire("k", { ttlMs: 1_000, timeoutMs: 30_000 }).catch((e: unknown) => e);
      const resp = viaResp.locks.acquire("k", { ttlMs: 1_000, timeoutMs: 30_000 }).catch((e: unknown) => e);
      await waitForWaiters(holder, "k", 2);
      await doomed.stop();
      const [h, r] = await Promise.all([http, resp]);
      assert.ok(h instanceof UnavailableError, String(h));
      assert.equal(h.code, "UNAVAILABLE");
      assert.ok(r instanceof UnavailableError, String(r));
    } finally {
      await Promise.all([holder.close(), viaHttp.close(), viaResp.close()]);
      await doomed.cleanup();
    }
  });

  test("nobody listening is ConnectionError, over either transport", async () => {
    const gone = await TestServer.start();
    const urls = [gone.httpUrl, gone.respUrl, gone.unixUrl];
    await gone.cleanup();
    for (const url of urls) {
      const client = createClient({ url });
      await assert.rejects(client.locks.status("k"), (e) => e instanceof ConnectionError && e.code === "CONNECTION", url);
      await client.close();
    }
  });

  test("a node list fails over to the node that answers", async () => {
    const gone = await TestServer.start();
    const deadNode = gone.respUrl.slice("holdfast://".length);
    await gone.cleanup();
    const live = await TestServer.start();
    try {
      const client = createClient({ url: `holdfast://${deadNode},${live.respUrl.slice("holdfast://".length)}` });
      const h = await client.locks.acquire("k", { ttlMs: 1_000, timeoutMs: 0 });
      assert.equal(h.key, "k");
      await client.close();
    } finally {
      await live.cleanup();
    }
  });

  test("a RESP peer that is not Holdfast is ProtocolError", async () => {
    const impostor = net.createServer((socket) => {
      socket.on("data", () => socket.write("+OK\r\n"));
    });
    impostor.listen(0, "127.0.0.1");
    await once(impostor, "listening");
    const { port } = impostor.address() as net.AddressInfo;
    const client = createClient({ url: `holdfast://127.0.0.1:${port}` });
    try {
      await assert.rejects(client.locks.status("k"), (e) => e instanceof ProtocolError && e.code === "PROTOCOL");
    } finally {
      await client.close();
      impostor.close();
    }
  });

  test("an HTTP peer that answers something other than JSON is ProtocolError", async () => {
    const page = http.createServer((_req, res) => res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad gateway</h1>"));
    page.listen(0, "127.0.0.1");
    await once(page, "listening");
    const { port } = page.address() as net.AddressInfo;
    const client = createClient({ url: `http://127.0.0.1:${port}` });
    try {
      await assert.rejects(client.locks.status("k"), (e) => e instanceof ProtocolError && /502/.test(e.message));
    } finally {
      await client.close();
      page.close();
    }
  });

  test("close() fails a waiting call with ConnectionError and later calls too", async () => {
    const s = await TestServer.start();
    try {
      for (const url of [s.httpUrl, s.respUrl]) {
        const holder = createClient({ url });
        const waiter = createClient({ url });
        const h = await holder.locks.acquire(`close:${url}`, { ttlMs: 60_000, timeoutMs: 0 });
        const waiting = waiter.locks.acquire(`close:${url}`, { ttlMs: 1_000, timeoutMs: 30_000 }).catch((e: unknown) => e);
        await waitForWaiters(holder, `close:${url}`, 1);
        await waiter.close();
        assert.ok((await waiting) instanceof ConnectionError, url);
        await assert.rejects(waiter.locks.status("k"), ConnectionError);
        // The hung-up waiter left the server's queue.
        await waitForWaiters(holder, `close:${url}`, 0);
        await holder.locks.release(h);
        await holder.close();
      }
    } finally {
      await s.cleanup();
    }
  });
});

describe("wire codes", () => {
  test("every server code maps to its class, the rest to HoldfastError", () => {
    const classes: [string, new (...a: never[]) => HoldfastError][] = [
      ["LOCK_ACCESS_DENIED", LockAccessDeniedError],
      ["FORBIDDEN", ForbiddenError],
      ["RATE_LIMITED", RateLimitedError],
      ["UNAUTHENTICATED", UnauthenticatedError],
      ["NOAUTH", UnauthenticatedError],
      ["WRONGPASS", UnauthenticatedError],
      ["INVALID_ARGUMENT", InvalidArgumentError],
      ["LOCK_HELD", LockHeldError],
      ["LOCK_NOT_HOLDER", NotHolderError],
      ["RULESET_CONFLICT", RulesetConflictError],
      ["UNAVAILABLE", UnavailableError],
      ["STORE_UNAVAILABLE", StoreUnavailableError],
      ["NOT_FOUND", NotFoundError],
      ["METHOD_NOT_ALLOWED", MethodNotAllowedError],
      ["INTERNAL", InternalError],
    ];
    for (const [code, Class] of classes) {
      const e = errorFromWire(code, "why", { field: "x" });
      assert.ok(e instanceof Class, code);
      assert.ok(e instanceof HoldfastError && e instanceof Error);
      assert.equal(e.code, code);
      assert.equal(e.message, "why");
      assert.equal(e.details.field, "x");
      assert.equal(e.name, Class.name);
    }
    const timeout = errorFromWire("LOCK_TIMEOUT", "no grant", { key: "jobs:1", timeoutMs: 300 });
    assert.ok(timeout instanceof LockTimeoutError);
    assert.equal(timeout.key, "jobs:1");
    assert.equal(timeout.timeoutMs, 300);
    const other = errorFromWire("ERR", "unknown command 'X'", {});
    assert.equal(other.constructor, HoldfastError);
    assert.equal(other.code, "ERR");
  });
});
