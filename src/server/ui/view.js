// Rendering: the table of live locks (one row per key, sorted by key, filtered by the prefix),
// the detail of one key, and the lease countdowns. Rows are rebuilt only for keys an event
// changed; countdowns are refreshed in place.
function text(el, value) {
  el.textContent = value;
  return el;
}

function make(tag, cls, content) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (content !== undefined) el.textContent = content;
  return el;
}

export function holderText(h) {
  const who = h.holder ? `${h.holder} (${h.heldBy})` : h.heldBy;
  return h.owner ? `${who}, owner ${h.owner}` : who;
}

export function kindText(entry) {
  if (entry.mode === "semaphore") {
    let used = 0;
    for (const h of entry.holds.values()) used += h.take;
    return `semaphore ${used}/${entry.permits} permits`;
  }
  return entry.mode;
}

function leaseText(expiresAt, skew) {
  if (expiresAt === null || expiresAt === undefined) return "no expiry";
  const left = Math.max(0, expiresAt - (Date.now() + skew));
  return left >= 10000 ? `${Math.round(left / 1000)} s` : `${(left / 1000).toFixed(1)} s`;
}

export class View {
  constructor(state, clock) {
    this.state = state;
    this.clock = clock;  // { skew }: server time minus this machine's
    this.rows = document.getElementById("lock-rows");
    this.empty = document.getElementById("empty");
    this.heldCount = document.getElementById("held-count");
    this.waiterCount = document.getElementById("waiter-count");
    this.detail = document.getElementById("detail");
    this.prefix = "";
    this.open = null;       // the key whose detail is shown
    this.openedFrom = null; // the row to give the focus back to
  }

  setPrefix(prefix) {
    this.prefix = prefix;
    this.renderAll();
  }

  visible(key) {
    return key.startsWith(this.prefix);
  }

  renderAll() {
    this.rows.replaceChildren();
    const keys = [...this.state.keys.keys()].filter((k) => this.visible(k)).sort();
    for (const k of keys) this.rows.appendChild(this.row(this.state.keys.get(k)));
    this.summary();
  }

  // One key changed: its row is replaced, added in key order, or removed.
  update(key) {
    const old = this.rows.querySelector(`tr[data-key="${CSS.escape(key)}"]`);
    const entry = this.state.keys.get(key);
    const focused = old !== null && old === document.activeElement;
    if (!entry || !this.visible(key)) {
      old?.remove();
    } else {
      const row = this.row(entry);
      if (old) {
        old.replaceWith(row);
      } else {
        let before = null;
        for (const r of this.rows.children) {
          if (r.dataset.key > key) {
            before = r;
            break;
          }
        }
        this.rows.insertBefore(row, before);
      }
      if (focused) row.focus();
    }
    if (this.open === key) this.renderDetail();
    this.summary();
  }

  summary() {
    text(this.heldCount, String(this.state.heldCount()));
    text(this.waiterCount, String(this.state.waiterCount()));
    this.empty.hidden = this.rows.children.length > 0;
  }

  row(entry) {
    const tr = document.createElement("tr");
    tr.dataset.key = entry.key;
    tr.tabIndex = 0;
    const holds = [...entry.holds.values()];
    const first = holds[0];
    tr.appendChild(make("td", "key", entry.key));
    tr.appendChild(make("td", "kind", holds.length > 0 ? kindText(entry) : "free"));
    const who = make("td", "holder");
    if (holds.length === 0) who.textContent = "—";
    else if (holds.length === 1) who.textContent = holderText(first);
    else who.textContent = `${holds.length} holders: ${holds.map((h) => h.heldBy).join(", ")}`;
    tr.appendChild(who);
    const token = make("td", "token", holds.map((h) => h.token).join(", ") || "—");
    if (first) tr.dataset.token = String(first.token);
    tr.appendChild(token);
    const lease = make("td");
    if (first) {
      // The first lease to end among the key's holds.
      let end = null;
      for (const h of holds) if (h.leaseExpiresAt !== null && (end === null || h.leaseExpiresAt < end)) end = h.leaseExpiresAt;
      const box = make("div", "lease");
      const meter = document.createElement("meter");
      meter.min = 0;
      const total = end === null ? 1 : Math.max(1, end - (first.acquiredAt ?? end));
      meter.max = total;
      box.dataset.expires = end === null ? "" : String(end);
      meter.setAttribute("aria-label", "lease left");
      box.appendChild(meter);
      box.appendChild(make("span", "left"));
      lease.appendChild(box);
      this.tick(box);
    } else {
      lease.textContent = "—";
    }
    tr.appendChild(lease);
    const waiting = make("td", "waiting");
    const n = entry.waiters.length + entry.earlierWaiters;
    if (n === 0) {
      waiting.textContent = "0";
    } else {
      const list = make("ol", "waiters");
      for (const w of entry.waiters.slice(0, 3)) list.appendChild(make("li", null, w.holder ?? w.heldBy));
      if (n > 3) list.appendChild(make("li", null, `and ${n - 3} more`));
      waiting.appendChild(list);
    }
    tr.appendChild(waiting);
    tr.addEventListener("click", () => this.showDetail(entry.key, tr));
    tr.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        this.showDetail(entry.key, tr);
      } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const next = e.key === "ArrowDown" ? tr.nextElementSibling : tr.previousElementSibling;
        next?.focus();
      }
    });
    return tr;
  }

  tick(box) {
    const meter = box.querySelector("meter");
    const left = box.querySelector(".left");
    const end = box.dataset.expires === "" ? null : Number(box.dataset.expires);
    if (end === null) {
      meter.value = meter.max;
      text(left, "no expiry");
      return;
    }
    meter.value = Math.max(0, end - (Date.now() + this.clock.skew));
    text(left, leaseText(end, this.clock.skew));
  }

  tickAll() {
    for (const box of this.rows.querySelectorAll(".lease")) this.tick(box);
    if (this.open !== null) for (const el of this.detail.querySelectorAll("[data-expires]")) {
      const end = el.dataset.expires === "" ? null : Number(el.dataset.expires);
      text(el, leaseText(end, this.clock.skew));
    }
  }

  showDetail(key, fromRow) {
    this.open = key;
    this.openedFrom = fromRow ?? null;
    this.detail.hidden = false;
    this.renderDetail();
    document.getElementById("detail-heading").focus();
  }

  closeDetail() {
    this.detail.hidden = true;
    const key = this.open;
    this.open = null;
    const row = key !== null ? this.rows.querySelector(`tr[data-key="${CSS.escape(key)}"]`) : null;
    (row ?? this.openedFrom ?? document.getElementById("locks-heading")).focus();
  }

  renderDetail() {
    const key = this.open;
    const entry = this.state.keys.get(key);
    text(document.getElementById("detail-heading"), `Key ${key}${entry ? ` (${entry.holds.size > 0 ? kindText(entry) : "free"})` : " (free)"}`);
    const holds = document.getElementById("detail-holds");
    holds.replaceChildren();
    for (const h of entry ? entry.holds.values() : []) {
      const li = make("li", null, `token ${h.token}: ${holderText(h)}, ${h.scope}, ${h.kind}${h.mode === "semaphore" ? `, takes ${h.take}` : ""}, lease `);
      const left = make("span", null, leaseText(h.leaseExpiresAt, this.clock.skew));
      left.dataset.expires = h.leaseExpiresAt === null ? "" : String(h.leaseExpiresAt);
      li.appendChild(left);
      holds.appendChild(li);
    }
    if (!holds.children.length) holds.appendChild(make("li", null, "none"));
    const waiters = document.getElementById("detail-waiters");
    waiters.replaceChildren();
    for (const w of entry ? entry.waiters : []) {
      const who = w.holder ? `${w.holder} (${w.heldBy})` : w.heldBy;
      waiters.appendChild(make("li", null, `${who}${w.owner ? `, owner ${w.owner}` : ""}, ${w.mode}${w.take ? ` ${w.take}` : ""}, waiting since ${new Date(w.since).toLocaleTimeString()}`));
    }
    if (entry && entry.earlierWaiters > 0)
      waiters.appendChild(make("li", null, `${entry.earlierWaiters} that queued before this page opened`));
    if (!waiters.children.length) waiters.appendChild(make("li", null, "none"));
    const events = document.getElementById("detail-events");
    events.replaceChildren();
    const recent = this.state.recent.get(key) ?? [];
    for (const ev of recent.slice().reverse()) {
      const who = ev.holder ? `${ev.holder} (${ev.heldBy})` : ev.heldBy;
      const extra = ev.name === "dequeued" ? ` (${ev.reason}${ev.waitedMs !== undefined ? `, ${ev.waitedMs} ms` : ""})` : "";
      const token = ev.token !== null && ev.token !== undefined ? ` token ${ev.token}` : "";
      events.appendChild(make("li", `kind-${ev.name}`, `${new Date(ev.at).toLocaleTimeString()} ${ev.name}${token} ${who}${extra}`));
    }
    if (!events.children.length) events.appendChild(make("li", null, "none seen yet"));
  }
}
