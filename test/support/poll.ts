import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `probe` until it returns something other than undefined, and returns that. Fails after
 * `timeoutMs` (generous: machines are noisy) with `what` and the last error the probe threw.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > giveUpAt) {
      const detail = lastError instanceof Error ? `; last error: ${lastError.message}` : "";
      throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await sleep(intervalMs);
  }
}
