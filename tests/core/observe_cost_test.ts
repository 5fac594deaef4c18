/**
 * The `call.finished` event of a call of a tool with a cost carries its record's cost, for an
 * observer (a span, a log) to report what the call reserved and spent.
 */
import assert from "node:assert/strict";
import { type BoundaryEvent, defineTool, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";

const priced = defineTool({
  name: "priced",
  readOnly: true,
  cost: (input: Record<string, unknown>) => (input.units as number | undefined) ?? 4,
  execute: (input: Record<string, unknown>, { settle }) => {
    if (typeof input.used === "number") settle(input.used);
    return { ok: true };
  },
  project: () => ({ evidence: "EVIDENCE_FOUND", scope: "s", content: null }),
});
const free = defineTool({
  name: "free",
  readOnly: true,
  execute: () => ({ ok: true }),
  project: () => ({ evidence: "EVIDENCE_FOUND", scope: "s", content: null }),
});

Deno.test("call.finished carries the record's cost for a call of a tool with one, and none otherwise", async () => {
  const events: BoundaryEvent[] = [];
  const boundary = new ToolBoundary({
    tools: [priced, free],
    observe: (event) => events.push(event),
  });
  const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5, cost: 10 } });
  const call = (toolCallId: string, toolName: string, input: Record<string, unknown>) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
  await call("call_1", "priced", { units: 6, used: 1 });
  await call("call_2", "priced", {});
  await call("call_3", "free", {});
  await call("call_4", "priced", { units: 6 });
  const seen = events.flatMap((event) =>
    event.type === "call.finished"
      ? [[event.toolCallId, event.cost ?? null]]
      : event.type === "call.refused"
      ? [[event.toolCallId, event.code]]
      : []
  );
  assert.deepEqual(seen, [
    ["call_1", { reserved: 6, spent: 1 }],
    ["call_2", { reserved: 4, spent: 4 }],
    ["call_3", null],
    ["call_4", "BUDGET_EXHAUSTED"],
  ]);
  // The event's cost is the record's.
  assert.deepEqual((await boundary.inspect(run.runId, "call_1"))?.cost, { reserved: 6, spent: 1 });
});

Deno.test("call.finished of a costed call whose complete failed carries its reservation, spent null", async () => {
  const events: BoundaryEvent[] = [];
  const store = new MemoryStore();
  store.complete = () => Promise.reject(new Error("connection reset"));
  const boundary = new ToolBoundary({
    tools: [priced],
    store,
    storeRetryMs: 0,
    observe: (event) => events.push(event),
  });
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const result = await boundary.invoke(run, {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: "priced",
    input: { used: 2 },
  });
  assert.equal(result.status === "ERROR" && result.code, "STORE_UNAVAILABLE");
  const finished = events.find((event) => event.type === "call.finished");
  assert.deepEqual(finished?.type === "call.finished" && finished.cost, {
    reserved: 4,
    spent: null,
  });
});
