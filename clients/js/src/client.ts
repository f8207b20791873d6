// The client: createClient() and what hangs off it. Arguments are checked here, once, so both
// transports see the same valid calls and a bad one is refused the same way over either.
import { ConnectionError, InvalidArgumentError, NotHolderError, PassThroughError, invalidArgument } from "./errors.js";
import { HttpTransport } from "./http_transport.js";
import { compileKeyTemplate } from "./key_template.js";
import { methodLock, type MethodLock } from "./method_lock.js";
import { checkKeys, checkLockDelay, checkMode } from "./mode.js";
import type { GroupRequest, HoldRequest, Transport } from "./transport.js";
import type {
  AcquireAllOptions,
  AcquireOptions,
  Assignment,
  HandleRef,
  HolderInfo,
  HoldRef,
  KeyRequest,
  ListOptions,
  LockGroup,
  LockHandle,
  LockPage,
  LockStatus,
  ReleaseResult,
  RenewOptions,
  RenewResult,
  TransferResult,
  TryAcquireAllOptions,
  TryAcquireOptions,
} from "./types.js";
import type { TlsOptions } from "./tls.js";
import { parseServerUrl } from "./url.js";
import {
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TTL_MS,
  now,
  runHolding,
  tokenOf,
  type LockContext,
  type LockGroupContext,
  type WithLockOptions,
  type WithLocksOptions,
} from "./with_lock.js";

export interface ClientOptions {
  /** `http://host:port` or `https://host:port` (HTTP/JSON, Node and browsers),
   * `holdfast://host:port`, `rediss://host:port` (over TLS) or `unix:///path/to.sock` (RESP,
   * Node only). Required unless `passThrough` is set. */
  url?: string;
  /** The bearer token; overrides one given in the URL. */
  token?: string;
  /** Node: TLS settings for an `https://` or `rediss://` URL, as PEM contents (what Node's
   * tls.connect takes): `ca` to trust, and a client certificate `cert` with its `key`. */
  tls?: TlsOptions;
  /**
   * Local development without a server: withLock, withLocks, locked and lockedAs run their
   * function directly, without locking (logged once); every other call throws PassThroughError.
   */
  passThrough?: boolean;
  /** Where the pass-through notice goes. Default: console. */
  logger?: { warn(message: string): void };
  /** RESP: how long opening a connection may take. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** How long a call may wait for its answer, on top of the acquire timeout it carries.
   * Default 10 000 ms. */
  callTimeoutMs?: number;
  /** HTTP: the fetch to use. Default: the global fetch. */
  fetch?: typeof fetch;
}

/** `acquireLock`'s third argument: a timeout in milliseconds, or options (`lockDelayMs`:
 * keep the lock closed this long after an assignment's lease runs out, 0 to 60 000 ms). */
export type AssignOptions = number | { timeoutMs?: number; ttlMs?: number; lockDelayMs?: number };

export interface LockedAsOptions {
  /** Who is calling. Default: `this.caller.id` of the object whose method runs. */
  callerId?: (thisArg: unknown, args: unknown[]) => string | null | undefined;
}

function checkKey(key: unknown, field = "key"): string {
  if (typeof key !== "string" || key === "") throw invalidArgument(field, `${field} must be a non-empty string`);
  return key;
}

function checkMs(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value))
    throw invalidArgument(field, `${field} must be an integer number of milliseconds`);
  return value;
}

function checkOptionalMs(value: unknown, field: string): number | undefined {
  return value === undefined ? undefined : checkMs(value, field);
}

function checkOptionalCount(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1)
    throw invalidArgument(field, `${field} must be a positive integer`);
  return value;
}

function checkOptionalString(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalidArgument(field, `${field} must be a string`);
  return value;
}

// A hold, or a group: the server finds a group by its handle and any one of its keys.
function checkHandle(handle: unknown): HandleRef {
  const h = handle as (Partial<HandleRef> & { holds?: unknown }) | null;
  const key = Array.isArray(h?.holds) ? (h.holds[0] as Partial<HandleRef> | undefined)?.key : h?.key;
  if (h === null || typeof h !== "object" || typeof key !== "string" || typeof h.handle !== "string")
    throw invalidArgument("handle", "expected the handle object (or group) an acquire returned (with key and handle)");
  return { key, handle: h.handle };
}

// withLock's and withLocks' renewals and release, through the transport.
function holdOps(transport: Transport) {
  return {
    renew: (h: HandleRef, ttlMs: number) => transport.renew(h.key, h.handle, ttlMs),
    release: (h: HandleRef) => transport.release(h.key, h.handle),
  };
}

// A group's grant, as asked for in `o`.
function groupRequest(o: { owner?: unknown }, ttlMs: number): GroupRequest {
  const owner = checkOptionalString(o.owner, "owner");
  return { ttlMs, ...(owner !== undefined && { owner }) };
}

// A single key's grant, as asked for in `o`.
function holdRequest(o: Partial<AcquireOptions>, ttlMs: number): HoldRequest {
  const lockDelayMs = checkLockDelay(o.lockDelayMs);
  return { ...groupRequest(o, ttlMs), ...checkMode(o), ...(lockDelayMs !== undefined && { lockDelayMs }) };
}

/** The lease-lock calls: `client.locks`. */
export class Locks {
  /** @internal */
  constructor(private readonly client: HoldfastClient) {}

  /**
   * Waits up to `timeoutMs` in the key's first-in-first-out queue and returns the hold.
   * Throws LockTimeoutError (code "LOCK_TIMEOUT", `key`, `timeoutMs`) when not granted in time.
   * Both `ttlMs` and `timeoutMs` are required.
   */
  async acquire(key: string, options: AcquireOptions): Promise<LockHandle> {
    checkKey(key);
    const o = options ?? ({} as AcquireOptions);
    const ttlMs = checkMs(o.ttlMs, "ttlMs");
    const timeoutMs = checkMs(o.timeoutMs, "timeoutMs");
    return (await this.client.transport("locks.acquire")).acquire(key, holdRequest(o, ttlMs), timeoutMs);
  }

  /** One attempt: the hold, or null when the key cannot be had now (held by someone else in a
   * way the request does not fit beside, someone waits, or a lock-delay keeps it closed). */
  async tryAcquire(key: string, options: TryAcquireOptions): Promise<LockHandle | null> {
    checkKey(key);
    const o = options ?? ({} as TryAcquireOptions);
    const ttlMs = checkMs(o.ttlMs, "ttlMs");
    return (await this.client.transport("locks.tryAcquire")).tryAcquire(key, holdRequest(o, ttlMs));
  }

  /**
   * Every key at once, or none: waits up to `timeoutMs` in every key's queue and returns one
   * group (one handle, one lease, a hold per key). Keys are `"name"` (exclusive) or
   * `{ key, mode?, permits?, take? }`. Throws LockTimeoutError (naming the first key in key
   * order) when not granted in time; nothing is held then.
   */
  async acquireAll(keys: KeyRequest[], options: AcquireAllOptions): Promise<LockGroup> {
    const checked = checkKeys(keys);
    const o = options ?? ({} as AcquireAllOptions);
    const ttlMs = checkMs(o.ttlMs, "ttlMs");
    const timeoutMs = checkMs(o.timeoutMs, "timeoutMs");
    return (await this.client.transport("locks.acquireAll")).acquireAll(checked, groupRequest(o, ttlMs), timeoutMs);
  }

  /** One attempt at every key: the group, or null when any key cannot be had now. */
  async tryAcquireAll(keys: KeyRequest[], options: TryAcquireAllOptions): Promise<LockGroup | null> {
    const checked = checkKeys(keys);
    const o = options ?? ({} as TryAcquireAllOptions);
    const ttlMs = checkMs(o.ttlMs, "ttlMs");
    return (await this.client.transport("locks.tryAcquireAll")).tryAcquireAll(checked, groupRequest(o, ttlMs));
  }

  /** Extends the lease to `ttlMs` from now (a group's: every key's); `renewed: false` (reason
   * "lease_lost") when the handle is no longer the key's current one. */
  async renew(handle: HoldRef, options: RenewOptions): Promise<RenewResult> {
    const h = checkHandle(handle);
    const ttlMs = checkMs((options ?? ({} as RenewOptions)).ttlMs, "ttlMs");
    return (await this.client.transport("locks.renew")).renew(h.key, h.handle, ttlMs);
  }

  /** Frees the key (a group: every key of it) if the handle is still its current one; else
   * `released: false` (reason "not_holder"). */
  async release(handle: HoldRef): Promise<ReleaseResult> {
    const h = checkHandle(handle);
    return (await this.client.transport("locks.release")).release(h.key, h.handle);
  }

  /** Who holds the key, without trying to take it. Never shows a handle. */
  async status(key: string): Promise<LockStatus> {
    return (await this.client.transport("locks.status")).status(checkKey(key));
  }

  /** Every hold, page by page (admin or owner role, or a function; else ForbiddenError). */
  async *list(options: ListOptions = {}): AsyncGenerator<LockPage, void, undefined> {
    const match = checkOptionalString(options.match, "match");
    const count = checkOptionalCount(options.count, "count");
    let cursor = checkOptionalString(options.cursor, "cursor") ?? "0";
    const transport = await this.client.transport("locks.list");
    do {
      const page = await transport.list(match, cursor, count);
      yield page;
      cursor = page.nextCursor;
    } while (cursor !== "0");
  }
}

/** A Holdfast client. Create it with createClient(); end it with close(). */
export class HoldfastClient {
  /** The lease-lock calls. */
  readonly locks: Locks;
  private transportPromise: Promise<Transport> | null = null;
  private told = false;
  private closed = false;

  /** @internal */
  constructor(private readonly options: ClientOptions) {
    this.locks = new Locks(this);
    if (!options.passThrough) {
      if (typeof options.url !== "string") throw invalidArgument("url", "createClient needs a url (or passThrough: true)");
      const url = parseServerUrl(options.url);  // a bad URL is refused now, not at the first call
      if (options.tls !== undefined) {
        if (options.tls === null || typeof options.tls !== "object")
          throw invalidArgument("tls", "tls must be an object: { ca?, cert?, key? }");
        if (!url.tls) throw invalidArgument("tls", "tls needs an https:// or rediss:// URL");
        if (options.fetch !== undefined) throw invalidArgument("tls", "give tls or fetch, not both: tls makes its own fetch");
      }
    }
  }

  /** True when created with `passThrough: true`: nothing is locked. */
  get passThrough(): boolean {
    return this.options.passThrough === true;
  }

  /**
   * Runs `fn` while holding `name`: waits for the key (`timeoutMs`, default 30 s), renews the
   * lease (`ttlMs`, default 30 s) in the background, and releases the key however fn ends.
   * Returns what fn returns. When the lease is lost while fn runs, `ctx.signal` is aborted with
   * a LeaseLostError. Throws LockTimeoutError ("Could not acquire lock: <name>") when the key
   * is not granted in time; fn does not run then. A number as third argument is `timeoutMs`.
   */
  async withLock<T>(name: string, fn: (ctx: LockContext) => T | Promise<T>, options: WithLockOptions | number = {}): Promise<T> {
    const key = checkKey(name, "name");
    const o: WithLockOptions = typeof options === "number" ? { timeoutMs: options } : (options ?? {});
    const timeoutMs = checkOptionalMs(o.timeoutMs, "timeoutMs") ?? DEFAULT_TIMEOUT_MS;
    const ttlMs = checkOptionalMs(o.ttlMs, "ttlMs") ?? DEFAULT_TTL_MS;
    const request = holdRequest(o, ttlMs);
    if (this.passThrough) {
      this.tellPassThrough();
      return fn({ key, handle: null, token: null, signal: new AbortController().signal });
    }
    const transport = await this.transport("withLock");
    const sentAt = now();
    const handle = await transport.acquire(key, request, timeoutMs);
    const run = (signal: AbortSignal) => fn({ key, handle, token: handle.token, signal });
    return runHolding(holdOps(transport), handle, ttlMs, o.renew !== false, sentAt, run);
  }

  /**
   * Runs `fn` while holding every key of `keys` at once (acquireAll): one group, renewed in the
   * background as withLock renews, released as a whole however fn ends. Returns what fn
   * returns. `ctx.token(key)` is each key's fencing token. Throws LockTimeoutError when the
   * keys are not granted in time (naming the first key in key order); fn does not run then.
   */
  async withLocks<T>(keys: KeyRequest[], fn: (ctx: LockGroupContext) => T | Promise<T>, options: WithLocksOptions = {}): Promise<T> {
    const checked = checkKeys(keys);
    const o = options ?? {};
    const timeoutMs = checkOptionalMs(o.timeoutMs, "timeoutMs") ?? DEFAULT_TIMEOUT_MS;
    const ttlMs = checkOptionalMs(o.ttlMs, "ttlMs") ?? DEFAULT_TTL_MS;
    const request = groupRequest(o, ttlMs);
    const names = checked.map((k) => k.key);
    if (this.passThrough) {
      this.tellPassThrough();
      return fn({ keys: names, group: null, token: tokenOf(null, names), signal: new AbortController().signal });
    }
    const transport = await this.transport("withLocks");
    const sentAt = now();
    const group = await transport.acquireAll(checked, request, timeoutMs);
    const token = tokenOf(group, names);
    const run = (signal: AbortSignal) => fn({ keys: names, group, token, signal });
    return runHolding(holdOps(transport), checkHandle(group), ttlMs, o.renew !== false, sentAt, run);
  }

  /**
   * A method decorator (or, called on a function, a wrapper) that runs the method inside
   * withLock. `{name}` placeholders in the key are filled from the method's first argument:
   * `@client.locked("payment:{orderId}") async pay(params: { orderId: string })`.
   */
  locked(pattern: string, options: WithLockOptions | number = {}): MethodLock {
    const template = compileKeyTemplate(pattern);
    return methodLock((_this, args, run) => this.withLock(template(args[0]), run, options));
  }

  /**
   * The identity-aware form of `locked`: the method runs only when the key (a template, as
   * for `locked`) is unassigned or assigned to the caller (`this.caller.id` by default; without
   * one, the user the client signed in as); else it throws NotHolderError "Not your turn". The
   * server answers the check (LOCK.CHECK) just before the call, not atomically with it: end a
   * turn with transferLock, which the server applies only from the holder.
   */
  lockedAs(pattern: string, options: LockedAsOptions = {}): MethodLock {
    const template = compileKeyTemplate(pattern);
    const callerOf =
      options.callerId ?? ((self: unknown) => (self as { caller?: { id?: string } } | undefined)?.caller?.id ?? undefined);
    return methodLock(async (self, args, run) => {
      const key = template(args[0]);
      if (this.passThrough) {
        this.tellPassThrough();
        return run();
      }
      const callerId = callerOf(self, args) ?? undefined;
      try {
        await (await this.transport("lockedAs")).check(key, callerId);
      } catch (e) {
        if (!(e instanceof NotHolderError)) throw e;
        // assigned=0: no turn is in play (the key is free, or held by a handle): the call runs.
        if (Number(e.details.assigned) !== 0)
          throw new NotHolderError("LOCK_NOT_HOLDER", "Not your turn", { key, ...(callerId !== undefined && { callerId }) });
      }
      return run();
    });
  }

  /**
   * Assigns `name` to `callerId` (no handle needed; it lasts until transferred or released,
   * or for `ttlMs`). Without a timeout one attempt: LockHeldError when someone else holds it;
   * with one, waits in the key's queue and ends in LockTimeoutError. Assigning again to the
   * same holder refreshes it.
   */
  async acquireLock(name: string, callerId: string, timeout?: AssignOptions): Promise<Assignment> {
    const key = checkKey(name, "name");
    const holder = checkKey(callerId, "callerId");
    const o = typeof timeout === "number" ? { timeoutMs: timeout } : (timeout ?? {});
    const timeoutMs = checkOptionalMs(o.timeoutMs, "timeoutMs");
    const ttlMs = checkOptionalMs(o.ttlMs, "ttlMs");
    const lockDelayMs = checkLockDelay((o as { lockDelayMs?: unknown }).lockDelayMs);
    return (await this.transport("acquireLock")).assign(key, holder, ttlMs, timeoutMs, lockDelayMs);
  }

  /**
   * Moves `name` from `from` to `to` atomically; NotHolderError unless `from` holds it. Without
   * `from`, from whoever holds it now (looked up first; the server still refuses the move if the
   * holder changed in between).
   */
  async transferLock(name: string, to: string, from?: string): Promise<TransferResult> {
    const key = checkKey(name, "name");
    const toId = checkKey(to, "to");
    let fromId = from === undefined ? undefined : checkKey(from, "from");
    const transport = await this.transport("transferLock");
    if (fromId === undefined) {
      const current = await transport.holder(key);
      if (current.holder === null) throw new NotHolderError("LOCK_NOT_HOLDER", `${key} is not assigned to anyone`, { key });
      fromId = current.holder;
    }
    return transport.transfer(key, toId, fromId);
  }

  /** Frees `name`, only if `callerId` holds it (else NotHolderError). Without `callerId`: the
   * signed-in user's own assignment, or (without credentials) whoever holds it. Resolves true
   * when something was freed, false when it was free already. */
  async releaseLock(name: string, callerId?: string): Promise<boolean> {
    const key = checkKey(name, "name");
    const holder = callerId === undefined ? undefined : checkKey(callerId, "callerId");
    return (await this.transport("releaseLock")).unassign(key, holder);
  }

  /** Who holds `name`: `{ holder, acquiredAt, expiresAt }`, or `{ holder: null }`. */
  async getLock(name: string): Promise<HolderInfo> {
    return (await this.transport("getLock")).holder(checkKey(name, "name"));
  }

  /** Ends the client's connections; calls still waiting fail with ConnectionError. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.transportPromise;
    if (pending !== null) await (await pending.catch(() => null))?.close();
  }

  /** @internal The transport, opened on first use. */
  transport(call: string): Promise<Transport> {
    if (this.passThrough) return Promise.reject(new PassThroughError(call));
    if (this.closed) return Promise.reject(new ConnectionError("the client is closed"));
    if (this.transportPromise === null) this.transportPromise = this.openTransport();
    return this.transportPromise;
  }

  private async openTransport(): Promise<Transport> {
    const url = parseServerUrl(this.options.url!);
    const token = this.options.token ?? url.token;
    const callTimeoutMs = checkOptionalMs(this.options.callTimeoutMs, "callTimeoutMs") ?? 10_000;
    if (url.transport === "http") {
      if (this.options.tls !== undefined) {
        // Loaded only when asked for, so a browser never loads node:https.
        const https = (await import("./https_fetch.js").catch(() => ({}))) as Partial<typeof import("./https_fetch.js")>;
        if (https.httpsFetch === undefined)
          throw invalidArgument("tls", "tls needs Node.js; a browser uses its own certificate store for https://");
        const own = https.httpsFetch(this.options.tls);
        return new HttpTransport(url.baseUrl, { token, callTimeoutMs, fetch: own.fetch, release: own.close });
      }
      const fetchImpl = this.options.fetch ?? globalThis.fetch;
      if (typeof fetchImpl !== "function") throw new InvalidArgumentError("INVALID_ARGUMENT", "this platform has no fetch", {});
      return new HttpTransport(url.baseUrl, { token, callTimeoutMs, fetch: fetchImpl.bind(globalThis) });
    }
    // Loaded only for RESP URLs, so a browser never loads node:net (bundlers leave it out of
    // browser builds: package.json "browser" maps it to nothing).
    const resp = (await import("./resp/transport.js").catch(() => ({}))) as Partial<typeof import("./resp/transport.js")>;
    const RespTransport = resp.RespTransport;
    if (RespTransport === undefined)
      throw invalidArgument("url", "holdfast://, rediss:// and unix:// URLs need Node.js; in a browser use the server's http:// or https:// URL");
    const connectTimeoutMs = checkOptionalMs(this.options.connectTimeoutMs, "connectTimeoutMs") ?? 5_000;
    return new RespTransport(url.nodes, { ...(url.user !== undefined && { user: url.user }), ...(token !== undefined && { token }) }, {
      connectTimeoutMs,
      callTimeoutMs,
      // rediss:// is TLS with or without settings of its own (Node's CAs then).
      ...(url.tls && { tls: this.options.tls ?? {} }),
    });
  }

  private tellPassThrough(): void {
    if (this.told) return;
    this.told = true;
    (this.options.logger ?? console).warn(
      "holdfast: pass-through mode: withLock, withLocks, locked and lockedAs run without taking any lock",
    );
  }
}

/**
 * Creates a client. `url` picks the transport: `http://` or `https://` (fetch: Node 18+ and
 * browsers), `holdfast://`, `rediss://` or `unix://` (RESP: Node). Nothing connects until the
 * first call.
 */
export function createClient(options: ClientOptions): HoldfastClient {
  return new HoldfastClient(options ?? {});
}
