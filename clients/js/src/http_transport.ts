// The HTTP/JSON transport, through the platform's fetch (Node 18+ and browsers alike). Each
// call is one request; a blocking acquire is one request that the server answers when the
// key is granted or the timeout passes. Aborting a waiting request (close(), or the call's
// own deadline) hangs up, which takes the waiter out of the server's queue.
import { ConnectionError, HoldfastError, ProtocolError, errorFromWire, type ErrorDetails } from "./errors.js";
import type { KeyModeRequest } from "./mode.js";
import type { GroupRequest, HoldRequest, Transport } from "./transport.js";
import type { LockPage } from "./types.js";
import * as wire from "./wire.js";

export interface HttpOptions {
  token: string | undefined;
  /** How long a call may wait for its answer beyond the acquire timeout it carries. */
  callTimeoutMs: number;
  fetch: typeof fetch;
  /** Called by close() after the calls in flight are aborted (an https agent's connections). */
  release?: () => void;
}

export class HttpTransport implements Transport {
  private readonly base: string;
  private readonly inflight = new Set<AbortController>();
  private closed = false;

  constructor(
    baseUrl: string,
    private readonly options: HttpOptions,
  ) {
    this.base = baseUrl.replace(/\/+$/, "");
  }

  async acquire(key: string, request: HoldRequest, timeoutMs: number) {
    const r = wire.record(await this.call("POST", "/v1/locks/acquire", { key, ...request, timeoutMs }, { key, timeoutMs }), "the reply");
    return wire.decodeHandle(r.handle);
  }

  async tryAcquire(key: string, request: HoldRequest) {
    const r = wire.record(await this.call("POST", "/v1/locks/try-acquire", { key, ...request }, { key }), "the reply");
    return r.handle === null ? null : wire.decodeHandle(r.handle);
  }

  async acquireAll(keys: KeyModeRequest[], request: GroupRequest, timeoutMs: number) {
    return wire.decodeGroup(await this.call("POST", "/v1/locks/acquire-all", { keys, ...request, timeoutMs }, { timeoutMs }));
  }

  async tryAcquireAll(keys: KeyModeRequest[], request: GroupRequest) {
    const r = wire.record(await this.call("POST", "/v1/locks/try-acquire-all", { keys, ...request }), "the reply");
    return r.handle === null ? null : wire.decodeGroup(r);
  }

  async renew(key: string, handle: string, ttlMs: number) {
    return wire.decodeRenew(await this.call("POST", "/v1/locks/renew", { key, handle, ttlMs }));
  }

  async release(key: string, handle: string) {
    return wire.decodeRelease(await this.call("POST", "/v1/locks/release", { key, handle }));
  }

  async status(key: string) {
    return wire.decodeStatus(await this.call("GET", `/v1/locks/status?key=${encodeURIComponent(key)}`));
  }

  async list(match: string | undefined, cursor: string, count: number | undefined): Promise<LockPage> {
    const query = new URLSearchParams({ cursor });
    if (match !== undefined) query.set("match", match);
    if (count !== undefined) query.set("count", String(count));
    const r = wire.record(await this.call("GET", `/v1/locks?${query}`), "the page");
    if (!Array.isArray(r.locks) || typeof r.nextCursor !== "string")
      throw new ProtocolError("unexpected reply from the server: not a page of locks");
    return { locks: r.locks.map(wire.decodeInfo), nextCursor: r.nextCursor };
  }

  async assign(key: string, holderId: string, ttlMs: number | undefined, timeoutMs: number | undefined, lockDelayMs: number | undefined) {
    const body = {
      key,
      holderId,
      ...(ttlMs !== undefined && { ttlMs }),
      ...(timeoutMs !== undefined && { timeoutMs }),
      ...(lockDelayMs !== undefined && { lockDelayMs }),
    };
    return wire.decodeAssignment(await this.call("POST", "/v1/locks/assign", body, { key, timeoutMs: timeoutMs ?? 0 }));
  }

  async transfer(key: string, toId: string, fromId: string) {
    return wire.decodeTransfer(await this.call("POST", "/v1/locks/transfer", { key, toId, fromId }));
  }

  async unassign(key: string, holderId: string | undefined) {
    const body = { key, ...(holderId !== undefined && { holderId }) };
    return wire.decodeUnassign(await this.call("POST", "/v1/locks/unassign", body));
  }

  async holder(key: string) {
    return wire.decodeHolder(await this.call("GET", `/v1/locks/holder?key=${encodeURIComponent(key)}`));
  }

  async check(key: string, holderId: string | undefined) {
    const query = holderId === undefined ? "" : `?holderId=${encodeURIComponent(holderId)}`;
    return wire.decodeHolder(await this.call("GET", `/v1/locks/${encodeURIComponent(key)}/check${query}`));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.inflight) controller.abort();
    this.options.release?.();
  }

  // One request; `context.timeoutMs` is how long the server may wait before it answers.
  private async call(
    method: "GET" | "POST",
    path: string,
    body?: object,
    context: { key?: string; timeoutMs?: number } = {},
  ): Promise<unknown> {
    if (this.closed) throw new ConnectionError("the client is closed");
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const controller = new AbortController();
    const limitMs = this.options.callTimeoutMs + (context.timeoutMs ?? 0);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, limitMs);
    this.inflight.add(controller);
    const url = this.base + path;
    try {
      let response: Response;
      try {
        response = await this.options.fetch(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: controller.signal,
        });
      } catch (cause) {
        throw this.failure(method, url, timedOut, limitMs, cause);
      }
      let text: string;
      try {
        text = await response.text();
      } catch (cause) {
        throw this.failure(method, url, timedOut, limitMs, cause);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ProtocolError(`${method} ${url} answered HTTP ${response.status} with a body that is not JSON`);
      }
      if (response.ok) return parsed;
      const e = parsed as { errorCode?: unknown; message?: unknown; details?: unknown };
      if (typeof e?.errorCode !== "string")
        throw new HoldfastError(`HTTP_${response.status}`, `${method} ${url} answered HTTP ${response.status}`);
      const details = (e.details !== null && typeof e.details === "object" ? e.details : {}) as ErrorDetails;
      throw errorFromWire(e.errorCode, typeof e.message === "string" ? e.message : e.errorCode, details, context);
    } finally {
      clearTimeout(timer);
      this.inflight.delete(controller);
    }
  }

  private failure(method: string, url: string, timedOut: boolean, limitMs: number, cause: unknown): ConnectionError {
    if (timedOut)
      return new ConnectionError(`no answer from ${method} ${url} within ${limitMs} ms; the call may or may not have taken effect`, {
        cause,
      });
    if (this.closed) return new ConnectionError("the client was closed while the call waited", { cause });
    // Node's fetch wraps the socket's error (with its code) in a TypeError; browsers say only
    // "Failed to fetch", also when the server does not allow the page's origin.
    const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause;
    const why = inner instanceof Error ? inner.message : String(inner);
    const code = (inner as { code?: unknown } | null)?.code;
    if (typeof code === "string" && UNREACHABLE.has(code)) return new ConnectionError(`cannot reach ${url}: ${why}`, { cause });
    const hint = typeof code === "string" ? "" : " (in a browser, also: a server that does not allow this page's origin)";
    return new ConnectionError(`${method} ${url} failed: ${why}${hint}; the call may or may not have taken effect`, { cause });
  }
}

// Errors that mean the request never reached a server.
const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);
