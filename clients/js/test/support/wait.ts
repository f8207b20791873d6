// Waiting for a condition instead of sleeping: poll until it holds, fail after a deadline that only
// a hang reaches (a minute: also on a machine busy with other builds; it bounds a wait, it does
// not assert a speed).
import type { HoldfastClient } from "@holdfast/client";

export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Until `key` has `n` blocking acquires queued on the server. */
export async function waitForWaiters(client: HoldfastClient, key: string, n: number): Promise<void> {
  await waitFor(`${n} waiters on ${key}`, async () => (await client.locks.status(key)).waiters === n);
}

/** A promise that settles when the signal aborts, with its reason. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));
}
