// A small RESP client for the browser test: sends commands, reads RESP2 replies in order.
// Enough for LOCK.TRY, LOCK.ACQUIRE and LOCK.RELEASE; the page is what is tested.
import net from "node:net";

export class Resp {
  static connect(port) {
    return new Promise((resolve, reject) => {
      const socket = net.createConnection({ host: "127.0.0.1", port }, () => resolve(new Resp(socket)));
      socket.once("error", reject);
    });
  }

  constructor(socket) {
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    this.waiting = [];
    socket.on("data", (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.drain();
    });
    socket.on("error", () => {});
  }

  // Sends a command; resolves with its reply (an error reply resolves as { error }).
  call(...args) {
    const parts = [`*${args.length}\r\n`];
    for (const a of args) {
      const s = String(a);
      parts.push(`$${Buffer.byteLength(s)}\r\n${s}\r\n`);
    }
    this.socket.write(parts.join(""));
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.drain();
    });
  }

  close() {
    this.socket.destroy();
  }

  drain() {
    while (this.waiting.length > 0) {
      const parsed = Resp.parse(this.buffer, 0);
      if (!parsed) return;
      this.buffer = this.buffer.subarray(parsed.end);
      this.waiting.shift()(parsed.value);
    }
  }

  static parse(buf, at) {
    const nl = buf.indexOf("\r\n", at);
    if (nl < 0) return null;
    const type = String.fromCharCode(buf[at]);
    const line = buf.toString("utf8", at + 1, nl);
    const next = nl + 2;
    switch (type) {
      case "+":
        return { value: line, end: next };
      case "-":
        return { value: { error: line }, end: next };
      case ":":
        return { value: Number(line), end: next };
      case "$": {
        const n = Number(line);
        if (n < 0) return { value: null, end: next };
        if (buf.length < next + n + 2) return null;
        return { value: buf.toString("utf8", next, next + n), end: next + n + 2 };
      }
      case "*": {
        const n = Number(line);
        if (n < 0) return { value: null, end: next };
        const items = [];
        let end = next;
        for (let i = 0; i < n; i += 1) {
          const item = Resp.parse(buf, end);
          if (!item) return null;
          items.push(item.value);
          end = item.end;
        }
        return { value: items, end };
      }
      default:
        throw new Error(`unexpected RESP type ${type}`);
    }
  }
}

// A RESP2 hold map ([name, value, ...]) as an object.
export function fields(reply) {
  const o = {};
  for (let i = 0; i + 1 < reply.length; i += 2) o[reply[i]] = reply[i + 1];
  return o;
}
