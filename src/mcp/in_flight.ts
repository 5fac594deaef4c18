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
  // By JSON-RPC id (a Map keeps 1 and "1" apart): the one call holding it, or, when calls of
  // more than one session hold it, those calls by run and session. A call takes no key string and
  // no allocation but its controller unless its id is held by another session's call.
  readonly #calls = new Map<RpcId, Held | Map<string, Held>>();
  readonly #max: number;
  #size = 0;

  /** @param max The most calls held at once. */
  constructor(max = 10_000) {
    this.#max = max;
  }

  /** How many calls are held. */
  get size(): number {
    return this.#size;
  }

  /**
   * Holds a call, unless one with the same key is held or the registry is full.
   *
   * @returns The call's signal, or `undefined` when it was not held.
   */
  add(runId: string, session: string, id: RpcId): AbortSignal | undefined {
    if (this.#size >= this.#max) return undefined;
    const there = this.#calls.get(id);
    let held: Held;
    if (there === undefined) {
      held = new Held(runId, session);
      this.#calls.set(id, held);
    } else if (there instanceof Map) {
      const key = heldKey(runId, session);
      if (there.has(key)) return undefined;
      held = new Held(runId, session);
      there.set(key, held);
    } else {
      if (there.runId === runId && there.session === session) return undefined;
      held = new Held(runId, session);
      this.#calls.set(
        id,
        new Map([[heldKey(there.runId, there.session), there], [heldKey(runId, session), held]]),
      );
    }
    this.#size++;
    return held.controller.signal;
  }

  /**
   * Aborts a held call.
   *
   * @returns Whether a call was held under that key.
   */
  cancel(runId: string, session: string, id: RpcId): boolean {
    const held = this.#find(runId, session, id);
    held?.controller.abort(new DOMException("The client cancelled the request.", "AbortError"));
    return held !== undefined;
  }

  /** Lets a call go (when it ended). */
  remove(runId: string, session: string, id: RpcId): void {
    const there = this.#calls.get(id);
    if (there === undefined) return;
    if (there instanceof Map) {
      if (!there.delete(heldKey(runId, session))) return;
      if (there.size === 0) this.#calls.delete(id);
    } else {
      if (there.runId !== runId || there.session !== session) return;
      this.#calls.delete(id);
    }
    this.#size--;
  }

  #find(runId: string, session: string, id: RpcId): Held | undefined {
    const there = this.#calls.get(id);
    if (there instanceof Map) return there.get(heldKey(runId, session));
    return there !== undefined && there.runId === runId && there.session === session
      ? there
      : undefined;
  }
}

/** One held call: its run, its session, the controller whose signal is the call's. */
class Held {
  readonly controller = new AbortController();
  constructor(readonly runId: string, readonly session: string) {}
}

// Run IDs and session IDs hold no NUL, so the parts cannot run into each other.
const heldKey = (runId: string, session: string) => `${runId}\0${session}`;
