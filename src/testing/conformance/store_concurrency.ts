/**
 * `Store` contract: begin is atomic under concurrent callers, for keys and for budgets.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { StoreContext, Suite } from "./context.ts";
import { beginRequest, storeRun } from "./helpers.ts";

/** Registers the concurrency cases of the `Store` contract. */
export function storeConcurrencyCases(suite: Suite<StoreContext>): void {
  suite.test(
    "begin() lets exactly one of 100 concurrent begins of one key win",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const results = await Promise.all(
        Array.from({ length: 100 }, () => store.begin(beginRequest(runId, "call_race", clock))),
      );
      assert.equal(results.filter((r) => r.ok).length, 1);
      for (const r of results) if (!r.ok) assert.equal(r.code, "DUPLICATE_TOOL_CALL");
      assert.equal((await store.getRun(runId))?.used.calls, 1);
    },
  );

  suite.test(
    "begin() gives 40 concurrent begins of one run the positions 1 to 40, each once",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.begin(beginRequest(runId, `call_${i}`, clock))),
      );
      const positions = results.map((r) => r.ok ? r.record.seq : 0).sort((x, y) => x - y);
      assert.deepEqual(positions, Array.from({ length: 40 }, (_, i) => i + 1));
      for (let i = 0; i < 40; i++) {
        const begun = results[i]!;
        assert.equal((await store.get(runId, `call_${i}`))?.seq, begun.ok && begun.record.seq);
      }
    },
  );

  suite.test(
    "begin() lets exactly 7 of 60 concurrent calls begin against a run budget of 7",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock, { calls: 7, perTool: {} });
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => store.begin(beginRequest(runId, `call_${i}`, clock))),
      );
      assert.equal(results.filter((r) => r.ok).length, 7);
      for (const r of results) if (!r.ok) assert.equal(r.code, "RUN_BUDGET_EXHAUSTED");
      const state = await store.getRun(runId);
      assert.equal(state?.used.calls, 7);
    },
  );

  suite.test(
    "begin() lets exactly 5 of 60 concurrent calls begin against a tool budget of 5",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock, { calls: 100, perTool: { fake_success: 5 } });
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => store.begin(beginRequest(runId, `call_${i}`, clock))),
      );
      assert.equal(results.filter((r) => r.ok).length, 5);
      for (const r of results) if (!r.ok) assert.equal(r.code, "TOOL_BUDGET_EXHAUSTED");
      const other = await store.begin(
        beginRequest(runId, "call_other", clock, { toolName: "fake_no_evidence" }),
      );
      assert.equal(other.ok, true, "another tool still has room");
      const state = await store.getRun(runId);
      assert.equal(state?.used.calls, 6);
      assert.equal(state?.used.perTool.fake_success, 5);
    },
  );
}
