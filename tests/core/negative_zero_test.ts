/**
 * `-0`, which a JavaScript value (and JSON text such as `-0` or `-0.0`) can hold but
 * `JSON.stringify` writes as `0`: the record holds the JSON text as serialized, so a `-0` in an
 * input or a raw response is `0` for the tool, the projector, the agent and `inspect()`, and
 * both stores give the same record.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { defineTool, type JsonValue, ToolBoundary } from "../../src/mod.ts";
import type { CanonicalRecord } from "../../src/harness/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { STORES } from "../support/stores.ts";

/** Every path in `value` that holds `-0`. */
function negativeZeros(value: unknown, path = "$"): string[] {
  if (Object.is(value, -0)) return [path];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => negativeZeros(item, `${path}.${key}`));
}

/** What the tools and projectors were handed, to check they never saw `-0`. */
const seen: unknown[] = [];

const tools = [
  defineTool({
    name: "zero_top",
    readOnly: true,
    execute: (input) => (seen.push(input), -0 as unknown as JsonValue),
    project: (raw) => (seen.push(raw), { evidence: "EVIDENCE_FOUND", scope: "top", content: raw }),
  }),
  defineTool({
    name: "zero_nested",
    readOnly: true,
    input: v.object({ n: v.number(), list: v.array(v.number()) }),
    execute: (input) => (seen.push(input), { a: -0, b: [-0, { c: -0 }], echo: input }),
    project: (raw) => (seen.push(raw), {
      evidence: "EVIDENCE_FOUND",
      scope: "nested",
      content: { raw, own: -0 },
    }),
  }),
];

const CALLS: [string, string, unknown][] = [
  ["call_top", "zero_top", { n: -0 }],
  ["call_nested", "zero_nested", { n: -0, list: [1, -0] }],
  ["call_text", "zero_nested", '{"n":-0.0,"list":[-0,-0e3]}'],
];

/** One clock for the boundary and MemoryStore, so that both stores report the same times. */
const START = Date.now();
const clock = () => START;
const BOTH = [
  {
    name: "MemoryStore",
    open: () =>
      Promise.resolve({ store: new MemoryStore({ clock }), close: () => Promise.resolve() }),
  },
  STORES.find((entry) => entry.name === "UpstashStore")!,
];

/** Runs the calls on a fresh boundary over `store` at a fixed clock; returns their records. */
async function recordsOn(store: Store): Promise<CanonicalRecord[]> {
  const boundary = new ToolBoundary({ store, tools, clock });
  const run = await boundary.startRun({ runId: "run-negative-zero", ttlMs: 600_000 });
  const records: CanonicalRecord[] = [];
  for (const [toolCallId, toolName, input] of CALLS) {
    const result = await boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
    assert.equal(result.status, "READY", toolCallId);
    assert.deepEqual(negativeZeros(result), [], `${toolCallId}: what the agent got`);
    records.push((await boundary.inspect(run.runId, toolCallId))!);
  }
  return records;
}

Deno.test("a -0 in an input or a raw response (top level or nested) is recorded as 0, the same record on both stores", async () => {
  const byStore: CanonicalRecord[][] = [];
  for (const { name, open } of BOTH) {
    const { store, close } = await open();
    try {
      seen.length = 0;
      const records = await recordsOn(store);
      assert.deepEqual(negativeZeros(records), [], `${name}: inspect()`);
      assert.deepEqual(negativeZeros(seen), [], `${name}: what the tools and projectors got`);
      assert.equal(seen.length, 2 * CALLS.length);
      const stored = await store.get("run-negative-zero", "call_nested");
      assert.equal(stored?.requestJson, '{"n":0,"list":[1,0]}');
      assert.equal(stored?.rawJson, '{"a":0,"b":[0,{"c":0}],"echo":{"n":0,"list":[1,0]}}');
      assert.equal((await store.get("run-negative-zero", "call_top"))?.rawJson, "0");
      byStore.push(records);
    } finally {
      await close();
    }
  }
  assert.equal(byStore.length, 2);
  // Strict: Object.is on every number, so a -0 on one side and 0 on the other would differ.
  assert.deepStrictEqual(byStore[0], byStore[1]);
  assert.deepStrictEqual(byStore[0]![0]!.raw, 0);
  assert.deepStrictEqual(byStore[0]![2]!.request, { n: 0, list: [0, 0] });
});

Deno.test("a store keeps the JSON text it is given: text with -0 written by another writer reads back the same from both stores", async () => {
  for (const { name, open } of STORES) {
    const { store, close } = await open();
    try {
      const now = Date.now();
      const started = await store.startRun({
        runId: "run-text",
        deadline: now + 60_000,
        budget: { calls: 1, perTool: {} },
        ttlMs: 600_000,
        attemptId: "start-1",
        now,
      });
      assert.equal(started.ok, true);
      const begun = await store.begin({
        runId: "run-text",
        toolCallId: "call_1",
        toolName: "t",
        requestJson: '{"n":-0}',
        requestDigest: "digest",
        attemptId: "attempt-1",
        ttlMs: 600_000,
        now,
      });
      assert.equal(begun.ok, true);
      const done = await store.complete({
        runId: "run-text",
        toolCallId: "call_1",
        attemptId: "attempt-1",
        outcome: {
          status: "READY",
          evidence: "NO_EVIDENCE",
          rawJson: "-0",
          agentResultJson: '{"evidence":"NO_EVIDENCE","scope":"s","content":-0}',
        },
        now,
      });
      assert.equal(done.ok, true);
      const record = await store.get("run-text", "call_1");
      assert.deepEqual(
        [record?.requestJson, record?.rawJson, record?.agentResultJson],
        ['{"n":-0}', "-0", '{"evidence":"NO_EVIDENCE","scope":"s","content":-0}'],
        name,
      );
    } finally {
      await close();
    }
  }
});
