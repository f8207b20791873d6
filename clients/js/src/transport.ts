// What the client needs of a transport: the server's lock operations, with replies already
// decoded (wire.ts) and refusals already thrown as HoldfastError subclasses (errors.ts).
// Arguments arrive validated (client.ts), so a transport only encodes them.
import type { KeyModeRequest, ModeRequest } from "./mode.js";
import type {
  Assignment,
  HolderInfo,
  LockGroup,
  LockHandle,
  LockPage,
  LockStatus,
  ReleaseResult,
  RenewResult,
  TransferResult,
} from "./types.js";

/** What a single-key grant asks for, beside its key (and, blocking, its timeout). */
export interface HoldRequest extends ModeRequest {
  readonly ttlMs: number;
  readonly owner?: string;
  readonly lockDelayMs?: number;
}

/** What a multi-key grant asks for, beside its keys. */
export interface GroupRequest {
  readonly ttlMs: number;
  readonly owner?: string;
}

export interface Transport {
  /** Waits in the key's queue; throws LockTimeoutError when not granted in time. */
  acquire(key: string, request: HoldRequest, timeoutMs: number): Promise<LockHandle>;
  /** One attempt; null when the key does not fit now. */
  tryAcquire(key: string, request: HoldRequest): Promise<LockHandle | null>;
  /** Every key at once or none, waiting in every key's queue. */
  acquireAll(keys: KeyModeRequest[], request: GroupRequest, timeoutMs: number): Promise<LockGroup>;
  /** One attempt at every key; null when any does not fit now. */
  tryAcquireAll(keys: KeyModeRequest[], request: GroupRequest): Promise<LockGroup | null>;
  renew(key: string, handle: string, ttlMs: number): Promise<RenewResult>;
  release(key: string, handle: string): Promise<ReleaseResult>;
  status(key: string): Promise<LockStatus>;
  list(match: string | undefined, cursor: string, count: number | undefined): Promise<LockPage>;
  assign(
    key: string,
    holderId: string,
    ttlMs: number | undefined,
    timeoutMs: number | undefined,
    lockDelayMs: number | undefined,
  ): Promise<Assignment>;
  transfer(key: string, toId: string, fromId: string): Promise<TransferResult>;
  unassign(key: string, holderId: string | undefined): Promise<boolean>;
  holder(key: string): Promise<HolderInfo>;
  /** The server's holder check (LOCK.CHECK): the hold when `holderId` (undefined: the
   * connecting user) holds the key; NotHolderError otherwise, with `details.assigned` 0 when
   * no turn is in play (the key is free or held by a handle). */
  check(key: string, holderId: string | undefined): Promise<HolderInfo>;
  /** Ends every connection; calls still waiting fail with ConnectionError. */
  close(): Promise<void>;
}
