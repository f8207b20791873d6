// Every call of the public API, as an application writes it. `tsc -p examples` checks it
// against the package's shipped type declarations (dist/index.d.ts), so a change that breaks
// the public types fails the build; the @ts-expect-error lines check that misuse is refused.
import {
  ConnectionError,
  createClient,
  ForbiddenError,
  HoldfastError,
  InternalError,
  InvalidArgumentError,
  LeaseLostError,
  LockAccessDeniedError,
  LockHeldError,
  LockTimeoutError,
  MethodNotAllowedError,
  NotFoundError,
  NotHolderError,
  PassThroughError,
  ProtocolError,
  RateLimitedError,
  RulesetConflictError,
  StoreUnavailableError,
  UnauthenticatedError,
  UnavailableError,
  type Assignment,
  type ClientOptions,
  type HoldfastClient,
  type HolderInfo,
  type KeyRequest,
  type LockContext,
  type LockGroup,
  type LockGroupContext,
  type LockHandle,
  type LockInfo,
  type LockMode,
  type LockPage,
  type LockStatus,
  type ReleaseResult,
  type RenewResult,
  type TransferResult,
} from "@holdfast/client";

const options: ClientOptions = {
  url: "http://127.0.0.1:7421",
  token: "secret",
  connectTimeoutMs: 5_000,
  callTimeoutMs: 10_000,
  logger: console,
  fetch: globalThis.fetch,
};
export const client: HoldfastClient = createClient(options);
export const overResp = createClient({ url: "holdfast://127.0.0.1:7420" });
export const overUnix = createClient({ url: "unix:///var/lib/holdfast/holdfast.sock" });
export const local = createClient({ passThrough: true });

export async function leaseLocks(key: string): Promise<void> {
  const handle: LockHandle = await client.locks.acquire(key, { ttlMs: 60_000, timeoutMs: 10_000, owner: "run-1" });
  const token: number = handle.token;
  const expires: Date = handle.leaseExpiresAt;
  const maybe: LockHandle | null = await client.locks.tryAcquire(key, { ttlMs: 30_000 });
  // @ts-expect-error tryAcquire may answer null
  maybe.handle;
  const renewed: RenewResult = await client.locks.renew(handle, { ttlMs: 60_000 });
  if (renewed.renewed) {
    const until: Date = renewed.leaseExpiresAt;
    void until;
  } else {
    const reason: "lease_lost" = renewed.reason;
    void reason;
  }
  const released: ReleaseResult = await client.locks.release(handle);
  if (!released.released) {
    const reason: "not_holder" = released.reason;
    void reason;
  }
  await client.locks.release({ key, handle: handle.handle });
  const status: LockStatus = await client.locks.status(key);
  if (status.held) {
    const who: string = status.heldBy;
    const owner: string | null = status.owner;
    const until: Date | null = status.leaseExpiresAt;
    void [who, owner, until];
  } else {
    const none: null = status.heldBy;
    void none;
  }
  for await (const page of client.locks.list({ match: "jobs:*", count: 100, cursor: "0" })) {
    const p: LockPage = page;
    const first: LockInfo | undefined = p.locks[0];
    const next: string = p.nextCursor;
    void [first, next];
  }
  void [token, expires];

  // @ts-expect-error a blocking acquire needs timeoutMs
  await client.locks.acquire(key, { ttlMs: 1_000 });
  // @ts-expect-error ...and ttlMs
  await client.locks.acquire(key, { timeoutMs: 1_000 });
  // @ts-expect-error release takes the handle object, not the handle string
  await client.locks.release(handle.handle);
}

export async function lockKinds(key: string): Promise<number | null> {
  const reader: LockHandle = await client.locks.acquire(key, { ttlMs: 60_000, timeoutMs: 10_000, mode: "shared" });
  const mode: LockMode = reader.mode;
  const slot: LockHandle | null = await client.locks.tryAcquire("gpu-pool", { ttlMs: 60_000, permits: 8, take: 2 });
  const permits: number | null = slot === null ? null : slot.permits;
  const taken: number | null = slot === null ? null : slot.take;
  const delayed = await client.locks.acquire(key, { ttlMs: 60_000, timeoutMs: 0, mode: "exclusive", lockDelayMs: 5_000 });
  const delayMs: number = delayed.lockDelayMs;
  const status: LockStatus = await client.locks.status("gpu-pool");
  if (status.held) {
    const free: number | null = status.freePermits;
    const holders: LockInfo[] = status.holders;
    void [free, holders];
  } else {
    const opens: Date | null = status.lockDelayUntil;
    void opens;
  }
  void [mode, permits, taken, delayMs];

  const keys: KeyRequest[] = ["accounts/1", { key: "catalog", mode: "shared" }, { key: "pool", permits: 3, take: 2 }];
  const group: LockGroup = await client.locks.acquireAll(keys, { ttlMs: 30_000, timeoutMs: 5_000, owner: "job-7" });
  const groupHandle: string = group.handle;
  const firstHold: LockHandle | undefined = group.holds[0];
  const maybe: LockGroup | null = await client.locks.tryAcquireAll(["a", "b"], { ttlMs: 30_000 });
  const renewed: RenewResult = await client.locks.renew(group, { ttlMs: 30_000 });
  const released: ReleaseResult = await client.locks.release(group);
  void [groupHandle, firstHold, maybe, renewed, released];
  const token = await client.withLocks(
    keys,
    async (ctx: LockGroupContext) => {
      const all: LockGroup | null = ctx.group;
      void all;
      return ctx.signal.aborted ? null : ctx.token("accounts/1");
    },
    { timeoutMs: 5_000, ttlMs: 30_000, owner: "job-8", renew: true },
  );
  await client.withLock(key, () => 1, { mode: "shared", timeoutMs: 1_000 });
  await client.withLock(key, () => 1, { permits: 4, take: 1, lockDelayMs: 1_000 });
  const turn: Assignment = await client.acquireLock("turn", "white", { ttlMs: 60_000, lockDelayMs: 2_000 });
  void turn.lockDelayMs;

  // @ts-expect-error a semaphore is asked for with permits, not a mode
  await client.locks.tryAcquire(key, { ttlMs: 1_000, mode: "semaphore" });
  // @ts-expect-error acquireAll needs timeoutMs
  await client.locks.acquireAll(keys, { ttlMs: 1_000 });
  // @ts-expect-error a key of a group is a string or { key, ... }
  await client.locks.tryAcquireAll([{ name: "a" }], { ttlMs: 1_000 });
  return token;
}

export async function daemonShape(): Promise<string> {
  const moved: { ok: boolean } = await client.withLock("task:1", async () => ({ ok: true }));
  const withTimeout: number = await client.withLock("task:1", () => 1, 5_000);
  const fenced: string = await client.withLock(
    "task:1",
    async (ctx: LockContext) => {
      const signal: AbortSignal = ctx.signal;
      const token: number | null = ctx.token;
      if (signal.aborted && signal.reason instanceof LeaseLostError) return `lost ${signal.reason.key}`;
      return `token ${token}`;
    },
    { timeoutMs: 10_000, ttlMs: 30_000, owner: "run-2", renew: true },
  );
  void [moved, withTimeout];
  return fenced;
}

export class Payments {
  @client.locked("payment:{orderId}")
  async processPayment(params: { orderId: string }): Promise<string> {
    return params.orderId;
  }

  @client.locked("refund:{orderId}", { ttlMs: 10_000, timeoutMs: 1_000 })
  async refund(params: { orderId: string; cents: number }): Promise<number> {
    return params.cents;
  }
}

export class Turns {
  caller = { id: "white" };

  @client.lockedAs("turn")
  async move(params: { from: string; to: string }): Promise<string> {
    return `${params.from}-${params.to}`;
  }

  @client.lockedAs("table:{tableId}", { callerId: (_self, args) => (args[0] as { player: string }).player })
  async play(params: { tableId: string; player: string }): Promise<void> {
    void params;
  }
}

export const wrapped: (params: { taskId: string }) => Promise<number> = client.locked("task:{taskId}")(async (params: { taskId: string }) =>
  params.taskId.length,
);

export async function identity(): Promise<void> {
  const a: Assignment = await client.acquireLock("turn", "white");
  const b: Assignment = await client.acquireLock("turn", "white", 5_000);
  const c: Assignment = await client.acquireLock("turn", "white", { timeoutMs: 5_000, ttlMs: 60_000 });
  const expires: Date | null = a.expiresAt;
  const t1: TransferResult = await client.transferLock("turn", "black", "white");
  const t2: TransferResult = await client.transferLock("turn", "white");
  const freed: boolean = await client.releaseLock("turn", "white");
  const freedAny: boolean = await client.releaseLock("turn");
  const lock: HolderInfo = await client.getLock("turn");
  if (lock.holder !== null) {
    const since: Date = lock.acquiredAt;
    const until: Date | null = lock.expiresAt;
    void [since, until];
  }
  void [b, c, expires, t1, t2, freed, freedAny];
  await client.close();
}

export function classify(e: unknown): string {
  if (e instanceof LockTimeoutError) return `${e.code} ${e.key} ${e.timeoutMs}`;
  if (e instanceof RateLimitedError) return `retry in ${e.retryAfterMs ?? "?"} ms`;
  const classes = [
    LockAccessDeniedError,
    ForbiddenError,
    UnauthenticatedError,
    InvalidArgumentError,
    LockHeldError,
    NotHolderError,
    RulesetConflictError,
    UnavailableError,
    StoreUnavailableError,
    NotFoundError,
    MethodNotAllowedError,
    InternalError,
    ConnectionError,
    ProtocolError,
    PassThroughError,
  ];
  for (const Class of classes) if (e instanceof Class) return Class.name;
  if (e instanceof HoldfastError) return `${e.code}: ${e.message} ${JSON.stringify(e.details)}`;
  return "not ours";
}

export class Misuse {
  // @ts-expect-error a locked method must be async: the lock is taken before it runs
  @client.locked("sync:{id}")
  sync(params: { id: string }): number {
    return params.id.length;
  }
}
