// The web page (GET /ui/) in headless Chromium, against the real server (and, through
// tests/blackbox/run_with_postgres.sh, a node over PostgreSQL): locks taken and freed over RESP
// show up on the page and go away, with their holder, token, lease, kind and waiters; the
// detail of a key opens and closes from the keyboard; a server restart and a token the server
// asks for are coped with. A screenshot and the measured delays are kept in UI_ARTIFACTS.
//
// Each wait for the page has a generous deadline, so that a loaded machine does not fail it;
// the time from a reply over RESP to the page showing it is measured and written down
// (ui-timings.json), not asserted against one second here.
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import puppeteer from "puppeteer-core";

import { fields, Resp } from "./resp.mjs";
import { Holdfast } from "./server.mjs";

const PAGE_DEADLINE_MS = 15_000;
const artifacts = process.env.UI_ARTIFACTS ?? join(tmpdir(), "holdfast-ui-artifacts");
const backend = process.env.HOLDFAST_TEST_STORE_URL ? "postgres" : "embedded";
const timings = [];

let browser;
let profile;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), "holdfast-ui-chromium-"));
  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM_BIN ?? "/usr/bin/chromium",
    headless: true,
    userDataDir: profile,
    // No sandbox: the test may run as root, where Chromium refuses its sandbox. Nothing is
    // fetched from the internet: no background networking, updates or sync.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage"],
  });
});

after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  writeFileSync(join(artifacts, `ui-timings-${backend}.json`), JSON.stringify(timings, null, 2) + "\n");
  // Reported, not asserted (a loaded machine may be slow): from the RESP reply to the page.
  for (const t of timings) console.log(`ui timing (${t.backend}): ${t.what} after ${t.ms} ms`);
});

async function openPage(server) {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("requestfailed", (r) => {
    // The stream is cut when the server restarts; anything else failing is a problem.
    if (!r.url().endsWith("/v1/events")) problems.push(`request failed: ${r.url()}`);
  });
  await page.setViewport({ width: 1100, height: 700 });
  await page.goto(`${server.url}/ui/`);
  return { page, problems };
}

async function live(page) {
  await page.waitForSelector('body[data-conn="live"]', { timeout: PAGE_DEADLINE_MS });
}

// Waits until `fn` (run in the page) answers true; answers the milliseconds it took from `since`.
async function shows(page, what, since, fn, ...args) {
  await page.waitForFunction(fn, { timeout: PAGE_DEADLINE_MS, polling: "mutation" }, ...args);
  const ms = Date.now() - since;
  timings.push({ backend, what, ms });
  return ms;
}

const rowOf = (key) => `tr[data-key="${key}"]`;

test("held keys appear with holder, token, kind, lease and waiters, and go when freed", async () => {
  const server = await Holdfast.create();
  const { page, problems } = await openPage(server);
  const a = await Resp.connect(server.respPort);
  const b = await Resp.connect(server.respPort);
  try {
    await live(page);
    let since = Date.now();
    const hold = fields(await a.call("LOCK.TRY", "ui:one", "TTL", 30000, "OWNER", "tab-test"));
    await shows(page, "grant shown", since, (sel) => document.querySelector(sel) !== null, rowOf("ui:one"));
    const row = await page.$eval(rowOf("ui:one"), (tr) => ({
      token: tr.dataset.token,
      cells: [...tr.cells].map((c) => c.textContent.trim()),
    }));
    assert.equal(row.token, String(hold.token));
    assert.equal(row.cells[0], "ui:one");
    assert.equal(row.cells[1], "exclusive");
    assert.equal(row.cells[2], "user:local, owner tab-test");
    assert.match(row.cells[4], /^(29|30|[12]\d)(\.\d)? s$/);  // the lease counting down

    // A waiter, in queue order, in the row and in the detail opened from the keyboard.
    const waited = b.call("LOCK.ACQUIRE", "ui:one", "TTL", 30000, "TIMEOUT", 60000, "OWNER", "second");
    since = Date.now();
    await shows(page, "waiter shown", since, (sel) => document.querySelector(`${sel} .waiters li`) !== null, rowOf("ui:one"));
    await page.screenshot({ path: join(artifacts, `ui-${backend}-waiter.png`), fullPage: true });
    await page.focus(rowOf("ui:one"));
    await page.keyboard.press("Enter");
    await page.waitForSelector("#detail:not([hidden])", { timeout: PAGE_DEADLINE_MS });
    assert.equal(await page.evaluate(() => document.activeElement.id), "detail-heading");
    const detail = await page.$eval("#detail", (d) => d.textContent);
    assert.match(detail, /user:local, owner second, exclusive/);
    assert.match(detail, /acquired token/);
    assert.match(detail, /queued/);

    // The holder lets go: the waiter gets the key, the row shows its token; then it goes too.
    since = Date.now();
    assert.deepEqual(await a.call("LOCK.RELEASE", "ui:one", hold.handle), ["released", 1]);
    const second = fields(await waited);
    await shows(page, "hand-off shown", since, (sel, t) => document.querySelector(sel)?.dataset.token === t, rowOf("ui:one"), String(second.token));
    await page.keyboard.press("Escape");
    await page.waitForSelector("#detail[hidden]", { timeout: PAGE_DEADLINE_MS });
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.key), "ui:one");

    since = Date.now();
    assert.deepEqual(await b.call("LOCK.RELEASE", "ui:one", second.handle), ["released", 1]);
    await shows(page, "release shown", since, (sel) => document.querySelector(sel) === null, rowOf("ui:one"));

    // A semaphore shows its permits in use; a shared key its holders.
    await a.call("LOCK.TRY", "ui:pool", "TTL", 30000, "PERMITS", 3, "TAKE", 2);
    await a.call("LOCK.TRY", "ui:doc", "TTL", 30000, "MODE", "SHARED");
    await b.call("LOCK.TRY", "ui:doc", "TTL", 30000, "MODE", "SHARED");
    await page.waitForFunction(
      (p, d) => document.querySelector(p)?.cells[1].textContent === "semaphore 2/3 permits" &&
        document.querySelector(d)?.cells[2].textContent.startsWith("2 holders"),
      { timeout: PAGE_DEADLINE_MS }, rowOf("ui:pool"), rowOf("ui:doc"));

    await page.screenshot({ path: join(artifacts, `ui-${backend}.png`), fullPage: true });

    // Search by prefix hides the others.
    await page.type("#prefix", "ui:p");
    await page.waitForFunction((d) => document.querySelector(d) === null && document.querySelectorAll("#lock-rows tr").length === 1,
      { timeout: PAGE_DEADLINE_MS }, rowOf("ui:doc"));
    assert.deepEqual(problems, []);
  } finally {
    a.close();
    b.close();
    await page.close();
    await server.cleanup();
  }
});

test("after a restart the page reads the locks again: what ended while it was away goes", async () => {
  const server = await Holdfast.create();
  const { page } = await openPage(server);
  // The page's stream can be held off (its requests refused) while the test changes the locks,
  // so that what changed reaches the page only through `reset` and a new read, never as events.
  let holdStreamOff = false;
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    if (holdStreamOff && new URL(r.url()).pathname === "/v1/events") r.abort("connectionrefused");
    else r.continue();
  });
  const a = await Resp.connect(server.respPort);
  let c;
  try {
    await live(page);
    await a.call("LOCK.TRY", "ui:kept", "TTL", 120000);
    const gone = fields(await a.call("LOCK.TRY", "ui:gone", "TTL", 120000));
    await page.waitForFunction((k, g) => document.querySelector(k) && document.querySelector(g),
      { timeout: PAGE_DEADLINE_MS }, rowOf("ui:kept"), rowOf("ui:gone"));
    a.close();
    holdStreamOff = true;
    await server.stop();
    await page.waitForSelector('body:not([data-conn="live"])', { timeout: PAGE_DEADLINE_MS });
    await server.start();
    c = await Resp.connect(server.respPort);
    // Holds outlive the restart; one of them ends and another begins while the page is away.
    assert.deepEqual(await c.call("LOCK.RELEASE", "ui:gone", gone.handle), ["released", 1]);
    await c.call("LOCK.TRY", "ui:while-away", "TTL", 120000);
    holdStreamOff = false;
    // The page comes back on its own schedule (2 s, then longer after each failure).
    await page.waitForSelector('body[data-conn="live"]', { timeout: 4 * PAGE_DEADLINE_MS });
    await page.waitForFunction((k, g, w) => document.querySelector(k) && !document.querySelector(g) && document.querySelector(w),
      { timeout: PAGE_DEADLINE_MS }, rowOf("ui:kept"), rowOf("ui:gone"), rowOf("ui:while-away"));
    const since = Date.now();
    await c.call("LOCK.TRY", "ui:after", "TTL", 120000);
    await shows(page, "grant after a restart shown", since, (sel) => document.querySelector(sel) !== null, rowOf("ui:after"));
  } finally {
    c?.close();
    await page.close();
    await server.cleanup();
  }
});

test("with authentication on, the page asks for a token and keeps it for the tab", async () => {
  const server = await Holdfast.create({ members: [{ userId: "ops", role: "admin", token: "ops-token" }] });
  const { page } = await openPage(server);
  const a = await Resp.connect(server.respPort);
  try {
    await page.waitForSelector("#token-panel:not([hidden])", { timeout: PAGE_DEADLINE_MS });
    assert.equal(await page.evaluate(() => document.activeElement.id), "token");
    // A token the server refuses brings the question back, saying so.
    await page.keyboard.type("not-a-token");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => !document.getElementById("token-panel").hidden &&
      document.getElementById("token-error").textContent !== "", { timeout: PAGE_DEADLINE_MS });
    assert.equal(await page.evaluate(() => document.activeElement.id), "token");
    await page.keyboard.type("ops-token");
    await page.keyboard.press("Enter");
    await live(page);
    assert.equal(await page.evaluate(() => sessionStorage.getItem("holdfast.token")), "ops-token");
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    assert.equal((await a.call("AUTH", "ops-token")), "OK");
    await a.call("LOCK.TRY", "ui:auth", "TTL", 30000);
    await page.waitForSelector(rowOf("ui:auth"), { timeout: PAGE_DEADLINE_MS });
    assert.equal(await page.$eval(rowOf("ui:auth"), (tr) => tr.cells[2].textContent), "user:ops");
  } finally {
    a.close();
    await page.close();
    await server.cleanup();
  }
});

test("text meets WCAG AA contrast and every control is reachable by keyboard", async () => {
  const server = await Holdfast.create();
  const { page } = await openPage(server);
  const a = await Resp.connect(server.respPort);
  try {
    await live(page);
    await a.call("LOCK.TRY", "ui:contrast", "TTL", 30000);
    await page.waitForSelector(rowOf("ui:contrast"), { timeout: PAGE_DEADLINE_MS });
    const low = await page.evaluate(() => {
      const rgb = (s) => s.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
      const lum = ([r, g, b]) => {
        const f = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
      };
      const background = (el) => {
        for (let e = el; e; e = e.parentElement) {
          const c = getComputedStyle(e).backgroundColor;
          if (!/rgba\(.*, 0\)$/.test(c) && c !== "transparent") return rgb(c);
        }
        return [255, 255, 255];
      };
      const bad = [];
      for (const el of document.querySelectorAll("body *")) {
        if (!el.offsetParent || ![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
        const fg = lum(rgb(getComputedStyle(el).color));
        const bg = lum(background(el));
        const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
        if (ratio < 4.5) bad.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)}`);
      }
      // A placeholder is text too (the prefix search's hint).
      for (const el of document.querySelectorAll("input[placeholder]")) {
        const fg = lum(rgb(getComputedStyle(el, "::placeholder").color));
        const bg = lum(background(el));
        const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
        if (ratio < 4.5) bad.push(`${el.id}::placeholder: ${ratio.toFixed(2)}`);
      }
      return bad;
    });
    assert.deepEqual(low, []);
    // Tab reaches the prefix search and the row; the focused element always has an outline.
    const reached = [];
    for (let i = 0; i < 8; i += 1) {
      await page.keyboard.press("Tab");
      reached.push(await page.evaluate(() => {
        const el = document.activeElement;
        const outline = getComputedStyle(el).outlineStyle;
        return { id: el.id || el.dataset?.key || el.tagName, outline };
      }));
    }
    assert.ok(reached.some((r) => r.id === "prefix"), JSON.stringify(reached));
    assert.ok(reached.some((r) => r.id === "ui:contrast"), JSON.stringify(reached));
    for (const r of reached.filter((r) => r.id === "ui:contrast")) assert.notEqual(r.outline, "none");
  } finally {
    a.close();
    await page.close();
    await server.cleanup();
  }
});
