// What the client needs of a transport: the server's lock operations, with replies already
// decoded (wire.ts) and refusals already thrown as HoldfastError subclasses (errors.ts).
// Arguments arrive validated (client.ts), so a transport only encodes them.
import type {
  Assignment,
  HolderInfo,
  LockHandle,
  LockPage,
  LockStatus,
  ReleaseResult,
  RenewResult,
  TransferResult,
} from "./types.js";

export interface Transport {
  /** Waits in the key's queue; throws LockTimeoutError when not granted in time. */
  acquire(key: string, ttlMs: number, timeoutMs: number, owner: string | undefined): Promise<LockHandle>;
  /** One attempt; null when the key is held by someone else. */
  tryAcquire(key: string, ttlMs: number, owner: string | undefined): Promise<LockHandle | null>;
  renew(key: string, handle: string, ttlMs: number): Promise<RenewResult>;
  release(key: string, handle: string): Promise<ReleaseResult>;
  status(key: string): Promise<LockStatus>;
  list(match: string | undefined, cursor: string, count: number | undefined): Promise<LockPage>;
  assign(key: string, holderId: string, ttlMs: number | undefined, timeoutMs: number | undefined): Promise<Assignment>;
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
