/**
 * Resume and audit through the boundary: `onDuplicate: "replay"`, `recall`, `listCalls` and
 * `checkCitations`, on MemoryStore and on UpstashStore (real redis-server behind the
 * Upstash-compatible endpoint).
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  type BoundaryEvent,
  type BoundaryResult,
  defineTool,
  ERROR_MESSAGES,
  type ErrorCode,
  MemoryStore,
  type RunContext,
  type Store,
  ToolBoundary,
  type ToolBoundaryOptions,
  toolError,
} from "../src/mod.ts";
import { UpstashStore } from "../src/stores/upstash/mod.ts";
import { startUpstashFixture } from "./support/upstash_fixture.ts";

interface OpenStore {
  store: Store;
  close(): Promise<void>;
}

const STORES: { name: string; open(): Promise<OpenStore> }[] = [
  {
    name: "MemoryStore",
    open: () => Promise.resolve({ store: new MemoryStore(), close: () => Promise.resolve() }),
  },
  {
    name: "UpstashStore",
    open: async () => {
      const fixture = await startUpstashFixture();
      return {
        store: new UpstashStore({ redis: fixture.createRedis() }),
        close: () => fixture.stop(),
      };
    },
  },
];

let sequence = 0;
const uniqueId = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${sequence++}`;

/** How often each tool ran, and the gate the `waits` tool holds until a test opens it. */
interface Probe {
  executed: Record<string, number>;
  gate: PromiseWithResolvers<void>;
}

function tools(probe: Probe) {
  const ran = (name: string) => probe.executed[name] = (probe.executed[name] ?? 0) + 1;
  return [
    defineTool({
      name: "search",
      readOnly: true,
      input: v.object({ query: v.string(), limit: v.optional(v.number()) }),
      execute: ({ query }) => {
        ran("search");
        return { query, hits: query.includes("disk") ? ["rotate /var/log"] : [] };
      },
      project: (raw) => ({
        evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
        scope: `search for "${raw.query}"`,
        content: raw.hits,
      }),
    }),
    defineTool({
      name: "fails",
      readOnly: true,
      execute: () => {
        ran("fails");
        return toolError({ status: 503, body: "upstream down" });
      },
      project: () => ({ evidence: "NO_EVIDENCE", scope: "never", content: null }),
    }),
    defineTool({
      name: "waits",
      readOnly: true,
      execute: async () => {
        ran("waits");
        await probe.gate.promise;
        return { done: true };
      },
      project: () => ({ evidence: "EVIDENCE_FOUND", scope: "the wait", content: "done" }),
    }),
  ];
}

function system(store: Store, options: Partial<ToolBoundaryOptions> = {}) {
  const probe: Probe = { executed: {}, gate: Promise.withResolvers<void>() };
  const events: BoundaryEvent[] = [];
  const boundary = new ToolBoundary({
    store,
    tools: tools(probe),
    observe: (event) => events.push(event),
    ...options,
  });
  const start = (calls = 1_000) => boundary.startRun({ runId: uniqueId("run"), budget: { calls } });
  const envelope = (
    run: RunContext,
    toolName: string,
    input: unknown = {},
    toolCallId = uniqueId("call"),
  ) => ({ toolCallId, runId: run.runId, toolName, input });
  return { boundary, probe, events, start, envelope };
}

function expectError(result: BoundaryResult, code: ErrorCode, toolCallId: string): void {
  assert.deepEqual(result, { status: "ERROR", toolCallId, code, message: ERROR_MESSAGES[code] });
}

async function used(store: Store, runId: string): Promise<number> {
  return (await store.getRun(runId))!.used.calls;
}

// ---------------------------------------------------------------------------------------------
// onDuplicate: "replay"

async function replaysReady(store: Store) {
  const { boundary, probe, events, start, envelope } = system(store, { onDuplicate: "replay" });
  const run = await start(1);
  const call = envelope(run, "search", '{"query":"disk full","limit":5}');
  const first = await boundary.invoke(run, call);
  assert.equal(first.status, "READY");
  const record = await store.get(run.runId, call.toolCallId);
  // The same request with its keys in another order, as an object: the budget of 1 is used up.
  const again = await boundary.invoke(run, { ...call, input: { limit: 5, query: "disk full" } });
  assert.deepEqual(again, { ...first, replayed: true });
  assert.deepEqual(Object.keys(again), [...Object.keys(first), "replayed"]);
  assert.equal(probe.executed.search, 1, "the tool ran once");
  assert.equal(await used(store, run.runId), 1, "no budget used by the replay");
  assert.deepEqual(await store.get(run.runId, call.toolCallId), record, "record untouched");
  assert.deepEqual(events.filter((event) => event.type === "call.replayed"), [{
    type: "call.replayed",
    runId: run.runId,
    toolCallId: call.toolCallId,
    toolName: "search",
    status: "READY",
    code: null,
  }]);
}

async function replaysError(store: Store) {
  const { boundary, probe, start, envelope } = system(store, { onDuplicate: "replay" });
  const run = await start();
  const call = envelope(run, "fails");
  expectError(await boundary.invoke(run, call), "EXECUTION_FAILED", call.toolCallId);
  assert.deepEqual(await boundary.invoke(run, call), {
    status: "ERROR",
    toolCallId: call.toolCallId,
    code: "EXECUTION_FAILED",
    message: ERROR_MESSAGES.EXECUTION_FAILED,
    replayed: true,
  });
  assert.equal(probe.executed.fails, 1);
  assert.equal(await used(store, run.runId), 1);
}

async function replayWhileProjecting(store: Store) {
  const { boundary, probe, start, envelope } = system(store, { onDuplicate: "replay" });
  const run = await start();
  const call = envelope(run, "waits");
  const first = boundary.invoke(run, call);
  while (probe.executed.waits !== 1) await new Promise((resolve) => setTimeout(resolve, 1));
  expectError(await boundary.invoke(run, call), "OUTCOME_UNKNOWN", call.toolCallId);
  probe.gate.resolve();
  const done = await first;
  assert.equal(done.status, "READY");
  assert.deepEqual(await boundary.invoke(run, call), { ...done, replayed: true });
  assert.equal(probe.executed.waits, 1);
}

async function replayAfterExpiry(store: Store) {
  const { boundary, probe, start, envelope } = system(store, {
    onDuplicate: "replay",
    recordTtlMs: 50,
  });
  const run = await start();
  const call = envelope(run, "search", { query: "disk" });
  assert.equal((await boundary.invoke(run, call)).status, "READY");
  while (await store.get(run.runId, call.toolCallId) !== null) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expectError(await boundary.invoke(run, call), "RECORD_EXPIRED", call.toolCallId);
  assert.equal(probe.executed.search, 1);
}

async function replayRefusesOtherRequest(store: Store) {
  const { boundary, probe, start, envelope } = system(store, { onDuplicate: "replay" });
  const run = await start();
  const call = envelope(run, "search", { query: "disk" });
  await boundary.invoke(run, call);
  const record = await store.get(run.runId, call.toolCallId);
  const other = { ...call, input: { query: "disk", limit: 1 } };
  expectError(await boundary.invoke(run, other), "TOOL_CALL_CONFLICT", call.toolCallId);
  assert.equal(probe.executed.search, 1);
  assert.deepEqual(await store.get(run.runId, call.toolCallId), record);
  assert.equal(await used(store, run.runId), 1);
}

async function refusesByDefault(store: Store) {
  const { boundary, probe, events, start, envelope } = system(store);
  const run = await start();
  const call = envelope(run, "search", { query: "disk" });
  await boundary.invoke(run, call);
  expectError(await boundary.invoke(run, call), "DUPLICATE_TOOL_CALL", call.toolCallId);
  expectError(
    await boundary.invoke(run, { ...call, input: { query: "logs" } }),
    "TOOL_CALL_CONFLICT",
    call.toolCallId,
  );
  assert.equal(probe.executed.search, 1);
  assert.equal(events.some((event) => event.type === "call.replayed"), false);
}

type Case = [string, (store: Store) => Promise<void>];

const CASES: Case[] = [
  [
    "replay: a used key with the same request (any key order) gets the READY result as first returned, replayed: true, without running or budget",
    replaysReady,
  ],
  [
    "replay: a used key whose record is ERROR gets its code and message, replayed: true",
    replaysError,
  ],
  [
    "replay: a used key whose record is still PROJECTING is OUTCOME_UNKNOWN, then READY once it completes",
    replayWhileProjecting,
  ],
  ["replay: a used key whose record expired is RECORD_EXPIRED", replayAfterExpiry],
  [
    "replay: a used key with another request is TOOL_CALL_CONFLICT and the record stays",
    replayRefusesOtherRequest,
  ],
  [
    "by default a used key is DUPLICATE_TOOL_CALL for the same request, TOOL_CALL_CONFLICT for another",
    refusesByDefault,
  ],
];

for (const { name, open } of STORES) {
  Deno.test(`${name}: replay, recall, listCalls and checkCitations`, async (t) => {
    const { store, close } = await open();
    try {
      for (const [label, fn] of CASES) await t.step(label, () => fn(store));
    } finally {
      await close();
    }
  });
}

Deno.test("ToolBoundary refuses an onDuplicate other than refuse or replay with a TypeError", () => {
  assert.throws(
    () => new ToolBoundary({ tools: [], onDuplicate: "again" as "replay" }),
    TypeError,
  );
});
