/**
 * A simulated network round trip that costs what it says: `hold(5)` resolves 5 ms after it was
 * called, not 6.2.
 *
 * `setTimeout` under Deno fires late by about 1.2 ms at any delay on the benchmarks' machine
 * (whole milliseconds, then a turn of the event loop: `setTimeout(5)` took 6.2 to 6.4 ms at p50,
 * `setTimeout(0)` 2.2 ms), so an answer held with `setTimeout(ms)` alone was held ms + 1.2 ms or
 * more, and a "5 ms" round trip cost a client about 7.3 ms. Here every hold has a deadline; one
 * timer is set early, by how late this process's timers have fired so far (learned as it runs),
 * and the last part before the deadline is waited out in turns of the event loop (a
 * `MessageChannel` message, a few microseconds each), so other requests are read and served
 * meanwhile. No hold ends before its deadline.
 *
 * @example
 * ```ts ignore
 * const delay = new RoundTripDelay();
 * await delay.hold(5); // 5 ms, to within the event loop's turns
 * ```
 *
 * @module
 */

/** One hold waiting for its deadline. */
interface Waiter {
  deadline: number;
  resolve: () => void;
}

/** Timers fire this late (ms) before any was measured: what `setTimeout` did here. */
const INITIAL_LATENESS_MS = 1.2;

/** Holds promises to deadlines; one timer and one polling loop serve every hold at once. */
export class RoundTripDelay {
  /** Waiting holds, by deadline. */
  #waiters: Waiter[] = [];
  /** How late a timer fires here, ms: a moving average of what was measured. */
  #lateness = INITIAL_LATENESS_MS;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The deadline the armed timer is for. */
  #timerFor = Infinity;
  #polling = false;

  /** How late this process's timers fire, ms, as learned so far. */
  get lateness(): number {
    return this.#lateness;
  }

  /**
   * Resolves `ms` milliseconds from now (never earlier).
   *
   * @param ms The hold, in milliseconds; 0 or less resolves at once.
   */
  hold(ms: number): Promise<void> {
    if (!(ms > 0)) return Promise.resolve();
    const deadline = performance.now() + ms;
    return new Promise((resolve) => {
      // Holds of one length arrive in deadline order: insertion is almost always at the end.
      let at = this.#waiters.length;
      while (at > 0 && this.#waiters[at - 1]!.deadline > deadline) at--;
      this.#waiters.splice(at, 0, { deadline, resolve });
      this.#schedule();
    });
  }

  /** Arms the timer for the earliest deadline, or polls when it is near. */
  #schedule(): void {
    if (this.#polling) return;
    const first = this.#waiters[0];
    if (first === undefined) return;
    const wait = first.deadline - performance.now() - this.#lateness;
    if (wait <= 0) {
      this.#clearTimer();
      void this.#poll();
      return;
    }
    if (this.#timer !== undefined && this.#timerFor <= first.deadline) return;
    this.#clearTimer();
    const asked = performance.now();
    this.#timerFor = first.deadline;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerFor = Infinity;
      const late = performance.now() - asked - wait;
      // A moving average, bounded: one stall of the machine must not make every hold poll.
      this.#lateness += (Math.min(Math.max(late, 0), 5) - this.#lateness) / 8;
      void this.#poll();
    }, wait);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerFor = Infinity;
  }

  /** Releases every due hold, turn by turn, until the next deadline is far enough for a timer. */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    const channel = new MessageChannel();
    let turned: (() => void) | undefined;
    channel.port1.onmessage = () => turned?.();
    try {
      for (;;) {
        const now = performance.now();
        while (this.#waiters.length > 0 && this.#waiters[0]!.deadline <= now) {
          this.#waiters.shift()!.resolve();
        }
        const first = this.#waiters[0];
        if (first === undefined || first.deadline - now > this.#lateness) break;
        // One turn of the event loop: sockets are read and answers written meanwhile.
        await new Promise<void>((resolve) => {
          turned = resolve;
          channel.port2.postMessage(null);
        });
      }
    } finally {
      channel.port1.close();
      this.#polling = false;
    }
    this.#schedule();
  }
}
