// The page: reads the locks (GET /v1/locks), follows them with the lock-event stream
// (GET /v1/events), and draws them. On `reset` (the server could not resume the stream, or it
// restarted) it reads the locks again. With authentication on, it asks for a token and keeps it
// in this tab only (sessionStorage).
import { Charts } from "./charts.js";
import { LockState } from "./state.js";
import { EventStream } from "./stream.js";
import { View } from "./view.js";

const TOKEN_KEY = "holdfast.token";
const $ = (id) => document.getElementById(id);

const state = new LockState();
const clock = { skew: 0 };
const skewSamples = [];
let view;
let charts;
let stream;
let loadGeneration = 0;
const announcer = { pending: [], timer: null };

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

async function api(path) {
  const headers = { Accept: "application/json" };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const res = await fetch(path, { headers, cache: "no-store" });
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const e = new Error(body?.message ?? `HTTP ${res.status}`);
    e.status = res.status;
    throw e;
  }
  return body;
}

function notice(message) {
  const el = $("notice");
  el.textContent = message ?? "";
  el.hidden = !message;
}

function setConnection(status, delayMs) {
  const el = $("conn");
  el.dataset.state = status;
  document.body.dataset.conn = status;
  el.textContent = {
    connecting: "Connecting…",
    live: "Live",
    reconnecting: `Reconnecting${delayMs ? ` in ${Math.ceil(delayMs / 1000)} s` : ""}…`,
    failed: `Server unreachable; trying again${delayMs ? ` in ${Math.ceil(delayMs / 1000)} s` : ""}`,
  }[status] ?? status;
}

// Every hold, page by page; then, for the keys it shows, the waiters that queued before the
// page could see them (LOCK.STATUS counts them).
async function loadState() {
  const generation = ++loadGeneration;
  state.clear();
  view.renderAll();
  try {
    let cursor = "0";
    for (let pages = 0; pages < 100; pages += 1) {
      const page = await api(`/v1/locks?count=1000&cursor=${encodeURIComponent(cursor)}`);
      if (generation !== loadGeneration) return;
      state.load(page.locks);
      cursor = page.nextCursor;
      if (cursor === "0") break;
    }
    notice(null);
  } catch (e) {
    if (generation !== loadGeneration) return;
    if (e.status === 401) {
      askForToken();
      return;
    }
    if (e.status === 403) {
      notice("Your role cannot list every lock: this page shows the keys that change while it is open.");
    } else {
      notice(`Could not read the locks: ${e.message}`);
    }
  }
  view.renderAll();
  const keys = [...state.keys.keys()].slice(0, 200);
  for (const key of keys) {
    api(`/v1/locks/status?key=${encodeURIComponent(key)}`)
      .then((s) => {
        if (generation !== loadGeneration) return;
        const e = state.keys.get(key);
        if (!e) return;
        e.earlierWaiters = Math.max(0, s.waiters - e.waiters.length);
        if (e.earlierWaiters > 0) view.update(key);
      })
      .catch(() => {});
  }
}

function noteSkew(at) {
  // The server's clock against this machine's: the largest recent (at - now) is the one with
  // the least delay in it.
  skewSamples.push(at - Date.now());
  if (skewSamples.length > 20) skewSamples.shift();
  clock.skew = Math.max(...skewSamples);
}

function announce(name, ev) {
  announcer.pending.push(`${ev.key} ${name}`);
  if (announcer.timer) return;
  announcer.timer = setTimeout(() => {
    const n = announcer.pending.length;
    const last = announcer.pending[n - 1];
    $("announce").textContent = n === 1 ? last : `${n} changes; latest: ${last}`;
    announcer.pending = [];
    announcer.timer = null;
  }, 3000);
}

function onEvent(name, ev) {
  noteSkew(ev.at);
  charts.note(name, ev, ev.at);
  const key = state.apply(name, ev);
  view.update(key);
  if (name !== "renewed") announce(name, ev);
}

function askForToken(message) {
  stream?.stop();
  $("token-panel").hidden = false;
  $("token-error").textContent = message ?? (token() ? "The server did not accept that token." : "");
  setConnection("failed");
  $("conn").textContent = "Needs a token";
  $("token").focus();
}

function startStream() {
  stream?.stop();
  stream = new EventStream({
    token,
    onEvent,
    onReset: () => loadState(),
    onState: (status, delay) => {
      setConnection(status, delay);
      // The first connection, and one after the server was away: read the state (an event
      // stream that resumes sends what was missed instead, and a reset says when it cannot).
      if (status === "live" && !stream.loaded) {
        stream.loaded = true;
        loadState();
      }
    },
    onUnauthorized: () => askForToken(),
  });
  stream.start();
}

function main() {
  view = new View(state, clock);
  charts = new Charts($("grants-chart"), $("wait-chart"), $("grants-now"), $("wait-now"));
  $("forget-token").hidden = !token();
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const value = $("token").value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    $("token").value = "";
    $("token-panel").hidden = true;
    $("forget-token").hidden = false;
    startStream();
  });
  $("forget-token").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    window.location.reload();
  });
  $("search").addEventListener("submit", (e) => e.preventDefault());
  $("prefix").addEventListener("input", (e) => view.setPrefix(e.target.value));
  $("detail-close").addEventListener("click", () => view.closeDetail());
  $("detail").addEventListener("keydown", (e) => {
    if (e.key === "Escape") view.closeDetail();
  });
  setInterval(() => view.tickAll(), 250);
  setInterval(() => charts.draw(Date.now() + clock.skew), 1000);
  charts.draw(Date.now());
  startStream();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
else main();
