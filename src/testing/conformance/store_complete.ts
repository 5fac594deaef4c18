/**
 * `Store` contract: complete, the lifecycle PROJECTING -> READY | ERROR.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { CompleteOutcome } from "../../core/store.ts";
import type { StoreContext, Suite } from "./context.ts";
import {
  assertAbsent,
  beginAndComplete,
  beginRequest,
  endRunIndex,
  FAILED,
  NO_EVIDENCE,
  READY,
  storeRun,
} from "./helpers.ts";

/** Registers the complete cases of the `Store` contract. */
export function storeCompleteCases(suite: Suite<StoreContext>): void {
  suite.test(
    "complete() allows only PROJECTING -> READY | ERROR by the attempt that began the record",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const complete = (toolCallId: string, attemptId: string, outcome: CompleteOutcome) =>
        store.complete({ runId, toolCallId, attemptId, outcome, now: clock() });

      // READY with evidence ERROR is refused and the record stays PROJECTING.
      const a = await beginAndComplete(ctx, runId, "call_a", null);
      const bad = { ...READY, evidence: "ERROR" } as unknown as CompleteOutcome;
      assert.deepEqual(await complete("call_a", a, bad), { ok: false, code: "ILLEGAL_TRANSITION" });
      assert.equal((await store.get(runId, "call_a"))?.status, "PROJECTING");
      // Another attempt cannot complete someone else's record.
      assert.deepEqual(await complete("call_a", "other-attempt", READY), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      assert.equal((await store.get(runId, "call_a"))?.status, "PROJECTING");

      // READY -> ERROR and READY -> READY (other content) are refused; the record is unchanged.
      const b = await beginAndComplete(ctx, runId, "call_b", READY);
      const readyRecord = await store.get(runId, "call_b");
      assert.deepEqual(await complete("call_b", b, FAILED), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      assert.deepEqual(await complete("call_b", b, NO_EVIDENCE), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      assert.deepEqual(await store.get(runId, "call_b"), readyRecord);

      // ERROR -> READY is refused; ERROR carries evidence ERROR and no agent result.
      const c = await beginAndComplete(ctx, runId, "call_c", FAILED);
      assert.deepEqual(await complete("call_c", c, READY), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      const errorRecord = await store.get(runId, "call_c");
      assert.equal(errorRecord?.status, "ERROR");
      assert.equal(errorRecord?.evidence, "ERROR");
      assert.equal(errorRecord?.errorCode, "EXECUTION_FAILED");
      assert.equal(errorRecord?.agentResultJson, null);

      // A complete of a key that never existed is RECORD_EXPIRED and creates nothing.
      assert.deepEqual(await complete("call_none", "x", READY), {
        ok: false,
        code: "RECORD_EXPIRED",
      });
      await assertAbsent(ctx, runId, "call_none");

      // Neither the ERROR record nor the PROJECTING one can become a fact.
      const { rows } = await store.readFacts({
        runId,
        identities: [{ runId, toolCallId: "call_c" }, { runId, toolCallId: "call_a" }],
        maxFacts: 10,
        maxBytes: 10_000,
      });
      assert.deepEqual(rows, []);
    },
  );

  suite.test(
    "complete() writes READY with its evidence, raw and agent result, and ERROR with its code",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      await beginAndComplete(ctx, runId, "call_ready", NO_EVIDENCE);
      await beginAndComplete(ctx, runId, "call_error", {
        status: "ERROR",
        errorCode: "PROJECTION_FAILED",
        rawJson: '{"kept":true}',
      });
      const ready = await store.get(runId, "call_ready");
      assert.deepEqual(
        [ready?.status, ready?.evidence, ready?.rawJson, ready?.agentResultJson, ready?.errorCode],
        ["READY", "NO_EVIDENCE", NO_EVIDENCE.rawJson, NO_EVIDENCE.agentResultJson, null],
      );
      const error = await store.get(runId, "call_error");
      assert.deepEqual(
        [error?.status, error?.evidence, error?.rawJson, error?.agentResultJson, error?.errorCode],
        ["ERROR", "ERROR", '{"kept":true}', null, "PROJECTION_FAILED"],
      );
      assert.deepEqual((await endRunIndex(ctx, runId)).toolCallIds, ["call_ready", "call_error"]);
    },
  );

  suite.test(
    "complete() returns the same record to a repeat of the same attempt and outcome, indexed once",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const attemptId = await beginAndComplete(ctx, runId, "call_once", READY);
      const first = await ctx.store.get(runId, "call_once");
      const again = await ctx.store.complete({
        runId,
        toolCallId: "call_once",
        attemptId,
        outcome: READY,
        now: ctx.clock(),
      });
      assert.deepEqual(again, { ok: true, record: first });
      const { toolCallIds } = await endRunIndex(ctx, runId);
      assert.deepEqual(toolCallIds, ["call_once"], "a repeated complete is indexed once");
    },
  );

  suite.test(
    "complete() keeps an ERROR outcome's failure exactly, refuses a malformed or READY one, and a repeat must carry the same",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const failure = { name: "TypeError", message: 'quote " 日本 \u0000 <b>' };
      const threw: CompleteOutcome = {
        status: "ERROR",
        errorCode: "EXECUTION_FAILED",
        rawJson: null,
        failure,
      };
      const attemptId = await beginAndComplete(ctx, runId, "call_threw", threw);
      const read = await store.get(runId, "call_threw");
      assert.deepEqual(read?.failure, failure);
      const again = { runId, toolCallId: "call_threw", attemptId, now: clock() };
      assert.deepEqual(await store.complete({ ...again, outcome: threw }), {
        ok: true,
        record: read,
      });
      for (const other of [FAILED, { ...FAILED, failure: { name: "Error", message: null } }]) {
        assert.deepEqual(await store.complete({ ...again, outcome: other }), {
          ok: false,
          code: "ILLEGAL_TRANSITION",
        });
      }
      const bad = [
        { ...FAILED, failure: { name: "not safe", message: null } },
        { ...FAILED, failure: { name: "Error", message: "x".repeat(4_096) } },
        { ...READY, failure },
      ];
      for (const [i, outcome] of bad.entries()) {
        const request = beginRequest(runId, `call_bad_${i}`, clock);
        assert.equal((await store.begin(request)).ok, true);
        const done = await store.complete({
          runId,
          toolCallId: `call_bad_${i}`,
          attemptId: request.attemptId,
          outcome: outcome as CompleteOutcome,
          now: clock(),
        });
        assert.deepEqual(done, { ok: false, code: "ILLEGAL_TRANSITION" }, `outcome ${i}`);
        assert.equal((await store.get(runId, `call_bad_${i}`))?.status, "PROJECTING");
      }
      // Without one, no failure member at all.
      await beginAndComplete(ctx, runId, "call_plain", FAILED);
      const plain = await store.get(runId, "call_plain");
      assert.equal(plain !== null && "failure" in plain, false);
    },
  );
}
