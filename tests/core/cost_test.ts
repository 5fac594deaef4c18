/**
 * A tool's `cost` as defined: a number is checked once, when the tool is defined; a function is
 * called once per call with a copy of the recorded input; a value built to trick the check is
 * read once and refused.
 */
import assert from "node:assert/strict";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";

const base = {
  name: "priced",
  readOnly: true,
  execute: () => ({ ok: true }),
  project: () => ({ evidence: "EVIDENCE_FOUND" as const, scope: "s", content: "c" }),
};

Deno.test("defineTool refuses a cost that is not an integer from 0 to MAX_COST, by name", () => {
  for (const cost of [-1, 0.5, Number.NaN, Infinity, 1e12 + 1, -0.0001]) {
    assert.throws(() => defineTool({ ...base, cost }), {
      name: "RangeError",
      message: /cost of tool "priced"/,
    }, String(cost));
  }
  for (const cost of ["5", null, {}, 5n, [5]]) {
    assert.throws(
      () => defineTool({ ...base, cost: cost as unknown as number }),
      {
        name: "TypeError",
        message: 'Cannot define tool "priced": cost must be a number or a function',
      },
      String(cost),
    );
  }
  assert.equal(defineTool({ ...base, cost: 0 }).cost, 0);
  assert.equal(defineTool({ ...base, cost: 1e12 }).cost, 1e12);
  assert.throws(
    () => new ToolBoundary({ store: new MemoryStore(), tools: [{ ...base, cost: -3 }] }),
    RangeError,
    "a boundary checks the tools it is given",
  );
});

Deno.test("a cost getter is read once: what was checked is what is reserved", async () => {
  let reads = 0;
  const definition = {
    ...base,
    get cost() {
      reads++;
      return reads === 1 ? 4 : -1;
    },
  };
  const tool = defineTool(definition);
  assert.equal(reads, 1);
  assert.equal(tool.cost, 4);
  const store = new MemoryStore();
  const boundary = new ToolBoundary({ store, tools: [tool] });
  const run = await boundary.startRun({ budget: { calls: 5, cost: 10 } });
  const result = await boundary.invoke(run, {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: "priced",
    input: {},
  });
  assert.equal(result.status, "READY");
  assert.equal(reads, 1);
  assert.deepEqual((await store.get(run.runId, "call_1"))?.cost, { reserved: 4, spent: 4 });
});

Deno.test("a boundary reads a cost once, also of a tool not made by defineTool: later reads change nothing", async () => {
  let reads = 0;
  const tool = {
    ...base,
    get cost() {
      reads++;
      return reads === 1 ? 4 : -1;
    },
  };
  const store = new MemoryStore();
  const boundary = new ToolBoundary({ store, tools: [tool] });
  assert.equal(reads, 1);
  const run = await boundary.startRun({ budget: { calls: 5, cost: 10 } });
  for (const toolCallId of ["call_1", "call_2"]) {
    const result = await boundary.invoke(run, {
      toolCallId,
      runId: run.runId,
      toolName: "priced",
      input: {},
    });
    assert.equal(result.status, "READY", toolCallId);
    assert.deepEqual((await store.get(run.runId, toolCallId))?.cost, { reserved: 4, spent: 4 });
  }
  assert.equal(reads, 1);
});

Deno.test("a cost function gets its own copy of the recorded input, once per call", async () => {
  const seen: unknown[] = [];
  let calls = 0;
  const tool = defineTool({
    ...base,
    cost: (input: { n: number; nested: { k: number } }) => {
      calls++;
      seen.push(structuredClone(input));
      input.nested.k = 99; // a cost function that writes changes nothing the tool or record see
      return input.n;
    },
    execute: (input: { n: number; nested: { k: number } }) => ({ k: input.nested.k }),
    project: (raw: { k: number }) => ({ evidence: "EVIDENCE_FOUND", scope: "s", content: raw.k }),
  });
  const store = new MemoryStore();
  const boundary = new ToolBoundary({ store, tools: [tool] });
  const run = await boundary.startRun({ budget: { calls: 5, cost: 10 } });
  // The caller's input has a getter and is changed once begin read it: the copy is what ran.
  let reads = 0;
  const input = {
    get n() {
      reads++;
      return 3;
    },
    nested: { k: 1 },
  };
  const pending = boundary.invoke(run, {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: "priced",
    input,
  });
  input.nested.k = 7;
  const result = await pending;
  assert.equal(result.status, "READY");
  assert.equal(calls, 1);
  assert.equal(reads, 1);
  assert.deepEqual(seen, [{ n: 3, nested: { k: 1 } }]);
  const record = await store.get(run.runId, "call_1");
  assert.equal(record?.requestJson, '{"n":3,"nested":{"k":1}}');
  assert.equal(record?.rawJson, '{"k":1}');
  assert.deepEqual(record?.cost, { reserved: 3, spent: 3 });
});
