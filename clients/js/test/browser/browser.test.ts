// A web page uses the package in headless Chromium: the test serves a page (and the package's
// dist/ as ES modules) from one origin, starts holdfast serve with that origin allowed, and
// reads what the page did through the DevTools protocol. A second page from an origin the
// server does not allow must fail to reach it.
import assert from "node:assert/strict";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, normalize } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import puppeteer, { type Browser } from "puppeteer-core";

import { createClient } from "@holdfast/client";

import { TestServer } from "../support/server.js";

const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "dist");

// The page: imports the package by name through an import map, as a page without a bundler
// would, and records every step in window.result.
const page = (server: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>holdfast in a page</title>
<script type="importmap">{"imports": {"@holdfast/client": "/pkg/index.js"}}</script>
</head><body><pre id="out">running</pre>
<script type="module">
import { createClient, LockTimeoutError, HoldfastError } from "@holdfast/client";
const steps = {};
try {
  const client = createClient({ url: ${JSON.stringify(server)} });
  const handle = await client.locks.acquire("browser:report", { ttlMs: 30000, timeoutMs: 1000, owner: "tab-1" });
  steps.acquired = { key: handle.key, token: handle.token, owner: handle.owner, expiresIsDate: handle.leaseExpiresAt instanceof Date };
  const status = await client.locks.status("browser:report");
  steps.status = { held: status.held, heldBy: status.heldBy, token: status.token };
  steps.second = await client.locks.tryAcquire("browser:report", { ttlMs: 30000 });
  try {
    await client.locks.acquire("browser:report", { ttlMs: 30000, timeoutMs: 100 });
  } catch (e) {
    steps.timeout = { isTimeout: e instanceof LockTimeoutError, code: e.code, key: e.key, timeoutMs: e.timeoutMs };
  }
  steps.released = await client.locks.release(handle);
  steps.result = await client.withLock("browser:report", async (ctx) => "ran with token " + ctx.token);
  await client.close();
  try {
    await createClient({ url: "holdfast://127.0.0.1:7420" }).locks.status("browser:report");
  } catch (e) {
    steps.resp = { name: e.name, field: e.details?.field, message: e.message };
  }
} catch (e) {
  steps.error = { name: e.name, code: e instanceof HoldfastError ? e.code : null, message: e.message };
}
document.getElementById("out").textContent = JSON.stringify(steps);
window.result = steps;
</script></body></html>`;

async function servePage(server: () => string): Promise<{ origin: string; close: () => void }> {
  const site = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://page");
    if (url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page(server()));
      return;
    }
    const file = normalize(join(dist, url.pathname.replace(/^\/pkg\//, "")));
    if (!url.pathname.startsWith("/pkg/") || !file.startsWith(dist) || !file.endsWith(".js")) {
      res.writeHead(404).end();
      return;
    }
    try {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(await readFile(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  site.listen(0, "127.0.0.1");
  await once(site, "listening");
  return { origin: `http://127.0.0.1:${(site.address() as AddressInfo).port}`, close: () => site.close() };
}

let holdfast: TestServer;
let browser: Browser;
let allowed: { origin: string; close: () => void };
let other: { origin: string; close: () => void };

before(async () => {
  allowed = await servePage(() => holdfast.httpUrl);
  other = await servePage(() => holdfast.httpUrl);
  holdfast = await TestServer.start({ config: `[server]\ncorsAllowedOrigins = [${JSON.stringify(allowed.origin)}]\n` });
  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM_BIN ?? "/usr/bin/chromium",
    headless: true,
    // The test may run as root, where Chromium's sandbox refuses to start.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
});

after(async () => {
  await browser?.close();
  allowed?.close();
  other?.close();
  await holdfast?.cleanup();
});

async function runPage(origin: string): Promise<Record<string, unknown>> {
  const tab = await browser.newPage();
  try {
    await tab.goto(`${origin}/`);
    await tab.waitForFunction("window.result !== undefined", { timeout: 20_000 });
    return (await tab.evaluate("window.result")) as Record<string, unknown>;
  } finally {
    await tab.close();
  }
}

test("a page from an allowed origin takes, inspects and releases a lock over HTTP", async () => {
  const steps = await runPage(allowed.origin);
  assert.equal(steps.error, undefined, JSON.stringify(steps.error));
  const acquired = steps.acquired as { key: string; token: number; owner: string; expiresIsDate: boolean };
  assert.equal(acquired.key, "browser:report");
  assert.equal(acquired.owner, "tab-1");
  assert.equal(acquired.expiresIsDate, true);
  assert.deepEqual(steps.status, { held: true, heldBy: "user:local", token: acquired.token });
  assert.equal(steps.second, null);
  // A 409 with its error body was readable across origins: the page got the typed error.
  assert.deepEqual(steps.timeout, { isTimeout: true, code: "LOCK_TIMEOUT", key: "browser:report", timeoutMs: 100 });
  assert.deepEqual(steps.released, { released: true });
  assert.match(String(steps.result), /^ran with token \d+$/);
  // RESP needs Node: a page asking for it gets a clear refusal, not a module error.
  assert.deepEqual(steps.resp, {
    name: "InvalidArgumentError",
    field: "url",
    message: "holdfast://, rediss:// and unix:// URLs need Node.js; in a browser use the server's http:// or https:// URL",
  });

  // The server saw all of it: the key is free now and its tokens moved past the page's.
  const client = createClient({ url: holdfast.httpUrl });
  assert.equal((await client.locks.status("browser:report")).held, false);
  const mine = await client.locks.tryAcquire("browser:report", { ttlMs: 1_000 });
  assert.ok(mine && mine.token > acquired.token + 1);
  await client.locks.release(mine);
});

test("a page from an origin the server does not allow cannot reach it", async () => {
  const steps = await runPage(other.origin);
  const error = steps.error as { name: string; code: string };
  assert.equal(error.name, "ConnectionError");
  assert.equal(error.code, "CONNECTION");
  const client = createClient({ url: holdfast.httpUrl });
  const s = await client.locks.status("browser:report");
  assert.equal(s.held, false, "nothing was taken");
});
