// RESP2/RESP3 encoding of commands and incremental decoding of replies.
//
// Commands go out as arrays of bulk strings. Replies are decoded from a growing buffer: read()
// returns the next complete reply, or NEED_MORE when the buffer ends inside one (the next chunk
// of bytes is appended and the reply is decoded again from its first byte). RESP3 maps become
// plain objects keyed by the string form of their keys; sets become arrays; attributes and
// pushes (which Holdfast does not send) are skipped.
import { Buffer } from "node:buffer";

/** An error reply (`-CODE message`). It is a value, not a thrown error: it answers one command. */
export class RespErrorReply {
  constructor(readonly line: string) {}
}

export type RespValue =
  | string
  | number
  | bigint
  | boolean
  | null
  | RespValue[]
  | { [field: string]: RespValue }
  | RespErrorReply;

export const NEED_MORE = Symbol("need more bytes");

const CRLF = "\r\n";

/** One command as a RESP array of bulk strings. */
export function encodeCommand(args: readonly string[]): Buffer {
  let out = `*${args.length}${CRLF}`;
  for (const a of args) out += `$${Buffer.byteLength(a, "utf8")}${CRLF}${a}${CRLF}`;
  return Buffer.from(out, "utf8");
}

class Incomplete extends Error {}
const incomplete = new Incomplete();
const SKIPPED = Symbol("skipped");

export class ProtocolViolation extends Error {}

export class ReplyDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private pos = 0;

  push(chunk: Buffer): void {
    this.buffer = this.pos === this.buffer.length ? chunk : Buffer.concat([this.buffer.subarray(this.pos), chunk]);
    this.pos = 0;
  }

  /** The next complete reply, or NEED_MORE. Throws ProtocolViolation on bytes that are not RESP. */
  read(): RespValue | typeof NEED_MORE {
    const start = this.pos;
    try {
      for (;;) {
        const value = this.value();
        if (value !== SKIPPED) return value;
      }
    } catch (e) {
      if (e instanceof Incomplete) {
        this.pos = start;
        return NEED_MORE;
      }
      throw e;
    }
  }

  private line(): string {
    const end = this.buffer.indexOf(CRLF, this.pos, "latin1");
    if (end < 0) throw incomplete;
    const text = this.buffer.toString("utf8", this.pos, end);
    this.pos = end + 2;
    return text;
  }

  private integer(text: string): number {
    if (!/^-?\d+$/.test(text)) throw new ProtocolViolation(`not an integer: ${JSON.stringify(text)}`);
    return Number(text);
  }

  private bulk(length: number): string {
    if (this.buffer.length < this.pos + length + 2) throw incomplete;
    const text = this.buffer.toString("utf8", this.pos, this.pos + length);
    if (this.buffer[this.pos + length] !== 13 || this.buffer[this.pos + length + 1] !== 10)
      throw new ProtocolViolation("bulk string not followed by CRLF");
    this.pos += length + 2;
    return text;
  }

  private items(n: number): RespValue[] {
    const out: RespValue[] = [];
    while (out.length < n) {
      const v = this.value();
      if (v !== SKIPPED) out.push(v);
    }
    return out;
  }

  private value(): RespValue | typeof SKIPPED {
    if (this.pos >= this.buffer.length) throw incomplete;
    const type = String.fromCharCode(this.buffer[this.pos]!);
    this.pos += 1;
    const head = this.line();
    switch (type) {
      case "+":
        return head;
      case "-":
        return new RespErrorReply(head);
      case ":":
        return this.integer(head);
      case "$":
      case "=": {
        const n = this.integer(head);
        if (n < 0) return null;
        const text = this.bulk(n);
        return type === "=" ? text.slice(4) : text;  // verbatim: "txt:" precedes the text
      }
      case "!": {
        return new RespErrorReply(this.bulk(this.integer(head)));
      }
      case "*":
      case "~": {
        const n = this.integer(head);
        return n < 0 ? null : this.items(n);
      }
      case ">": {
        this.items(this.integer(head));
        return SKIPPED;
      }
      case "%":
      case "|": {
        const pairs = this.items(this.integer(head) * 2);
        if (type === "|") return SKIPPED;  // an attribute: the reply follows it
        const map: { [field: string]: RespValue } = {};
        for (let i = 0; i < pairs.length; i += 2) map[String(pairs[i])] = pairs[i + 1]!;
        return map;
      }
      case "_":
        return null;
      case "#":
        if (head !== "t" && head !== "f") throw new ProtocolViolation(`not a boolean: ${JSON.stringify(head)}`);
        return head === "t";
      case ",":
        return head === "inf" ? Infinity : head === "-inf" ? -Infinity : Number(head);
      case "(":
        if (!/^-?\d+$/.test(head)) throw new ProtocolViolation(`not a big number: ${JSON.stringify(head)}`);
        return BigInt(head);
      default:
        throw new ProtocolViolation(`unknown reply type byte ${JSON.stringify(type)}`);
    }
  }
}

/** A RESP2 reply of fields is a flat [name, value, name, value...] array; RESP3 sends a map. */
export function asRecord(value: RespValue): Record<string, RespValue> | null {
  if (Array.isArray(value)) {
    if (value.length % 2 !== 0) return null;
    const map: Record<string, RespValue> = {};
    for (let i = 0; i < value.length; i += 2) map[String(value[i])] = value[i + 1]!;
    return map;
  }
  if (value !== null && typeof value === "object" && !(value instanceof RespErrorReply)) return value;
  return null;
}
