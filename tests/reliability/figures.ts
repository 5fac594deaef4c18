/**
 * Counters behind the figures of the reliability tests, and the one parseable line each test
 * prints: `RELIABILITY {"suite":...,"store":...,"cases":...,...,"invariants":...}`.
 *
 * `check()` is an assertion that also counts, so "invariants checked" means assertions that ran
 * and held, not a number typed into a document.
 *
 * @module
 */
import assert from "node:assert/strict";

/** The counters of one suite. */
export interface Figures {
  /** What was tested, e.g. `model`, `hostile`, `faults`. */
  suite: string;
  /** Which store (or `library`, `http`). */
  store: string;
  /** Generated or listed cases tried (fast-check runs, hostile inputs, requests). */
  cases: number;
  /** Commands executed across all cases (model steps, calls). */
  steps: number;
  /** Concurrent races started (calls that ran at the same time as another on one run or key). */
  races: number;
  /** Faults injected (5xx bursts, dropped responses, delays, SIGSTOP, SIGKILL). */
  faults: number;
  /** Assertions that ran and held. */
  invariants: number;
}

/** Creates the counters of one suite. */
export function figures(suite: string, store: string): Figures {
  return { suite, store, cases: 0, steps: 0, races: 0, faults: 0, invariants: 0 };
}

/**
 * Asserts and counts.
 *
 * @param f The suite's counters.
 * @param ok The condition.
 * @param message What failed, for the error.
 */
export function check(f: Figures, ok: boolean, message: string | (() => string)): void {
  if (!ok) assert.fail(typeof message === "function" ? message() : message);
  f.invariants++;
}

/** How long {@linkcode answered} waits for an answer before it fails. */
export const HANG_MS = 5_000;

/**
 * Fails instead of hanging: the value of `promise`, or an error after {@linkcode HANG_MS}.
 * Counts the answer as an invariant.
 *
 * @param f The figures.
 * @param what What is awaited, for the error.
 * @param promise The answer.
 */
export async function answered<T>(f: Figures, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${HANG_MS} ms`)), HANG_MS);
  });
  try {
    const value = await Promise.race([promise, hang]);
    f.invariants++;
    return value;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Asserts deep equality and counts.
 *
 * @param f The suite's counters.
 * @param actual What happened.
 * @param expected What should have happened.
 * @param message Context for the error.
 */
export function checkEqual(f: Figures, actual: unknown, expected: unknown, message: string): void {
  assert.deepEqual(actual, expected, message);
  f.invariants++;
}

/**
 * Prints the parseable figures line.
 *
 * @param f The suite's counters.
 * @param extra More fields (settings, durations).
 */
export function report(f: Figures, extra: Record<string, unknown> = {}): void {
  console.log(`RELIABILITY ${JSON.stringify({ ...f, ...extra })}`);
}

/** Reads a positive integer setting from the environment, or the default. */
export function envInt(name: string, fallback: number): number {
  let raw: string | undefined;
  try {
    raw = Deno.env.get(name);
  } catch {
    raw = undefined;
  }
  const value = raw === undefined ? Number.NaN : Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}
