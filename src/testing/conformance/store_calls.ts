/**
 * `Store` contract: request identity (duplicate or conflict), replay, and a key that stays begun
 * for the life of its run. What a run keeps of each begun call, read back, is `CallIndex`'s
 * (`call_index.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { StoreContext, Suite } from "./context.ts";
import {
  beginAndComplete,
  beginRequest,
  FAILED,
  NO_EVIDENCE,
  OTHER_DIGEST,
  READY,
  storeRun,
} from "./helpers.ts";

/** Registers the request identity and replay cases of the `Store` contract. */
export function storeCallCases(suite: Suite<StoreContext>): void {
  suite.test(
    "begin() refuses a begun key as DUPLICATE_TOOL_CALL for the same digest and TOOL_CALL_CONFLICT for another, before budgets, keeping the first record",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 1, perTool: { fake_success: 1 } });
      await beginAndComplete(ctx, runId, "call_key", READY);
      const first = await store.get(runId, "call_key");
      const usedBefore = (await store.getRun(runId))?.used;
      // Both budgets are spent: the key's refusal still comes first. The digest alone decides
      // (the boundary's digest covers the tool): a store never compares the tool name.
      const same = beginRequest(runId, "call_key", clock, { toolName: "fake_no_evidence" });
      assert.deepEqual(await store.begin(same), { ok: false, code: "DUPLICATE_TOOL_CALL" });
      const other = beginRequest(runId, "call_key", clock, {
        requestJson: '{"query":"other"}',
        requestDigest: OTHER_DIGEST,
      });
      assert.deepEqual(await store.begin(other), { ok: false, code: "TOOL_CALL_CONFLICT" });
      assert.deepEqual(await store.begin({ ...other, attemptId: "another", replay: true }), {
        ok: false,
        code: "TOOL_CALL_CONFLICT",
      });
      assert.deepEqual(await store.get(runId, "call_key"), first, "the first record, untouched");
      assert.deepEqual((await store.getRun(runId))?.used, usedBefore, "no budget used");
      assert.deepEqual(usedBefore, { calls: 1, perTool: { fake_success: 1 } });
      // A new key is refused by the budget, not as a duplicate.
      assert.deepEqual(await store.begin(beginRequest(runId, "call_new", clock)), {
        ok: false,
        code: "TOOL_BUDGET_EXHAUSTED",
      });
    },
  );

  suite.test(
    "begin() with replay refuses a same-digest key as DUPLICATE_TOOL_CALL carrying its READY, ERROR or PROJECTING record, and only while the run is ACTIVE",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 3, perTool: {} });
      await beginAndComplete(ctx, runId, "call_ready", NO_EVIDENCE);
      await beginAndComplete(ctx, runId, "call_error", FAILED);
      await beginAndComplete(ctx, runId, "call_projecting", null);
      for (const toolCallId of ["call_ready", "call_error", "call_projecting"]) {
        const record = await store.get(runId, toolCallId);
        assert.ok(record);
        const replayed = await store.begin(
          beginRequest(runId, toolCallId, clock, { replay: true }),
        );
        assert.deepEqual(replayed, { ok: false, code: "DUPLICATE_TOOL_CALL", record }, toolCallId);
        assert.deepEqual(await store.get(runId, toolCallId), record, "never touched");
      }
      assert.equal((await store.getRun(runId))?.used.calls, 3, "no budget used");
      assert.equal((await store.endRun({ runId, now: clock() })).ok, true);
      const late = await store.begin(beginRequest(runId, "call_ready", clock, { replay: true }));
      assert.deepEqual(late, { ok: false, code: "RUN_INACTIVE" });
    },
  );

  suite.test(
    "after a record expired its key stays begun: replay carries null, another digest is TOOL_CALL_CONFLICT, and no budget is used",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      await beginAndComplete(ctx, runId, "call_gone", READY, ctx.ttlMs);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      assert.equal(await store.get(runId, "call_gone"), null);
      assert.deepEqual(
        await store.begin(beginRequest(runId, "call_gone", clock, { replay: true })),
        { ok: false, code: "DUPLICATE_TOOL_CALL", record: null },
      );
      assert.deepEqual(
        await store.begin(beginRequest(runId, "call_gone", clock, { requestDigest: OTHER_DIGEST })),
        { ok: false, code: "TOOL_CALL_CONFLICT" },
      );
      assert.equal((await store.getRun(runId))?.used.calls, 1, "counted once");
    },
  );

  suite.test(
    "a resent begin of the same attempt is the same begin, with replay or another digest too: not a duplicate, counted once",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 1, perTool: {} });
      const request = beginRequest(runId, "call_resent", clock);
      const first = await store.begin(request);
      assert.ok(first.ok);
      assert.deepEqual(await store.begin({ ...request, replay: true }), first);
      assert.deepEqual(await store.begin({ ...request, requestDigest: OTHER_DIGEST }), first);
      assert.equal((await store.getRun(runId))?.used.calls, 1);
    },
  );
}
