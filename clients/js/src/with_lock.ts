// withLock and withLocks: acquire (one key, or a group of keys with one handle), run fn,
// always release; renew in the background meanwhile.
//
//  1. The lease is timed on the client's monotonic clock from the moment the acquire was sent
//     (for a grant that came after a wait: at most a tenth of the TTL before it arrived), so
//     the client says "lost" early rather than late.
//  2. Every third of the TTL a renewal is sent. `renewed: false` means the hold is gone (it was
//     re-taken with its owner, or it expired and someone else took the key): the lease is lost.
//     A renewal that fails to get through is retried until the lease runs out locally, which
//     also counts as lost.
//  3. A lost lease aborts the AbortSignal given to fn, with a LeaseLostError as its reason; fn
//     decides what to do about it. Renewal stops before the release is sent. Its timers keep a
//     Node process alive while fn runs, as the work they protect does.
import { LeaseLostError, invalidArgument } from "./errors.js";
import type { HandleRef, LockGroup, LockHandle, ModeOptions, ReleaseResult, RenewResult } from "./types.js";

/** What fn receives while it holds the lock. */
export interface LockContext {
  readonly key: string;
  /** The hold (null in pass-through mode, where nothing is held). */
  readonly handle: LockHandle | null;
  /** The fencing token of the hold: send it with every write the lock protects (null in
   * pass-through mode). */
  readonly token: number | null;
  /** Aborted, with a LeaseLostError as its reason, when the lease is lost while fn runs. */
  readonly signal: AbortSignal;
}

export interface WithLockOptions extends ModeOptions {
  /** How long to wait for the key, in milliseconds (0: one attempt). Default 30 000. */
  timeoutMs?: number;
  /** The lease, in milliseconds; renewed every third of it while fn runs. Default 30 000. */
  ttlMs?: number;
  /** Names the run, so a restarted run can take its own lease back. */
  owner?: string;
  /** Renew in the background while fn runs. Default true. */
  renew?: boolean;
  /** Keep the key closed this long after the hold vanishes without a release (0 to 60 000 ms).
   * Default: the server's rule set decides (else none). */
  lockDelayMs?: number;
}

/** What fn receives while it holds every key of a withLocks call. */
export interface LockGroupContext {
  /** The keys, as asked for. */
  readonly keys: readonly string[];
  /** The group (null in pass-through mode, where nothing is held). */
  readonly group: LockGroup | null;
  /** The fencing token of `key`'s hold (null in pass-through mode); InvalidArgumentError for
   * a key the group does not have. */
  token(key: string): number | null;
  /** Aborted, with a LeaseLostError as its reason, when the group's lease is lost. */
  readonly signal: AbortSignal;
}

export interface WithLocksOptions {
  /** How long to wait for every key at once, in milliseconds (0: one attempt). Default 30 000. */
  timeoutMs?: number;
  /** The group's lease; renewed every third of it while fn runs. Default 30 000. */
  ttlMs?: number;
  /** Names the run, so a restarted run can take its own group back. */
  owner?: string;
  /** Renew in the background while fn runs. Default true. */
  renew?: boolean;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_TTL_MS = 30_000;

interface LockOps {
  renew(handle: HandleRef, ttlMs: number): Promise<RenewResult>;
}

interface HoldOps extends LockOps {
  release(handle: HandleRef): Promise<ReleaseResult>;
}

/**
 * Runs fn while `held` (a hold, or a group named by one of its keys) is held: renews it in
 * the background unless `renew` is false, and however fn ends stops renewing, then releases.
 * fn's own error wins over a failed release.
 */
export async function runHolding<T>(
  ops: HoldOps,
  held: HandleRef,
  ttlMs: number,
  renew: boolean,
  sentAt: number,
  fn: (signal: AbortSignal) => T | Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const renewal = renew ? new Renewal(ops, held, ttlMs, controller, sentAt, now()) : null;
  let failed = false;
  try {
    return await fn(controller.signal);
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await renewal?.stop();
    try {
      await ops.release(held);
    } catch (e) {
      // fn's own error is the one to report; a failed release only delays the key's end.
      if (!failed) throw e;
    }
  }
}

/** The token of each key of `group`, for LockGroupContext.token. */
export function tokenOf(group: LockGroup | null, keys: readonly string[]): (key: string) => number | null {
  const tokens = new Map(group?.holds.map((h) => [h.key, h.token]));
  return (key: string) => {
    if (!keys.includes(key)) throw invalidArgument("key", `the group has no key ${key}`);
    return tokens.get(key) ?? null;
  };
}

/** Keeps one lease alive until stop(); aborts `controller` when it is lost. */
export class Renewal {
  private leaseEnd: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private deadline: ReturnType<typeof setTimeout> | undefined;
  private inflight: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly ops: LockOps,
    private readonly handle: HandleRef,
    private readonly ttlMs: number,
    private readonly controller: AbortController,
    sentAt: number,
    receivedAt: number,
  ) {
    this.leaseEnd = Math.max(sentAt, receivedAt - ttlMs / 10) + ttlMs;
    this.armDeadline();
    this.schedule(ttlMs / 3);
  }

  /** Stops renewing; resolves once a renewal in flight has been answered. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
    await this.inflight;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.inflight = this.renewOnce();
    }, delayMs);
  }

  private armDeadline(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.lost("the lease ran out without a successful renewal"), Math.max(0, this.leaseEnd - now()));
  }

  private async renewOnce(): Promise<void> {
    const sentAt = now();
    try {
      const r = await this.ops.renew(this.handle, this.ttlMs);
      if (this.stopped) return;
      if (!r.renewed) {
        this.lost("a renewal answered lease_lost");
        return;
      }
      this.leaseEnd = sentAt + this.ttlMs;
      this.armDeadline();
      this.schedule(this.ttlMs / 3);
    } catch {
      // Not through (the server restarting, a network blip): try again while the lease lasts.
      if (this.stopped) return;
      this.schedule(Math.min(this.ttlMs / 10, Math.max(0, this.leaseEnd - now())));
    }
  }

  private lost(why: string): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
    this.controller.abort(new LeaseLostError(this.handle.key, why));
  }
}

export function now(): number {
  return performance.now();
}
