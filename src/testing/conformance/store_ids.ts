/**
 * `Store` contract: IDs outside the allow-lists, treated alike by every store.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { StoreContext, Suite } from "./context.ts";
import { beginAndComplete, beginRequest, READY, storeRun } from "./helpers.ts";

/** Registers the ID cases of the `Store` contract. */
export function storeIdCases(suite: Suite<StoreContext>): void {
  suite.test(
    "every method takes an ID outside the allow-lists as naming nothing, and begin and startRun refuse it",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      await beginAndComplete(ctx, runId, "call_ok", READY);
      const badRun = "run{x}";
      const badCall = "call x";
      const now = clock();
      assert.deepEqual(
        await store.startRun({
          runId: badRun,
          deadline: now + 1_000,
          budget: { calls: 1, perTool: {} },
          ttlMs: 1_000,
          attemptId: "a",
          now,
        }),
        { ok: false, code: "INVALID_RUN_ID" },
      );
      // The run ID is checked first.
      assert.deepEqual(await store.begin(beginRequest(badRun, badCall, clock)), {
        ok: false,
        code: "INVALID_RUN_ID",
      });
      assert.deepEqual(await store.begin(beginRequest(runId, badCall, clock)), {
        ok: false,
        code: "INVALID_TOOL_CALL_ID",
      });
      assert.equal(await store.getRun(badRun), null);
      assert.equal(await store.get(runId, badCall), null);
      assert.equal(await store.get(badRun, "call_ok"), null);
      for (const [r, c] of [[badRun, "call_ok"], [runId, badCall]] as const) {
        assert.deepEqual(
          await store.complete({ runId: r, toolCallId: c, attemptId: "a", outcome: READY, now }),
          { ok: false, code: "RECORD_EXPIRED" },
        );
      }
      assert.deepEqual(await store.endRun({ runId: badRun, now }), {
        ok: false,
        code: "RUN_NOT_FOUND",
      });
      const facts = await store.readFacts({
        runId,
        identities: [{ runId, toolCallId: badCall }, { runId, toolCallId: "call_ok" }],
        maxFacts: 10,
        maxBytes: 10_000,
      });
      assert.deepEqual(facts.rows.map((row) => row.toolCallId), ["call_ok"]);
      const none = await store.readFacts({
        runId: badRun,
        identities: [],
        maxFacts: 1,
        maxBytes: 1,
      });
      assert.deepEqual([none.rows, none.omitted, none.unread ?? 0], [[], 0, 0]);
    },
  );
}
