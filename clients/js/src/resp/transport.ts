// The RESP transport (Node only: TCP or a Unix socket). Calls that answer at once share one
// pipelined connection; a blocking acquire or assign waits on the server and so would hold up
// everything behind it on its connection, so each one takes a connection of its own from a
// small pool of idle ones (kept up to MAX_IDLE). Connections open lazily; with several nodes
// in the URL, opening one tries them in turn, starting with the last that answered.
import { ConnectionError, ProtocolError } from "../errors.js";
import { respModeArgs, type KeyModeRequest } from "../mode.js";
import type { GroupRequest, HoldRequest, Transport } from "../transport.js";
import type { TlsOptions } from "../tls.js";
import type { LockPage } from "../types.js";
import { describeNode, type RespNode } from "../url.js";
import * as wire from "../wire.js";
import { asRecord, type RespValue } from "./codec.js";
import { RespConnection, type Credentials } from "./connection.js";

const MAX_IDLE = 4;

export interface RespOptions {
  connectTimeoutMs: number;
  /** rediss://: every TCP connection speaks TLS with these settings. */
  tls?: TlsOptions;
  /** How long a call may wait for its answer beyond the acquire timeout it carries. */
  callTimeoutMs: number;
}

type Context = { key?: string; timeoutMs?: number };

// `TTL <ms> [OWNER <owner>]`: what every grant names.
function groupArgs(r: GroupRequest): string[] {
  return ["TTL", String(r.ttlMs), ...(r.owner !== undefined ? ["OWNER", r.owner] : [])];
}

// A single key's grant: TTL and OWNER, then its mode and lock-delay.
function holdArgs(r: HoldRequest): string[] {
  return [...groupArgs(r), ...respModeArgs(r), ...(r.lockDelayMs !== undefined ? ["LOCKDELAY", String(r.lockDelayMs)] : [])];
}

// `KEY <key> [MODE ..|PERMITS n [TAKE k]]` per key: the word after KEY is always the key.
function keyArgs(keys: KeyModeRequest[]): string[] {
  return keys.flatMap((k) => ["KEY", k.key, ...respModeArgs(k)]);
}

export class RespTransport implements Transport {
  private shared: Promise<RespConnection> | null = null;
  private readonly idle: RespConnection[] = [];
  private readonly all = new Set<RespConnection>();
  private preferred = 0;
  private closed = false;

  constructor(
    private readonly nodes: RespNode[],
    private readonly credentials: Credentials,
    private readonly options: RespOptions,
  ) {}

  async acquire(key: string, request: HoldRequest, timeoutMs: number) {
    const args = ["LOCK.ACQUIRE", key, ...holdArgs(request), "TIMEOUT", String(timeoutMs)];
    return wire.decodeHandle(await this.run(args, { key, timeoutMs }, timeoutMs > 0));
  }

  async tryAcquire(key: string, request: HoldRequest) {
    const reply = await this.run(["LOCK.TRY", key, ...holdArgs(request)], { key });
    return reply === null ? null : wire.decodeHandle(this.fields(reply));
  }

  async acquireAll(keys: KeyModeRequest[], request: GroupRequest, timeoutMs: number) {
    const args = ["LOCK.ACQUIREALL", ...groupArgs(request), "TIMEOUT", String(timeoutMs), ...keyArgs(keys)];
    return wire.decodeGroup(this.fields(await this.run(args, { timeoutMs }, timeoutMs > 0)));
  }

  async tryAcquireAll(keys: KeyModeRequest[], request: GroupRequest) {
    const reply = await this.run(["LOCK.TRYALL", ...groupArgs(request), ...keyArgs(keys)]);
    return reply === null ? null : wire.decodeGroup(this.fields(reply));
  }

  async renew(key: string, handle: string, ttlMs: number) {
    return wire.decodeRenew(this.fields(await this.run(["LOCK.RENEW", key, handle, "TTL", String(ttlMs)])));
  }

  async release(key: string, handle: string) {
    return wire.decodeRelease(this.fields(await this.run(["LOCK.RELEASE", key, handle])));
  }

  async status(key: string) {
    return wire.decodeStatus(this.fields(await this.run(["LOCK.STATUS", key])));
  }

  async list(match: string | undefined, cursor: string, count: number | undefined): Promise<LockPage> {
    const args = ["LOCK.LIST"];
    if (match !== undefined) args.push("MATCH", match);
    args.push("CURSOR", cursor);
    if (count !== undefined) args.push("COUNT", String(count));
    const reply = await this.run(args);
    if (!Array.isArray(reply) || reply.length !== 2 || typeof reply[0] !== "string" || !Array.isArray(reply[1]))
      throw new ProtocolError("unexpected reply from the server: not [cursor, holds]");
    return { locks: reply[1].map((h) => wire.decodeInfo(this.fields(h))), nextCursor: reply[0] };
  }

  async assign(key: string, holderId: string, ttlMs: number | undefined, timeoutMs: number | undefined, lockDelayMs: number | undefined) {
    const args = ["LOCK.ASSIGN", key, holderId];
    if (ttlMs !== undefined) args.push("TTL", String(ttlMs));
    if (timeoutMs !== undefined) args.push("TIMEOUT", String(timeoutMs));
    if (lockDelayMs !== undefined) args.push("LOCKDELAY", String(lockDelayMs));
    const reply = await this.run(args, { key, timeoutMs: timeoutMs ?? 0 }, (timeoutMs ?? 0) > 0);
    return wire.decodeAssignment(this.fields(reply));
  }

  async transfer(key: string, toId: string, fromId: string) {
    return wire.decodeTransfer(this.fields(await this.run(["LOCK.TRANSFER", key, toId, "FROM", fromId])));
  }

  async unassign(key: string, holderId: string | undefined) {
    const args = ["LOCK.UNASSIGN", key];
    if (holderId !== undefined) args.push(holderId);
    return wire.decodeUnassign(this.fields(await this.run(args)));
  }

  async holder(key: string) {
    return wire.decodeHolder(this.fields(await this.run(["LOCK.HOLDER", key])));
  }

  async check(key: string, holderId: string | undefined) {
    const args = ["LOCK.CHECK", key];
    if (holderId !== undefined) args.push(holderId);
    return wire.decodeHolder(this.fields(await this.run(args)));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const conn of this.all) conn.close();
    this.all.clear();
    this.idle.length = 0;
    this.shared = null;
  }

  private fields(reply: RespValue): wire.WireRecord {
    const r = asRecord(reply);
    if (r === null) throw new ProtocolError("unexpected reply from the server: not a map of fields");
    return r;
  }

  // Runs one command; a blocking one on a connection of its own.
  private async run(args: string[], context: Context = {}, blocking = false): Promise<RespValue> {
    const limitMs = this.options.callTimeoutMs + (context.timeoutMs ?? 0);
    if (!blocking) {
      const conn = await this.sharedConnection();
      return RespConnection.check(await conn.call(args, limitMs), context);
    }
    const conn = await this.idleConnection();
    try {
      return RespConnection.check(await conn.call(args, limitMs), context);
    } finally {
      this.giveBack(conn);
    }
  }

  private async sharedConnection(): Promise<RespConnection> {
    if (this.shared !== null) {
      const conn = await this.shared.catch(() => null);
      if (conn !== null && conn.usable) return conn;
      if (conn !== null) this.all.delete(conn);
    }
    const opening = this.open();
    this.shared = opening;
    opening.catch(() => {
      if (this.shared === opening) this.shared = null;
    });
    return opening;
  }

  private async idleConnection(): Promise<RespConnection> {
    while (this.idle.length > 0) {
      const conn = this.idle.pop()!;
      if (conn.usable) return conn;
      this.all.delete(conn);
    }
    return this.open();
  }

  private giveBack(conn: RespConnection): void {
    if (!this.closed && conn.usable && !conn.busy && this.idle.length < MAX_IDLE) {
      this.idle.push(conn);
    } else {
      conn.close();
      this.all.delete(conn);
    }
  }

  // Opens a connection to the preferred node, or the next ones in turn when it cannot be reached.
  private async open(): Promise<RespConnection> {
    if (this.closed) throw new ConnectionError("the client is closed");
    const failures: string[] = [];
    for (let i = 0; i < this.nodes.length; i++) {
      const index = (this.preferred + i) % this.nodes.length;
      try {
        const conn = await RespConnection.open(this.nodes[index]!, this.credentials, this.options.connectTimeoutMs, this.options.tls);
        if (this.closed) {
          conn.close();
          throw new ConnectionError("the client is closed");
        }
        this.preferred = index;
        this.all.add(conn);
        return conn;
      } catch (e) {
        if (!(e instanceof ConnectionError) || this.nodes.length === 1) throw e;
        failures.push(`${describeNode(this.nodes[index]!)}: ${e.message}`);
      }
    }
    throw new ConnectionError(`no node could be reached (${failures.join("; ")})`);
  }
}
