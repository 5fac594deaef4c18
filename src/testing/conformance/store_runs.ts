/**
 * `Store` contract: starting, reading and ending runs.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type StoreContext, type Suite, uniqueId } from "./context.ts";
import { beginAndComplete, READY, storeRun } from "./helpers.ts";

/** Registers the run cases of the `Store` contract. */
export function storeRunCases(suite: Suite<StoreContext>): void {
  suite.test(
    "startRun() refuses an existing run ID and returns the same run to a repeat of its attempt",
    async ({ store, clock }) => {
      const request = {
        runId: uniqueId("run"),
        deadline: clock() + 60_000,
        budget: { calls: 3, perTool: { fake_success: 1 } },
        ttlMs: 120_000,
        attemptId: "start-1",
        now: clock(),
      };
      const first = await store.startRun(request);
      assert.ok(first.ok);
      assert.deepEqual(first.run.budget, { calls: 3, perTool: { fake_success: 1 } });
      assert.deepEqual(first.run.used, { calls: 0, perTool: {} });
      assert.equal(first.run.status, "ACTIVE");
      assert.deepEqual(await store.startRun(request), first);
      assert.deepEqual(await store.startRun({ ...request, attemptId: "start-2" }), {
        ok: false,
        code: "RUN_ALREADY_EXISTS",
      });
      assert.deepEqual(await store.getRun(request.runId), first.run);
    },
  );

  suite.test(
    "getRun() is null and endRun() RUN_NOT_FOUND for a run that was never started",
    async ({ store, clock }) => {
      assert.equal(await store.getRun("run-never"), null);
      assert.deepEqual(await store.endRun({ runId: "run-never", now: clock() }), {
        ok: false,
        code: "RUN_NOT_FOUND",
      });
    },
  );

  suite.test(
    "endRun() ends a run once: a second end keeps the first endedAt and gives the same index",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      await beginAndComplete(ctx, runId, "call_1", READY);
      const endedAt = ctx.clock();
      const first = await ctx.store.endRun({ runId, now: endedAt });
      assert.ok(first.ok);
      assert.equal(first.run.status, "ENDED");
      assert.equal(first.run.endedAt, endedAt);
      assert.deepEqual(first.toolCallIds, ["call_1"]);
      const again = await ctx.store.endRun({ runId, now: endedAt + 1_000 });
      assert.deepEqual(again, first);
      assert.deepEqual(await ctx.store.getRun(runId), first.run);
    },
  );
}
