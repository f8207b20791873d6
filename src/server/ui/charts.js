// Grants per second and the wait p99, over the last minutes, from the events the page sees:
// a grant is an acquired, assigned or transferred event; a grant that waited in the queue is
// told by its dequeued event (reason granted, waitedMs); the others waited 0 ms. Drawn as SVG
// polylines by hand.
const SECONDS = 300;        // grants per second: the last 5 minutes
const WAIT_BUCKET_S = 10;   // wait p99: per 10 seconds ...
const WAIT_BUCKETS = 30;    // ... over the same 5 minutes

export class Charts {
  constructor(grantsSvg, waitSvg, grantsNow, waitNow) {
    this.grantsSvg = grantsSvg;
    this.waitSvg = waitSvg;
    this.grantsNow = grantsNow;
    this.waitNow = waitNow;
    this.grants = new Map();  // second -> grants
    this.waits = new Map();   // bucket -> { grants, waited: [ms...] }
  }

  note(name, ev, nowMs) {
    const second = Math.floor(nowMs / 1000);
    const bucket = Math.floor(second / WAIT_BUCKET_S);
    if (name === "acquired" || name === "assigned" || name === "transferred") {
      this.grants.set(second, (this.grants.get(second) ?? 0) + 1);
      this.waitBucket(bucket).grants += 1;
    } else if (name === "dequeued" && ev.reason === "granted") {
      this.waitBucket(bucket).waited.push(ev.waitedMs ?? 0);
    }
  }

  waitBucket(bucket) {
    let b = this.waits.get(bucket);
    if (!b) this.waits.set(bucket, (b = { grants: 0, waited: [] }));
    return b;
  }

  static p99(b) {
    // Grants that did not wait count as 0 ms.
    const samples = b.waited.slice().sort((x, y) => x - y);
    const zeros = Math.max(0, b.grants - samples.length);
    const n = zeros + samples.length;
    if (n === 0) return 0;
    const rank = Math.ceil(0.99 * n) - 1;
    return rank < zeros ? 0 : samples[rank - zeros];
  }

  draw(nowMs) {
    const second = Math.floor(nowMs / 1000);
    const grants = [];
    for (let s = second - SECONDS + 1; s <= second; s += 1) grants.push(this.grants.get(s) ?? 0);
    for (const s of this.grants.keys()) if (s <= second - SECONDS) this.grants.delete(s);
    const bucket = Math.floor(second / WAIT_BUCKET_S);
    const waits = [];
    for (let b = bucket - WAIT_BUCKETS + 1; b <= bucket; b += 1) {
      const w = this.waits.get(b);
      waits.push(w ? Charts.p99(w) : 0);
    }
    for (const b of this.waits.keys()) if (b <= bucket - WAIT_BUCKETS) this.waits.delete(b);
    // The last full second, and the last bucket (still filling).
    const lastGrants = grants[grants.length - 2] ?? 0;
    const lastWait = waits[waits.length - 1] ?? 0;
    Charts.line(this.grantsSvg, grants, `Grants per second over the last 5 minutes; last second ${lastGrants}`);
    Charts.line(this.waitSvg, waits, `Wait p99 over the last 5 minutes; now ${lastWait} ms`);
    this.grantsNow.textContent = String(lastGrants);
    this.waitNow.textContent = String(lastWait);
  }

  static line(svg, values, label) {
    const ns = "http://www.w3.org/2000/svg";
    let poly = svg.querySelector("polyline");
    if (!poly) {
      poly = document.createElementNS(ns, "polyline");
      svg.appendChild(poly);
    }
    const max = Math.max(1, ...values);
    const w = 300, h = 60;
    const step = values.length > 1 ? w / (values.length - 1) : w;
    poly.setAttribute("points", values.map((v, i) => `${(i * step).toFixed(1)},${(h - 2 - (v / max) * (h - 6)).toFixed(1)}`).join(" "));
    svg.querySelector("title").textContent = `${label}; peak ${max}`;
  }
}
