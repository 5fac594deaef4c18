/**
 * The in-flight `tools/call`s of the MCP route in one process, so that a session's
 * `notifications/cancelled` can cancel its own call.
 *
 * @module
 */

/** A JSON-RPC request ID. */
export type RpcId = string | number;

/**
 * The in-flight `tools/call`s of one process, by (run, session, JSON-RPC id), each with the
 * controller whose signal is the call's. Bounded: past `max` a call is still run, only not
 * cancellable; an entry is removed when its call ends.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { InFlightCalls } from "./in_flight.ts";
 *
 * const calls = new InFlightCalls(1);
 * const signal = calls.add("run-1", "session-a", 3);
 * assert.ok(signal !== undefined);
 * assert.equal(calls.add("run-1", "session-b", 3), undefined); // full: runs, not cancellable
 * assert.equal(calls.cancel("run-1", "session-b", 3), false); // another session's id
 * assert.equal(calls.cancel("run-1", "session-a", "3"), false); // "3" is not 3
 * assert.equal(calls.cancel("run-1", "session-a", 3), true);
 * assert.equal(signal.aborted, true);
 * calls.remove("run-1", "session-a", 3);
 * assert.equal(calls.size, 0);
 * ```
 */
export class InFlightCalls {
  readonly #calls = new Map<string, AbortController>();
  readonly #max: number;

  /** @param max The most calls held at once. */
  constructor(max = 10_000) {
    this.#max = max;
  }

  /** How many calls are held. */
  get size(): number {
    return this.#calls.size;
  }

  /**
   * Holds a call, unless one with the same key is held or the registry is full.
   *
   * @returns The call's signal, or `undefined` when it was not held.
   */
  add(runId: string, session: string, id: RpcId): AbortSignal | undefined {
    const key = inFlightKey(runId, session, id);
    if (this.#calls.has(key) || this.#calls.size >= this.#max) return undefined;
    const controller = new AbortController();
    this.#calls.set(key, controller);
    return controller.signal;
  }

  /**
   * Aborts a held call.
   *
   * @returns Whether a call was held under that key.
   */
  cancel(runId: string, session: string, id: RpcId): boolean {
    const controller = this.#calls.get(inFlightKey(runId, session, id));
    controller?.abort(new DOMException("The client cancelled the request.", "AbortError"));
    return controller !== undefined;
  }

  /** Lets a call go (when it ended). */
  remove(runId: string, session: string, id: RpcId): void {
    this.#calls.delete(inFlightKey(runId, session, id));
  }
}

// The number 1 and the string "1" are different JSON-RPC ids. Run IDs and session IDs hold no
// NUL, so the parts cannot run into each other.
const inFlightKey = (runId: string, session: string, id: RpcId) =>
  `${runId}\0${session}\0${typeof id === "number" ? "n" : "s"}${id}`;
