// The public shapes of the package. Times are Date objects (the server's clock), tokens are
// numbers (the server keeps them below 2^53), whichever transport carried them.

/** `user:<userId>` or `function:<name>`: the principal that made a hold. */
export type Principal = string;

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
}

/** `status(key)` of a held key. */
export interface HeldStatus extends LockInfo {
  readonly held: true;
  /** How many blocking acquires wait in the key's queue. */
  readonly waiters: number;
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

export interface AcquireOptions {
  /** The lease, in milliseconds (capped by the server at 24 h). Required. */
  ttlMs: number;
  /** How long to wait in the key's queue, in milliseconds; 0 is one attempt. Required. */
  timeoutMs: number;
  /** Names the run that holds the key, so it can take its own lease back (re-take). */
  owner?: string;
}

export interface TryAcquireOptions {
  /** The lease, in milliseconds. Required. */
  ttlMs: number;
  owner?: string;
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
