/**
 * The store's time limit on each call, with one timer for every call in flight.
 *
 * A call alone sets and clears a timer as it always did. Calls issued together (the N begins or
 * completes of a step, batched into one request) share it: a timer cost about 5 to 8 us of CPU
 * here (set and cleared), for every one of the N calls, on the path between the replies and the
 * next request. Each call still fails with a TimeoutError `ms` after it was made: the timer is
 * armed for the earliest deadline of the calls in flight, and set again for the next one when it
 * fires; it is cleared as soon as no call is in flight, so none outlives the calls.
 *
 * @module
 */
import { RedisStoreError } from "./errors.ts";

/** One call in flight. */
interface Limited {
  readonly deadline: number;
  settled: boolean;
  readonly reject: (error: unknown) => void;
}

/**
 * Limits calls to `ms` each, sharing one timer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TimeLimit } from "./time_limit.ts";
 * const limit = new TimeLimit(20);
 * assert.equal(await limit.within(Promise.resolve(1)), 1);
 * const never = new Promise<never>(() => {});
 * await assert.rejects(limit.within(never), { name: "TimeoutError" });
 * ```
 */
export class TimeLimit {
  readonly #ms: number;
  /** Calls in the order they were made, so in deadline order; settled ones until dropped. */
  #calls: Limited[] = [];
  /** Index of the first call of `#calls` that may still be in flight. */
  #first = 0;
  #inFlight = 0;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;

  /**
   * Creates the limit.
   *
   * @param ms Milliseconds each call may take, at most the longest timer (`MAX_TIMER_MS`).
   */
  constructor(ms: number) {
    this.#ms = ms;
  }

  /**
   * The outcome of `operation`, or a TimeoutError once `ms` have passed since this call; a
   * failure of the operation after that is dropped, never unhandled.
   *
   * @param operation The call.
   * @returns Its value, or its error, or the TimeoutError.
   */
  within<T>(operation: Promise<T>): Promise<T> {
    operation.catch(() => {});
    return new Promise<T>((resolve, reject) => {
      const call: Limited = { deadline: performance.now() + this.#ms, settled: false, reject };
      this.#calls.push(call);
      if (this.#inFlight++ === 0) this.#timer = setTimeout(() => this.#expire(), this.#ms);
      operation.then(
        (value) => {
          if (this.#settle(call)) resolve(value);
        },
        (error) => {
          if (this.#settle(call)) reject(error);
        },
      );
    });
  }

  /** Marks a call settled; `false` when it had already timed out. */
  #settle(call: Limited): boolean {
    if (call.settled) return false;
    call.settled = true;
    if (--this.#inFlight === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#calls = [];
      this.#first = 0;
      return true;
    }
    const calls = this.#calls;
    while (this.#first < calls.length && calls[this.#first]!.settled) this.#first++;
    if (this.#first > 64 && this.#first > calls.length >> 1) {
      this.#calls = calls.slice(this.#first);
      this.#first = 0;
    }
    return true;
  }

  /** Fails every call past its deadline, then waits for the next deadline. */
  #expire(): void {
    this.#timer = undefined;
    const now = performance.now();
    const calls = this.#calls;
    let i = this.#first;
    for (; i < calls.length; i++) {
      const call = calls[i]!;
      if (call.settled) continue;
      if (call.deadline > now) break;
      call.settled = true;
      this.#inFlight--;
      call.reject(
        new RedisStoreError("TimeoutError", `No answer from Redis within ${this.#ms} ms`),
      );
    }
    this.#first = i;
    if (this.#inFlight === 0) {
      this.#calls = [];
      this.#first = 0;
      return;
    }
    // calls[i] is in flight: every call before it has settled.
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, calls[i]!.deadline - now));
  }
}
