// What the page knows of the locks: each key's holds and waiters, rebuilt from GET /v1/locks
// and kept up to date by lock events (docs/events.md). Applying an event twice, or one older
// than what a listing already showed, changes nothing: a hold is known by its token, and a
// token that ended never comes back.
const ENDED_KEPT = 64;       // ended tokens remembered per key
const EVENTS_KEPT = 50;      // recent events shown per key
const KEYS_REMEMBERED = 2000; // keys whose recent events are kept after they went free

export class LockState {
  constructor() {
    this.keys = new Map();     // key -> { key, mode, permits, holds: Map(token -> hold), waiters: [] }
    this.ended = new Map();    // key -> Set of ended tokens
    this.recent = new Map();   // key -> recent events, newest last
  }

  clear() {
    this.keys.clear();
    this.ended.clear();
  }

  entry(key) {
    let e = this.keys.get(key);
    if (!e) {
      e = { key, mode: "exclusive", permits: 0, holds: new Map(), waiters: [], earlierWaiters: 0 };
      this.keys.set(key, e);
    }
    return e;
  }

  forgetIfIdle(key) {
    const e = this.keys.get(key);
    if (e && e.holds.size === 0 && e.waiters.length === 0) this.keys.delete(key);
  }

  hasEnded(key, token) {
    return this.ended.get(key)?.has(token) ?? false;
  }

  markEnded(key, token) {
    let set = this.ended.get(key);
    if (!set) this.ended.set(key, (set = new Set()));
    set.add(token);
    if (set.size > ENDED_KEPT) set.delete(set.values().next().value);
  }

  // A hold as GET /v1/locks lists it (ISO times) or as an event tells it (epoch ms; an event
  // leaves out the fields at their defaults, and `acquiredAt` when it is the event's `at`).
  static hold(h) {
    const ms = (t) => (t === null || t === undefined ? null : typeof t === "number" ? t : Date.parse(t));
    return {
      token: h.token,
      heldBy: h.heldBy,
      owner: h.owner ?? null,
      holder: h.holder ?? null,
      acquiredAt: ms(h.acquiredAt ?? h.at),
      leaseExpiresAt: ms(h.leaseExpiresAt),
      scope: h.scope ?? "lease",
      kind: h.kind ?? "handle",
      mode: h.mode ?? "exclusive",
      permits: h.permits ?? 0,
      take: h.take ?? 0,
    };
  }

  load(holds) {
    for (const h of holds) this.grant(h.key, LockState.hold(h));
  }

  grant(key, hold) {
    if (this.hasEnded(key, hold.token)) return;
    const e = this.entry(key);
    if (hold.mode === "exclusive") {
      // One hold: a newer token replaces it (a re-take, a transfer), an older one is stale.
      for (const t of e.holds.keys()) if (t > hold.token) return;
      for (const t of e.holds.keys()) this.markEnded(key, t);
      e.holds.clear();
    }
    e.mode = hold.mode;
    e.permits = hold.permits;
    e.holds.set(hold.token, hold);
  }

  // Applies one event; answers the key it changed.
  apply(name, ev) {
    const key = ev.key;
    this.remember(key, name, ev);
    switch (name) {
      case "acquired":
      case "assigned":
      case "transferred":
        this.grant(key, LockState.hold(ev));
        break;
      case "renewed": {
        const h = this.keys.get(key)?.holds.get(ev.token);
        if (h) h.leaseExpiresAt = ev.leaseExpiresAt;
        break;
      }
      case "released":
      case "unassigned":
      case "expired": {
        this.markEnded(key, ev.token);
        this.keys.get(key)?.holds.delete(ev.token);
        this.forgetIfIdle(key);
        break;
      }
      case "queued": {
        const e = this.entry(key);
        if (!e.waiters.some((w) => w.waiter === ev.waiter))
          e.waiters.push({ waiter: ev.waiter, heldBy: ev.heldBy, owner: ev.owner ?? null,
                           holder: ev.holder ?? null, mode: ev.mode ?? "exclusive", take: ev.take ?? 0,
                           since: ev.at, timeoutMs: ev.timeoutMs ?? null });
        break;
      }
      case "dequeued": {
        const e = this.keys.get(key);
        if (e) {
          const before = e.waiters.length;
          e.waiters = e.waiters.filter((w) => w.waiter !== ev.waiter);
          // A waiter that queued before the page saw it was counted as an earlier one.
          if (e.waiters.length === before && e.earlierWaiters > 0) e.earlierWaiters -= 1;
        }
        this.forgetIfIdle(key);
        break;
      }
      default:
        break;
    }
    return key;
  }

  remember(key, name, ev) {
    let list = this.recent.get(key);
    if (!list) {
      if (this.recent.size >= KEYS_REMEMBERED) this.recent.delete(this.recent.keys().next().value);
      this.recent.set(key, (list = []));
    }
    list.push({ name, ...ev });
    if (list.length > EVENTS_KEPT) list.shift();
  }

  heldCount() {
    let n = 0;
    for (const e of this.keys.values()) if (e.holds.size > 0) n += 1;
    return n;
  }

  waiterCount() {
    let n = 0;
    for (const e of this.keys.values()) n += e.waiters.length + e.earlierWaiters;
    return n;
  }
}
