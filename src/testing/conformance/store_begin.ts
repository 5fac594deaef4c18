/**
 * `Store` contract: begin, the one atomic step before a tool runs.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { StoreContext, Suite } from "./context.ts";
import { assertAbsent, beginRequest, storeRun } from "./helpers.ts";

/** Registers the begin cases of the `Store` contract. */
export function storeBeginCases(suite: Suite<StoreContext>): void {
  suite.test(
    "begin() creates one PROJECTING record with the exact request and counts both budgets",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const request = beginRequest(runId, "call_new", clock, {
        requestJson: '{"query":"disk ✓"}',
      });
      const begun = await store.begin(request);
      assert.ok(begun.ok);
      assert.deepEqual(await store.get(runId, "call_new"), begun.record);
      const { record } = begun;
      assert.deepEqual(
        [record.runId, record.toolCallId, record.toolName, record.status, record.evidence],
        [runId, "call_new", "fake_success", "PROJECTING", null],
      );
      assert.equal(record.requestJson, request.requestJson);
      assert.deepEqual([record.rawJson, record.agentResultJson, record.errorCode], [
        null,
        null,
        null,
      ]);
      assert.equal(record.attemptId, request.attemptId);
      assert.equal(record.expiresAt - record.createdAt, request.ttlMs);
      const used = (await store.getRun(runId))?.used;
      assert.deepEqual(used, { calls: 1, perTool: { fake_success: 1 } });
    },
  );

  suite.test(
    "begin() refuses an unknown run, a used key, a late call and an ended run, and writes nothing",
    async (ctx) => {
      const { store, clock } = ctx;
      assert.deepEqual(await store.begin(beginRequest("run-unknown", "call_1", clock)), {
        ok: false,
        code: "RUN_NOT_FOUND",
      });
      const runId = await storeRun(store, clock, { calls: 2, perTool: {} });
      assert.equal((await store.begin(beginRequest(runId, "call_1", clock))).ok, true);
      assert.deepEqual(await store.begin(beginRequest(runId, "call_1", clock)), {
        ok: false,
        code: "DUPLICATE_TOOL_CALL",
      });
      const late = await store.begin(
        beginRequest(runId, "call_late", clock, { now: clock() + 700_000 }),
      );
      assert.deepEqual(late, { ok: false, code: "DEADLINE_EXCEEDED" });
      const ended = await store.endRun({ runId, now: clock() });
      assert.equal(ended.ok, true);
      assert.deepEqual(await store.begin(beginRequest(runId, "call_2", clock)), {
        ok: false,
        code: "RUN_INACTIVE",
      });
      const state = await store.getRun(runId);
      assert.equal(state?.status, "ENDED");
      assert.equal(state?.used.calls, 1);
      for (const id of ["call_late", "call_2"]) await assertAbsent(ctx, runId, id);
    },
  );

  suite.test(
    "begin() refuses a used key and keeps the first record",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const first = await store.begin(beginRequest(runId, "call_used", clock));
      assert.ok(first.ok);
      const second = await store.begin(
        beginRequest(runId, "call_used", clock, {
          toolName: "fake_no_evidence",
          requestJson: '{"query":"other"}',
        }),
      );
      assert.deepEqual(second, { ok: false, code: "DUPLICATE_TOOL_CALL" });
      assert.deepEqual(await store.get(runId, "call_used"), first.record);
      assert.deepEqual((await store.getRun(runId))?.used, {
        calls: 1,
        perTool: { fake_success: 1 },
      });
    },
  );

  suite.test(
    "begin() treats a repeat of the same attempt as the same begin: not a duplicate, counted once",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock, { calls: 1, perTool: {} });
      const request = beginRequest(runId, "call_retry", clock);
      const first = await store.begin(request);
      const again = await store.begin(request);
      assert.equal(first.ok && again.ok, true);
      assert.deepEqual(again, first);
      assert.equal((await store.getRun(runId))?.used.calls, 1);
    },
  );
}
