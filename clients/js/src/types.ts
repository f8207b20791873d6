// The public shapes of the package. Times are Date objects (the server's clock), tokens are
// numbers (the server keeps them below 2^53), whichever transport carried them.

/** `user:<userId>` or `function:<name>`: the principal that made a hold. */
export type Principal = string;

/** How a hold has its key: alone (exclusive), beside other shared holds, or as permits of a
 * semaphore. */
export type LockMode = "exclusive" | "shared" | "semaphore";

/**
 * What a successful acquire returns: the hold, with its handle. It is plain data: keep it,
 * serialise it, release it from elsewhere. It is not updated by `renew` (the renewal's answer
 * carries the new expiry).
 */
export interface LockHandle {
  readonly key: string;
  /** The secret that renews and releases this hold; only the acquirer ever sees it. */
  readonly handle: string;
  /** Fencing token: larger than the token of every earlier grant on the server. */
  readonly token: number;
  readonly heldBy: Principal;
  readonly owner: string | null;
  readonly acquiredAt: Date;
  readonly leaseExpiresAt: Date;
  readonly scope: "lease" | "session";
  readonly kind: "handle";
  readonly mode: LockMode;
  /** A semaphore hold: the key's permits (else null). */
  readonly permits: number | null;
  /** A semaphore hold: how many of the key's permits it takes (else null). */
  readonly take: number | null;
  /** How long the key stays closed after this hold vanishes without a release; 0 for none. */
  readonly lockDelayMs: number;
}

/** One hold as `list` shows it: never with a handle. Assigned holds name their `holder`. */
export interface LockInfo {
  readonly key: string;
  readonly token: number;
  readonly heldBy: Principal;
  readonly owner: string | null;
  readonly acquiredAt: Date;
  /** null for an assignment made without a TTL (it never expires). */
  readonly leaseExpiresAt: Date | null;
  readonly scope: "lease" | "session";
  readonly kind: "handle" | "assigned";
  readonly holder: string | null;
  readonly mode: LockMode;
  /** A semaphore hold: the key's permits (else null). */
  readonly permits: number | null;
  /** A semaphore hold: how many of the key's permits it takes (else null). */
  readonly take: number | null;
  /** The hold's lock-delay; 0 for none. */
  readonly lockDelayMs: number;
}

/** `status(key)` of a held key: the fields of its newest hold, then the key's own. */
export interface HeldStatus extends Omit<LockInfo, "permits" | "take"> {
  readonly held: true;
  /** How many blocking acquires wait in the key's queue. */
  readonly waiters: number;
  /** How the key is held. */
  readonly mode: LockMode;
  /** A semaphore: the key's permits, and how many of them no hold takes (else null). */
  readonly permits: number | null;
  readonly freePermits: number | null;
  /** Every hold of the key, oldest first (one for an exclusive key), without handles. */
  readonly holders: LockInfo[];
  /** While a lock-delay keeps the key closed to new holds: when it opens again. */
  readonly lockDelayUntil: Date | null;
}

/** `status(key)` of a free key (or one whose lease ended): every hold field is null. */
export interface FreeStatus {
  readonly key: string;
  readonly held: false;
  readonly waiters: number;
  readonly heldBy: null;
  readonly owner: null;
  readonly acquiredAt: null;
  readonly leaseExpiresAt: null;
  readonly token: null;
  readonly scope: null;
  readonly kind: null;
  readonly holder: null;
  readonly mode: null;
  readonly permits: null;
  readonly freePermits: null;
  readonly lockDelayMs: null;
  readonly holders: [];
  /** While a lock-delay keeps the key closed (a hold vanished without a release, and its
   * delay runs): when it opens again. Nothing is granted until then. */
  readonly lockDelayUntil: Date | null;
}

export type LockStatus = HeldStatus | FreeStatus;

export type RenewResult =
  | { readonly renewed: true; readonly leaseExpiresAt: Date }
  | { readonly renewed: false; readonly reason: "lease_lost" };

export type ReleaseResult =
  | { readonly released: true }
  | { readonly released: false; readonly reason: "not_holder" };

/** One page of `list`. */
export interface LockPage {
  readonly locks: LockInfo[];
  /** Pass as `cursor` to continue from here; "0" after the last page. */
  readonly nextCursor: string;
}

/** An identity-aware hold (`acquireLock`). */
export interface Assignment {
  readonly key: string;
  readonly holder: string;
  readonly acquiredAt: Date;
  /** null when assigned without a TTL: it lasts until transferred or released. */
  readonly expiresAt: Date | null;
  readonly token: number;
  /** The assignment's lock-delay; 0 for none. */
  readonly lockDelayMs: number;
}

/** `getLock(name)`: who holds an identity-aware lock. `holder` is null when nobody is assigned
 * (a key held through a handle also answers null: it has no holder id). */
export type HolderInfo =
  | { readonly holder: string; readonly token: number; readonly acquiredAt: Date; readonly expiresAt: Date | null }
  | { readonly holder: null };

export interface TransferResult {
  readonly holder: string;
  readonly token: number;
}

/**
 * The mode a request asks for: exclusive (the default), `mode: "shared"` (any number of shared
 * holds, no exclusive one), or `permits` (the key is a semaphore of that many permits; the
 * hold takes `take` of them, default 1). `permits` cannot go with `mode`.
 */
export interface ModeOptions {
  mode?: "exclusive" | "shared";
  /** The key's permits, 1 to 1 000 000; every request on the key must name the same number. */
  permits?: number;
  /** How many of the permits this hold takes, 1 to `permits` (default 1). Needs `permits`. */
  take?: number;
}

export interface AcquireOptions extends ModeOptions {
  /** The lease, in milliseconds (capped by the server at 24 h). Required. */
  ttlMs: number;
  /** How long to wait in the key's queue, in milliseconds; 0 is one attempt. Required. */
  timeoutMs: number;
  /** Names the run that holds the key, so it can take its own lease back (re-take). */
  owner?: string;
  /** Keep the key closed this long (0 to 60 000 ms) after the hold vanishes without a release
   * (its lease ran out), so a holder that did not notice has time to stop. Default: the
   * server's rule set decides (else none). */
  lockDelayMs?: number;
}

export interface TryAcquireOptions extends ModeOptions {
  /** The lease, in milliseconds. Required. */
  ttlMs: number;
  owner?: string;
  /** As AcquireOptions.lockDelayMs. */
  lockDelayMs?: number;
}

/** One key of a multi-key request: the key alone (exclusive), or the key and its mode. */
export type KeyRequest = string | ({ key: string } & ModeOptions);

export interface AcquireAllOptions {
  /** The group's one lease, in milliseconds. Required. */
  ttlMs: number;
  /** How long to wait for every key at once; 0 is one attempt. Required. */
  timeoutMs: number;
  /** Names the run; the same owner asking for the same keys in the same modes re-takes the group. */
  owner?: string;
}

export interface TryAcquireAllOptions {
  /** The group's one lease, in milliseconds. Required. */
  ttlMs: number;
  owner?: string;
}

/**
 * What a multi-key acquire returns: one handle and one lease for every key, one hold per key
 * (in key order, each with its own fencing token). Plain data, like LockHandle; renew and
 * release take it whole and act on every key.
 */
export interface LockGroup {
  /** The group's handle, shared by every hold in `holds`. */
  readonly handle: string;
  readonly leaseExpiresAt: Date;
  readonly holds: LockHandle[];
}

export interface RenewOptions {
  /** The new lease, counted from now, in milliseconds. */
  ttlMs: number;
}

export interface ListOptions {
  /** A glob over keys (`*`, `?`, `[...]`), applied before paging. */
  match?: string;
  /** Holds per page (server default 100, at most 10 000). */
  count?: number;
  /** Where to start: a `nextCursor` of an earlier page; "0" (the default) is the beginning. */
  cursor?: string;
}

/** Anything that names a hold: a LockHandle, or a `{ key, handle }` kept from one. */
export interface HandleRef {
  readonly key: string;
  readonly handle: string;
}

/** What renew and release take: a hold, or a whole group (any key of it names the group). */
export type HoldRef = HandleRef | LockGroup;
