/**
 * `RunIndex`, an optional capability: `listRuns`, the run console's list. Newest first (by
 * `startedAt`, then run ID), paged by a cursor that names a position in that order, `limit`
 * within 1 to `MAX_LIST_RUNS`, never an expired run, each run with its calls begun and ERROR
 * records. The cases tolerate a store shared with other cases: they look only at their own runs.
 *
 * @module
 */
import assert from "node:assert/strict";
import { MAX_LIST_RUNS } from "../../core/limits.ts";
import { runsCursor } from "../../core/runs_page.ts";
import type { RunIndex, RunSummary, Store } from "../../core/store.ts";
import { capabilitySuite, type StoreContext, type Suite, uniqueId } from "./context.ts";
import { beginAndComplete, beginRequest, FAILED, READY, storeRun } from "./helpers.ts";

/** Most pages a case walks: far more than any case's runs need. */
const MAX_PAGES = 10_000;

/** Starts a run directly on the store, started at `now`, and returns its ID. */
async function runAt(
  store: Store,
  now: number,
  ttlMs = 1_200_000,
  prefix = "run",
): Promise<string> {
  const runId = uniqueId(prefix);
  const started = await store.startRun({
    runId,
    deadline: now + 600_000,
    budget: { calls: 100, perTool: {} },
    ttlMs,
    attemptId: uniqueId("start"),
    now,
  });
  assert.equal(started.ok, true);
  return runId;
}

/**
 * Every page of the store's runs at `limit` (after `from`, when given), checked page by page; the
 * runs in order.
 */
async function allPages(
  store: RunIndex,
  limit: number,
  from: string | null = null,
): Promise<RunSummary[]> {
  const runs: RunSummary[] = [];
  let cursor: string | null = from;
  for (let page = 0; page < MAX_PAGES; page++) {
    const listed = await store.listRuns({ limit, cursor });
    assert.ok(listed.runs.length <= limit, "never more than limit");
    runs.push(...listed.runs);
    if (listed.next === null) return runs;
    assert.equal(typeof listed.next, "string");
    assert.equal(listed.runs.length, limit, "only the last page may be short");
    cursor = listed.next;
  }
  throw new Error("listRuns() never gave a last page");
}

/** The runs of `ids`, in the order listed. */
const own = (runs: RunSummary[], ids: string[]) => runs.filter((run) => ids.includes(run.runId));

/** Newest first: later start, then the greater run ID. */
const newestFirst = (a: { startedAt: number; runId: string }, b: typeof a) =>
  b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0);

/** Registers the `RunIndex` cases. */
export function runIndexCases(storeSuite: Suite<StoreContext>): void {
  const suite = capabilitySuite(storeSuite, "RunIndex");

  suite.test(
    "listRuns() lists live runs newest first, then by run ID, with status, times, calls begun and errors",
    async (ctx) => {
      const { store, clock } = ctx;
      const base = clock() - 10_000;
      const first = await runAt(store, base);
      const tieA = await runAt(store, base + 10);
      const tieB = await runAt(store, base + 10);
      const ids = [first, tieA, tieB];
      // In `first`: one READY, two ERROR, one still PROJECTING; then it ends.
      await beginAndComplete(ctx, first, "call_ok", READY);
      const errAttempt = await beginAndComplete(ctx, first, "call_err_1", FAILED);
      await beginAndComplete(ctx, first, "call_err_2", {
        status: "ERROR",
        errorCode: "TOOL_TIMEOUT",
        rawJson: null,
      });
      await beginAndComplete(ctx, first, "call_open", null);
      const ended = await store.endRun({ runId: first, now: clock() });
      assert.ok(ended.ok);
      // A refused begin is not a call.
      const refused = await store.begin(beginRequest(first, "call_late", clock));
      assert.equal(refused.ok, false);

      const listed = own(await allPages(store, MAX_LIST_RUNS), ids);
      const [hi, lo] = tieA > tieB ? [tieA, tieB] : [tieB, tieA];
      assert.deepEqual(listed, [
        { runId: hi, status: "ACTIVE", startedAt: base + 10, endedAt: null, calls: 0, errors: 0 },
        { runId: lo, status: "ACTIVE", startedAt: base + 10, endedAt: null, calls: 0, errors: 0 },
        {
          runId: first,
          status: "ENDED",
          startedAt: base,
          endedAt: ended.run.endedAt,
          calls: 4,
          errors: 2,
        },
      ]);
      // A repeat of a complete is not a second error.
      const repeat = await store.complete({
        runId: first,
        toolCallId: "call_err_1",
        attemptId: errAttempt,
        outcome: FAILED,
        now: clock(),
      });
      assert.equal(repeat.ok, true);
      const again = own(await allPages(store, MAX_LIST_RUNS), [first]);
      assert.equal(again[0]?.errors, 2);
    },
  );

  suite.test(
    "listRuns() pages with its cursor: limit per page, next null on the last, every run once in order",
    async (ctx) => {
      const { store, clock } = ctx;
      const base = clock() - 20_000;
      const ids: string[] = [];
      const starts: { runId: string; startedAt: number }[] = [];
      // Prefixes whose byte order differs from a locale's collation (upper case before lower,
      // punctuation before letters): ties are ordered by bytes, as a sorted set orders them.
      const prefixes = ["b", "B", "_", "-", "9", "Z", "a"];
      for (let i = 0; i < 7; i++) {
        // Two share each start time but the last: the cursor must split ties too.
        const startedAt = base + Math.floor(i / 2) * 100;
        const runId = await runAt(store, startedAt, undefined, prefixes[i]);
        ids.push(runId);
        starts.push({ runId, startedAt });
      }
      const expected = starts.toSorted(newestFirst).map((run) => run.runId);
      for (const limit of [1, 2, 3, 7, MAX_LIST_RUNS]) {
        const listed = own(await allPages(store, limit), ids).map((run) => run.runId);
        assert.deepEqual(listed, expected, `limit ${limit}`);
      }
      // The cursor is the store's: the page after the cursor of a run starts after that run.
      const firstTwo = await store.listRuns({ limit: 2 });
      const after = await store.listRuns({ limit: 2, cursor: firstTwo.next });
      for (const run of after.runs) {
        const last = firstTwo.runs.at(-1)!;
        assert.ok(newestFirst(last, run) < 0, "a later page lists only older runs");
      }
    },
  );

  suite.test(
    "listRuns() takes any position as its cursor, one no page gave too: the runs after it in the order",
    async (ctx) => {
      const { store, clock } = ctx;
      const base = clock() - 30_000;
      const older = await runAt(store, base);
      const middle = await runAt(store, base + 100);
      const newer = await runAt(store, base + 200);
      const ids = [older, middle, newer];
      const after = async (startedAt: number, runId: string) =>
        own(await allPages(store, MAX_LIST_RUNS, runsCursor({ startedAt, runId })), ids)
          .map((run) => run.runId);
      // At a run: the runs after it (as once that run is gone: a position, not a run).
      assert.deepEqual(await after(base + 100, middle), [older]);
      // Where no run is: between two, and past the newest.
      assert.deepEqual(await after(base + 150, "no-such-run"), [middle, older]);
      assert.deepEqual(await after(Number.MAX_SAFE_INTEGER, "z"), [newer, middle, older]);
    },
  );

  suite.test(
    "listRuns() refuses a limit outside 1 to MAX_LIST_RUNS and a cursor that names no position with a RangeError",
    async (ctx) => {
      const { store } = ctx;
      for (const limit of [0, -1, MAX_LIST_RUNS + 1, 1.5, Number.NaN, "2", null, undefined]) {
        await assert.rejects(
          store.listRuns({ limit: limit as number }),
          RangeError,
          `limit ${String(limit)}`,
        );
      }
      for (const cursor of ["", "x", "1.", ".r", "-1.r", "01.r", "1.bad id!", "1e3.r", 5, {}]) {
        await assert.rejects(
          store.listRuns({ limit: 1, cursor: cursor as string }),
          RangeError,
          `cursor ${JSON.stringify(cursor)}`,
        );
      }
      const empty = await store.listRuns({ limit: 1, cursor: "0.no-such-run" });
      assert.deepEqual(empty, { runs: [], next: null }, "nothing starts before the epoch");
    },
  );

  suite.test("listRuns() never lists an expired run, on any page", async (ctx) => {
    const { store, clock } = ctx;
    const kept = await runAt(store, clock());
    const short = await runAt(store, clock() + 1, ctx.ttlMs);
    const before = own(await allPages(store, 1), [kept, short]).map((run) => run.runId);
    assert.deepEqual(before, [short, kept]);
    await ctx.advance(Math.ceil(ctx.ttlMs * 1.5));
    assert.equal(await store.getRun(short), null);
    for (const limit of [1, MAX_LIST_RUNS]) {
      const after = own(await allPages(store, limit), [kept, short]).map((run) => run.runId);
      assert.deepEqual(after, [kept], `limit ${limit}`);
    }
  });

  suite.test(
    "listRuns() lists a run's cost as getRun reads it, and none for a run without one",
    async (ctx) => {
      const { store, clock } = ctx;
      const costed = await storeRun(store, clock, { calls: 10, perTool: {}, cost: 50 });
      const plain = await storeRun(store, clock);
      const request = beginRequest(costed, "call_costed", clock, { cost: 20 });
      assert.equal((await store.begin(request)).ok, true);
      await beginAndComplete(ctx, costed, "call_free", READY);
      const begun = beginRequest(costed, "call_settled", clock, { cost: 10 });
      assert.equal((await store.begin(begun)).ok, true);
      const done = await store.complete({
        runId: costed,
        toolCallId: "call_settled",
        attemptId: begun.attemptId,
        outcome: READY,
        now: clock(),
        spent: 4,
      });
      assert.equal(done.ok, true);
      const listed = own(await allPages(store, MAX_LIST_RUNS), [costed, plain]);
      const byId = new Map(listed.map((run) => [run.runId, run]));
      assert.deepEqual(byId.get(costed)?.cost, { reserved: 20, spent: 4 });
      assert.deepEqual(byId.get(costed)?.cost, (await store.getRun(costed))?.cost);
      assert.equal("cost" in byId.get(plain)!, false);
    },
  );
}
