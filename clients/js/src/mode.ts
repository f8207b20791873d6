// The mode a request asks for (exclusive, shared, or permits of a semaphore) and its
// lock-delay: checked once here for the client, and encoded here for RESP (HTTP sends the
// checked fields as they are), so a single key and each key of a group say it the same way.
import { invalidArgument } from "./errors.js";
import type { KeyRequest, ModeOptions } from "./types.js";

/** A mode as checked: only the fields that were given. */
export interface ModeRequest {
  readonly mode?: "exclusive" | "shared";
  readonly permits?: number;
  readonly take?: number;
}

/** One key of a multi-key request, as checked. */
export interface KeyModeRequest extends ModeRequest {
  readonly key: string;
}

function checkOptionalInteger(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value)) throw invalidArgument(field, `${field} must be an integer`);
  return value;
}

/** The mode fields of `options`; their ranges (and that `permits` cannot go with `mode`) are
 * the server's to check, so both transports refuse them with the server's own answer. */
export function checkMode(options: ModeOptions, prefix = ""): ModeRequest {
  const { mode } = options;
  if (mode !== undefined && mode !== "exclusive" && mode !== "shared")
    throw invalidArgument(`${prefix}mode`, `${prefix}mode must be "exclusive" or "shared" (a semaphore is asked for with permits)`);
  const permits = checkOptionalInteger(options.permits, `${prefix}permits`);
  const take = checkOptionalInteger(options.take, `${prefix}take`);
  return { ...(mode !== undefined && { mode }), ...(permits !== undefined && { permits }), ...(take !== undefined && { take }) };
}

export function checkLockDelay(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value))
    throw invalidArgument("lockDelayMs", "lockDelayMs must be an integer number of milliseconds");
  return value;
}

/** The keys of a multi-key request: a key alone, or `{ key, mode?, permits?, take? }`. */
export function checkKeys(keys: unknown): KeyModeRequest[] {
  if (!Array.isArray(keys)) throw invalidArgument("keys", "keys must be an array of keys or { key, mode?, permits?, take? }");
  return keys.map((entry: KeyRequest, i) => {
    const o = typeof entry === "string" ? { key: entry } : entry;
    if (o === null || typeof o !== "object" || typeof o.key !== "string" || o.key === "")
      throw invalidArgument(`keys[${i}]`, `keys[${i}] must be a non-empty key or { key, mode?, permits?, take? }`);
    return { key: o.key, ...checkMode(o, `keys[${i}].`) };
  });
}

/** RESP: `MODE SHARED`, `PERMITS n [TAKE k]`, as the request gave them. */
export function respModeArgs(m: ModeRequest): string[] {
  const args: string[] = [];
  if (m.mode !== undefined) args.push("MODE", m.mode.toUpperCase());
  if (m.permits !== undefined) args.push("PERMITS", String(m.permits));
  if (m.take !== undefined) args.push("TAKE", String(m.take));
  return args;
}
