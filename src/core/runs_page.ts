/**
 * The order and the cursor of `listRuns`, which every store shares: newest first, by
 * `startedAt` then run ID (both descending, as a Redis sorted set scored by `startedAt` lists its
 * members in reverse), and a cursor that names a position in that order: the `startedAt` and run
 * ID of the last run of a page, `<startedAt>.<runId>`.
 *
 * A cursor is a position, not a token: any text of that form is taken, one no page gave too, and
 * the page after it lists the live runs after that position. It must be: the run a page ended at
 * may expire before the next page is asked for, and the list must go on from where it was. It
 * grants nothing either: `listRuns` is the harness's, and every run a cursor could reach is on
 * the pages from the first. Text of any other form names no position: a `RangeError` (400 over
 * HTTP).
 *
 * @module
 */
import { isSafeRunId } from "./ids.ts";
import type { RunSummary } from "./store.ts";

/** Where a page of `listRuns` ended: the last run it listed (its `startedAt` and ID). */
export type RunsCursor = { startedAt: number; runId: string };

const CURSOR = /^(0|[1-9][0-9]{0,15})\.(.+)$/;

/**
 * The `next` of a page that ended at `last`: its position, `<startedAt>.<runId>`.
 *
 * @param last The last run of the page.
 * @returns The cursor text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runsCursor } from "@tool-boundary/core/store";
 * import { checkListRunsRequest } from "@tool-boundary/core/store";
 * const next = runsCursor({ startedAt: 5, runId: "r.1" });
 * assert.deepEqual(checkListRunsRequest({ limit: 1, cursor: next }).after, { startedAt: 5, runId: "r.1" });
 * ```
 */
export function runsCursor(last: { startedAt: number; runId: string }): string {
  return `${last.startedAt}.${last.runId}`;
}

/**
 * The position a cursor names, or `null` when the text is not of the form a page gives (a
 * startedAt of plain digits within the safe integers, `.`, a run ID of the allow-list).
 */
export function readRunsCursor(text: string): RunsCursor | null {
  const match = CURSOR.exec(text);
  if (match === null) return null;
  const startedAt = Number(match[1]);
  const runId = match[2]!;
  return Number.isSafeInteger(startedAt) && isSafeRunId(runId) ? { startedAt, runId } : null;
}

/**
 * Whether run `a` is listed before run `b` (newer first: later `startedAt`, then the greater run
 * ID in UTF-16 order, which for the run ID allow-list is byte order, as Redis compares).
 */
export function listedBefore(a: RunsCursor, b: RunsCursor): boolean {
  return a.startedAt !== b.startedAt ? a.startedAt > b.startedAt : a.runId > b.runId;
}

/**
 * A page from runs already in list order, all after the cursor: the first `limit`, and `next`
 * when there is at least one more.
 */
export function pageOf(ordered: RunSummary[], limit: number, more: boolean): {
  runs: RunSummary[];
  next: string | null;
} {
  const runs = ordered.slice(0, limit);
  const last = runs[runs.length - 1];
  return {
    runs,
    next: (more || ordered.length > limit) && last !== undefined ? runsCursor(last) : null,
  };
}
