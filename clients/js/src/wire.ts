// Decoding of the server's replies into the package's shapes. Both transports hand over a
// record of fields: HTTP as parsed JSON (times as ISO-8601 strings, booleans as booleans), RESP
// as a map (times as epoch milliseconds, booleans as 1 and 0). These functions accept either,
// so the shapes are decided in one place.
import { ProtocolError } from "./errors.js";
import type {
  Assignment,
  HolderInfo,
  LockGroup,
  LockHandle,
  LockInfo,
  LockMode,
  LockStatus,
  ReleaseResult,
  RenewResult,
  TransferResult,
} from "./types.js";

export type WireRecord = Record<string, unknown>;

function bad(what: string): never {
  throw new ProtocolError(`unexpected reply from the server: ${what}`);
}

export function record(value: unknown, what: string): WireRecord {
  if (value === null || typeof value !== "object" || Array.isArray(value)) bad(`${what} is not a map`);
  return value as WireRecord;
}

function str(r: WireRecord, name: string): string {
  const v = r[name];
  if (typeof v !== "string") bad(`field ${name} is not a string`);
  return v;
}

function optStr(r: WireRecord, name: string): string | null {
  const v = r[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") bad(`field ${name} is not a string`);
  return v;
}

function num(r: WireRecord, name: string): number {
  const v = r[name];
  if (typeof v !== "number") bad(`field ${name} is not a number`);
  return v;
}

function optNum(r: WireRecord, name: string): number | null {
  const v = r[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number") bad(`field ${name} is not a number`);
  return v;
}

function bool(r: WireRecord, name: string): boolean {
  const v = r[name];
  if (v === true || v === 1) return true;
  if (v === false || v === 0) return false;
  return bad(`field ${name} is not a boolean`);
}

function optTime(r: WireRecord, name: string): Date | null {
  const v = r[name];
  if (v === undefined || v === null) return null;
  if (typeof v === "number") return new Date(v);
  if (typeof v === "string") {
    const d = new Date(v);
    if (!Number.isNaN(d.getTime())) return d;
  }
  return bad(`field ${name} is not a time`);
}

function time(r: WireRecord, name: string): Date {
  return optTime(r, name) ?? bad(`field ${name} is missing`);
}

function scope(r: WireRecord): "lease" | "session" {
  const v = r.scope;
  if (v !== "lease" && v !== "session") bad("field scope is not lease or session");
  return v;
}

function kind(r: WireRecord): "handle" | "assigned" {
  const v = r.kind;
  if (v !== "handle" && v !== "assigned") bad("field kind is not handle or assigned");
  return v;
}

// An exclusive hold's reply has no mode field; a shared or semaphore one names its mode.
function mode(r: WireRecord): LockMode {
  const v = r.mode;
  if (v === undefined || v === null) return "exclusive";
  if (v !== "exclusive" && v !== "shared" && v !== "semaphore") bad("field mode is not exclusive, shared or semaphore");
  return v;
}

// A hold with its handle: what an acquire answers.
export function decodeHandle(value: unknown): LockHandle {
  const r = record(value, "the hold");
  const { key, token, heldBy, owner, acquiredAt, scope, mode, permits, take, lockDelayMs } = decodeInfo(r);
  return {
    key,
    handle: str(r, "handle"),
    token,
    heldBy,
    owner,
    acquiredAt,
    leaseExpiresAt: time(r, "leaseExpiresAt"),
    scope,
    kind: "handle",
    mode,
    permits,
    take,
    lockDelayMs,
  };
}

// A multi-key grant: `{handle, leaseExpiresAt, holds}`.
export function decodeGroup(value: unknown): LockGroup {
  const r = record(value, "the group");
  const holds = r.holds;
  if (!Array.isArray(holds)) bad("field holds is not a list");
  return { handle: str(r, "handle"), leaseExpiresAt: time(r, "leaseExpiresAt"), holds: holds.map(decodeHandle) };
}

export function decodeInfo(value: unknown): LockInfo {
  const r = record(value, "the hold");
  return {
    key: str(r, "key"),
    token: num(r, "token"),
    heldBy: str(r, "heldBy"),
    owner: optStr(r, "owner"),
    acquiredAt: time(r, "acquiredAt"),
    leaseExpiresAt: optTime(r, "leaseExpiresAt"),
    scope: scope(r),
    kind: kind(r),
    holder: optStr(r, "holder"),
    mode: mode(r),
    permits: optNum(r, "permits"),
    take: optNum(r, "take"),
    lockDelayMs: optNum(r, "lockDelayMs") ?? 0,
  };
}

export function decodeStatus(value: unknown): LockStatus {
  const r = record(value, "the status");
  const waiters = num(r, "waiters");
  const lockDelayUntil = optTime(r, "lockDelayUntil");
  if (!bool(r, "held")) {
    return {
      key: str(r, "key"),
      held: false,
      waiters,
      heldBy: null,
      owner: null,
      acquiredAt: null,
      leaseExpiresAt: null,
      token: null,
      scope: null,
      kind: null,
      holder: null,
      mode: null,
      permits: null,
      freePermits: null,
      lockDelayMs: null,
      holders: [],
      lockDelayUntil,
    };
  }
  // The map carries the newest hold's fields; for a shared or semaphore key `permits` is the
  // key's, and `holders` lists every hold. An exclusive key's one hold is its only holder.
  const { permits: _p, take: _t, ...newest } = decodeInfo(r);
  const m = mode(r);
  const holders = r.holders;
  if (m !== "exclusive" && !Array.isArray(holders)) bad("field holders is not a list");
  return {
    ...newest,
    held: true,
    waiters,
    mode: m,
    permits: m === "semaphore" ? num(r, "permits") : null,
    freePermits: m === "semaphore" ? num(r, "freePermits") : null,
    holders: m === "exclusive" ? [decodeInfo(r)] : (holders as unknown[]).map(decodeInfo),
    lockDelayUntil,
  };
}

export function decodeRenew(value: unknown): RenewResult {
  const r = record(value, "the renewal");
  if (bool(r, "renewed")) return { renewed: true, leaseExpiresAt: time(r, "leaseExpiresAt") };
  return { renewed: false, reason: "lease_lost" };
}

export function decodeRelease(value: unknown): ReleaseResult {
  const r = record(value, "the release");
  if (bool(r, "released")) return { released: true };
  return { released: false, reason: "not_holder" };
}

export function decodeAssignment(value: unknown): Assignment {
  const r = record(value, "the assignment");
  return {
    key: str(r, "key"),
    holder: str(r, "holder"),
    acquiredAt: time(r, "acquiredAt"),
    expiresAt: optTime(r, "leaseExpiresAt"),
    token: num(r, "token"),
    lockDelayMs: optNum(r, "lockDelayMs") ?? 0,
  };
}

export function decodeTransfer(value: unknown): TransferResult {
  const r = record(value, "the transfer");
  return { holder: str(r, "holder"), token: num(r, "token") };
}

export function decodeUnassign(value: unknown): boolean {
  return bool(record(value, "the unassign"), "released");
}

export function decodeHolder(value: unknown): HolderInfo {
  const r = record(value, "the holder");
  const holder = optStr(r, "holder");
  if (holder === null) return { holder: null };
  return { holder, token: num(r, "token"), acquiredAt: time(r, "acquiredAt"), expiresAt: optTime(r, "leaseExpiresAt") };
}
