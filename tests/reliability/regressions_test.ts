/**
 * Named regression tests for bugs the reliability tests found, each written out plainly so it
 * reads without the model.
 */
import assert from "node:assert/strict";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";

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

Deno.test("regression: a tool returning a cyclic object gets SERIALIZATION_FAILED instead of hanging", async () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  cyclic.again = cyclic;
  let deep: unknown = "bottom";
  for (let i = 0; i < 100_000; i++) deep = [deep];
  const getter = Object.defineProperty({}, "boom", {
    enumerable: true,
    get() {
      throw new Error("getter ran");
    },
  });
  const raws: Record<string, unknown> = { cyclic, deep, getter };
  const boundary = new ToolBoundary({
    tools: Object.keys(raws).map((name) =>
      defineTool({
        name,
        readOnly: true,
        execute: (): unknown => raws[name],
        project: () => ({ evidence: "EVIDENCE_FOUND", scope: "x", content: null }),
      })
    ),
  });
  const run = await boundary.startRun({ ttlMs: 10_000 });
  for (const name of Object.keys(raws)) {
    const result = await boundary.invoke(run, {
      toolCallId: `call_${name}`,
      runId: run.runId,
      toolName: name,
      input: {},
    });
    assert.equal(result.status === "ERROR" && result.code, "SERIALIZATION_FAILED", name);
    assert.equal(
      (await boundary.inspect(run.runId, `call_${name}`))?.errorCode,
      "SERIALIZATION_FAILED",
    );
  }
});

Deno.test("regression: throwing getters and too-deep content give safe codes, never a throw", async () => {
  const getter = Object.defineProperty({}, "boom", {
    enumerable: true,
    get() {
      throw new Error("getter ran");
    },
  });
  let deepContent: unknown = 1;
  for (let i = 0; i < 100_000; i++) deepContent = [deepContent];
  const boundary = new ToolBoundary({
    tools: [
      defineTool({
        name: "deep_view",
        readOnly: true,
        execute: () => 1,
        project: () => ({ evidence: "EVIDENCE_FOUND", scope: "x", content: deepContent }),
      }),
      defineTool({
        name: "getter_view",
        readOnly: true,
        execute: () => 1,
        project: () => getter as never,
      }),
      defineTool({
        name: "echo",
        readOnly: true,
        execute: () => 1,
        project: () => ({ evidence: "NO_EVIDENCE", scope: "x", content: null }),
      }),
    ],
  });
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const call = (toolCallId: string, toolName: string, input: unknown) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
  const deep = await call("call_deep", "deep_view", {});
  assert.equal(deep.status === "ERROR" && deep.code, "INVALID_PROJECTION");
  const thrower = await call("call_getter", "getter_view", {});
  assert.equal(thrower.status === "ERROR" && thrower.code, "INVALID_PROJECTION");
  const input = await call("call_input", "echo", getter);
  assert.equal(input.status === "ERROR" && input.code, "INVALID_INPUT");
  assert.equal(await boundary.inspect(run.runId, "call_input"), null);
});
