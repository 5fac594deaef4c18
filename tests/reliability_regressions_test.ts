/**
 * Named regression tests for bugs the reliability tests found, each written out plainly so it
 * reads without the model.
 */
import assert from "node:assert/strict";
import { defineTool, ToolBoundary } from "../src/mod.ts";
import { MemoryStore } from "../src/stores/memory.ts";

Deno.test("regression: a key whose record expired stays used in its run (no second execution, no fact twice)", async () => {
  let now = Date.UTC(2026, 5, 1);
  const clock = () => now;
  let executions = 0;
  const boundary = new ToolBoundary({
    store: new MemoryStore({ clock }),
    clock,
    recordTtlMs: 1_000,
    tools: [defineTool({
      name: "lookup",
      readOnly: true,
      execute: () => ++executions,
      project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "lookup", content: raw }),
    })],
  });
  const run = await boundary.startRun({ runId: "run-1", ttlMs: 60_000, budget: { calls: 5 } });
  const call = { toolCallId: "call_0", runId: "run-1", toolName: "lookup", input: {} };
  assert.equal((await boundary.invoke(run, call)).status, "READY");
  now += 1_000; // the record expires; the run is still active
  const again = await boundary.invoke(run, call);
  assert.equal(again.status === "ERROR" && again.code, "DUPLICATE_TOOL_CALL");
  assert.equal(executions, 1, "the tool ran once");
  assert.equal((await boundary.store.getRun("run-1"))?.used.calls, 1, "no budget used twice");
  assert.deepEqual(await boundary.endRun(run), [], "the expired record is no fact, and no twin");
});
