// The client over TLS in Node: rediss:// (RESP) and https:// (HTTP) with `tls: { ca, cert, key }`
// as PEM contents, against a real server with a certificate made for the run: locks are taken
// and released; a client certificate whose common name the credentials carry is that caller
// without a token; an untrusted server, a plain URL to a TLS port, and tls options with a URL
// that is not TLS are refused.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { ConnectionError, InvalidArgumentError, createClient, type HoldfastClient } from "@holdfast/client";

import { TestCertificates } from "./support/certs.js";
import { TestServer } from "./support/server.js";

let certs: TestCertificates;
let open: TestServer;
let secured: TestServer;
const made: HoldfastClient[] = [];

before(async () => {
  certs = new TestCertificates();
  const tls = { ...certs.server, ca: certs.file("ca.pem") };
  [open, secured] = await Promise.all([
    TestServer.start({ tls }),
    TestServer.start({
      tls,
      members: [
        { userId: "alice", role: "member", token: "alice-token" },
        { userId: "carol", role: "member", certCommonName: "carol.example" },
      ],
    }),
  ]);
});
after(async () => {
  await Promise.all(made.map((c) => c.close()));
  await Promise.all([open?.cleanup(), secured?.cleanup()]);
  certs?.cleanup();
});

function client(options: Parameters<typeof createClient>[0]): HoldfastClient {
  const c = createClient(options);
  made.push(c);
  return c;
}

for (const transport of ["resp", "http"] as const) {
  const scheme = transport === "resp" ? "rediss://" : "https://";
  describe(`over ${scheme}`, () => {
    test("takes and releases locks", async () => {
      const url = open.url(transport);
      assert.ok(url.startsWith(scheme), url);
      const c = client({ url, tls: { ca: certs.pem("ca.pem") } });
      const key = `${transport}:tls`;
      const handle = await c.locks.tryAcquire(key, { ttlMs: 30_000 });
      assert.ok(handle !== null);
      assert.equal(handle.heldBy, "user:local");
      assert.equal(await c.locks.tryAcquire(key, { ttlMs: 30_000 }), null);
      assert.deepEqual(await c.locks.release(handle), { released: true });
      assert.equal(await c.withLock(`${key}:scope`, async ({ token }) => (token ?? 0) > 0, { ttlMs: 5_000, timeoutMs: 5_000 }), true);
    });

    test("a client certificate is its caller; a token works beside it", async () => {
      const carol = client({ url: secured.url(transport), tls: { ca: certs.pem("ca.pem"), ...certs.client("carol.example") } });
      const handle = await carol.locks.tryAcquire(`${transport}:carol`, { ttlMs: 30_000 });
      assert.equal(handle?.heldBy, "user:carol");
      const alice = client({ url: secured.url(transport), token: "alice-token", tls: { ca: certs.pem("ca.pem") } });
      assert.equal((await alice.locks.tryAcquire(`${transport}:alice`, { ttlMs: 30_000 }))?.heldBy, "user:alice");
    });

    test("refuses a server whose CA it does not trust", async () => {
      const c = client({ url: open.url(transport), tls: { ca: certs.pem("other-ca.pem") } });
      await assert.rejects(c.locks.status("x"), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        assert.match(e.message, /certificate/);
        return true;
      });
    });
  });
}

test("a plain URL to a TLS port gets no answer, and tls options need a TLS URL", async () => {
  const plain = client({ url: open.respUrl.replace("rediss://", "holdfast://"), connectTimeoutMs: 5_000 });
  await assert.rejects(plain.locks.status("x"), ConnectionError);
  for (const url of [open.respUrl.replace("rediss://", "holdfast://"), open.httpUrl.replace("https://", "http://"), open.unixUrl]) {
    assert.throws(() => createClient({ url, tls: { ca: certs.pem("ca.pem") } }), (e: Error) => {
      assert.ok(e instanceof InvalidArgumentError);
      assert.match(e.message, /tls needs an https:\/\/ or rediss:\/\/ URL/);
      return true;
    });
  }
});
