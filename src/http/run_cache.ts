/**
 * The app's cache of run contexts, so a tool call need not read its run from the store.
 *
 * @module
 */
import type { ToolBoundary } from "../core/boundary.ts";
import type { RunContext } from "../core/types.ts";

/**
 * Run contexts by ID, least recently used first out. Contexts are immutable, and the store
 * still checks the run's status and deadline at every begin, so a cached context can only save a
 * read, never admit a call the store would refuse.
 */
export class RunCache {
  readonly #max: number;
  readonly #runs = new Map<string, RunContext>();

  /**
   * @param max How many contexts to keep; 0 keeps none.
   * @throws {RangeError} When `max` is not a non-negative integer.
   */
  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError("Invalid runCacheSize: expected a non-negative integer");
    }
    this.#max = max;
  }

  /** Keeps a context as the most recently used. */
  set(run: RunContext): void {
    if (this.#max === 0) return;
    this.#runs.delete(run.runId);
    this.#runs.set(run.runId, run);
    if (this.#runs.size > this.#max) {
      this.#runs.delete(this.#runs.keys().next().value!);
    }
  }

  /** The cached context, else the store's (then cached); `null` when the run does not exist. */
  async get(runId: string, boundary: ToolBoundary): Promise<RunContext | null> {
    const cached = this.#runs.get(runId);
    if (cached !== undefined) {
      this.set(cached);
      return cached;
    }
    const run = await boundary.getRun(runId);
    if (run !== null) this.set(run);
    return run;
  }

  /** Removes and returns a context (the run is ending). */
  take(runId: string): RunContext | undefined {
    const run = this.#runs.get(runId);
    this.#runs.delete(runId);
    return run;
  }
}
