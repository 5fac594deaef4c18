/**
 * Store writes that are safe to repeat, tried again while the store fails: a complete and a run
 * start carry an attempt ID, and a store treats a repeat of the same attempt as the same
 * operation (the stored record or run again, never a second write), so repeating one that threw
 * can only finish it. A write that threw may have been written, or not; trying again until the
 * store answers keeps what it was for (a tool's outcome, a run) when the store comes back soon.
 *
 * @module
 */

/** The first pause before a write that threw is tried again, in ms; each later one doubles. */
export const FIRST_RETRY_PAUSE_MS = 50;

/** The longest pause between two tries of a write, in ms. */
export const MAX_RETRY_PAUSE_MS = 1_000;

/**
 * Runs a store write, and runs it again while it throws, with backoff (jittered, so that the
 * writes one outage failed do not all come back at once), until `windowMs` have passed since its
 * first failure. A try under way when the window closes is awaited: the store bounds each try by
 * its own timeout.
 *
 * @param write One try: the same request every time.
 * @param windowMs How long after the first failure a try may still start; 0 tries once.
 * @returns What the store answered, to the first try that did not throw.
 * @throws What the last try threw, once the window has closed; at once, what a try threw that a
 *   repeat would throw again: a `TypeError` or `RangeError` (the store refused the values).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { retried } from "./store_retry.ts";
 *
 * let tries = 0;
 * const answer = await retried(() => {
 *   tries++;
 *   return tries < 3 ? Promise.reject(new Error("store unreachable")) : Promise.resolve("ok");
 * }, 5_000);
 * assert.deepEqual([answer, tries], ["ok", 3]);
 * await assert.rejects(() => retried(() => Promise.reject(new RangeError("bad")), 5_000), RangeError);
 * ```
 */
export async function retried<T>(write: () => Promise<T>, windowMs: number): Promise<T> {
  let until: number | undefined;
  let pause = FIRST_RETRY_PAUSE_MS;
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (error instanceof TypeError || error instanceof RangeError) throw error;
      const now = performance.now();
      until ??= now + windowMs;
      if (now >= until) throw error;
      const wait = Math.min(pause * (0.5 + Math.random() / 2), until - now);
      await new Promise((resolve) => setTimeout(resolve, wait));
      pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MS);
    }
  }
}
