// Lease locks as a web back end uses them: an import that must not overlap itself, a cache
// refresh that is skipped when someone else is already doing it, a look at who holds a key,
// and a job run that takes its own lease back after a restart.
import { LockTimeoutError, type HoldfastClient } from "@holdfast/client";

/** Imports a user's portfolio unless an import for that user is already running (and does
 * not finish within `waitMs`). */
export async function startPortfolioImport(
  client: HoldfastClient,
  userId: string,
  importRows: () => Promise<void>,
  waitMs = 10_000,
): Promise<{ started: boolean }> {
  const handle = await client.locks
    .acquire(`portfolio-import:${userId}`, {
      ttlMs: 60_000, // long enough for the whole import
      timeoutMs: waitMs, // how long to wait for a running import to finish
    })
    .catch((err: unknown) => {
      if (err instanceof LockTimeoutError) return null; // still running: leave it be
      throw err;
    });
  if (!handle) return { started: false };

  try {
    await importRows();
  } finally {
    await client.locks.release(handle);
  }
  return { started: true };
}

/** Refreshes a user's cache, or does nothing if another refresh holds the key. */
export async function refreshCache(client: HoldfastClient, userId: string, refresh: () => Promise<void>): Promise<boolean> {
  const handle = await client.locks.tryAcquire(`refresh:${userId}`, { ttlMs: 30_000 });
  if (!handle) return false; // somebody else is refreshing: nothing to do

  try {
    await refresh();
  } finally {
    await client.locks.release(handle);
  }
  return true;
}

/** One line about a key: who holds it and until when, or that it is free. */
export async function describeLock(client: HoldfastClient, key: string): Promise<string> {
  const status = await client.locks.status(key);
  if (status.held) return `held by ${status.heldBy}, lease expires ${status.leaseExpiresAt?.toISOString()}`;
  return "free";
}

/**
 * A job run that names itself as the owner: when the platform restarts the run, the new
 * attempt takes the lease back instead of waiting it out; the old attempt's handle is fenced.
 */
export async function runJobSlice(
  client: HoldfastClient,
  key: string,
  runId: string,
  slice: () => Promise<void>,
): Promise<{ ran: boolean; retook: boolean }> {
  const held = await client.locks.status(key);
  const retook = held.held && held.owner === runId; // an earlier attempt of this very run holds it
  const handle = await client.locks.tryAcquire(key, { ttlMs: 60_000, owner: runId });
  if (!handle) return { ran: false, retook: false }; // someone else's hold
  try {
    await slice();
  } finally {
    await client.locks.release(handle);
  }
  return { ran: true, retook };
}
