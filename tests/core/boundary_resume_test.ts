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
  type RunContext,
  ToolBoundary,
  type ToolBoundaryOptions,
  toolError,
} from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { STORES, uniqueId } from "../support/stores.ts";

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

function expectError(result: BoundaryResult, code: ErrorCode, toolCallId: string | null): void {
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
    result: again,
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

// ---------------------------------------------------------------------------------------------
// recall

async function recallsRecorded(store: Store) {
  const { boundary, probe, events, start, envelope } = system(store);
  const run = await start();
  const ready = envelope(run, "search", '{"query":"disk","limit":2}');
  const failed = envelope(run, "fails");
  const first = await boundary.invoke(run, ready);
  expectError(await boundary.invoke(run, failed), "EXECUTION_FAILED", failed.toolCallId);
  const usedBefore = await used(store, run.runId);
  await boundary.endRun(run);
  const seen = events.length;
  // After the run ended too, and with the input as an object in another key order.
  const recalled = await boundary.recall(run, { ...ready, input: { limit: 2, query: "disk" } });
  assert.deepEqual(recalled, { ...first, replayed: true });
  assert.deepEqual(await boundary.recall(run, failed), {
    status: "ERROR",
    toolCallId: failed.toolCallId,
    code: "EXECUTION_FAILED",
    message: ERROR_MESSAGES.EXECUTION_FAILED,
    replayed: true,
  });
  assert.deepEqual(probe.executed, { search: 1, fails: 1 }, "nothing ran again");
  assert.equal(await used(store, run.runId), usedBefore, "no budget used");
  assert.equal(events.length, seen, "a recall tells the observer nothing");
}

async function recallRefusals(store: Store) {
  const { boundary, probe, start, envelope } = system(store, { recordTtlMs: 50 });
  const run = await start();
  const kept = envelope(run, "search", { query: "disk" });
  await boundary.invoke(run, kept);
  const id = kept.toolCallId;
  const other = { ...kept, input: { query: "cpu" } };
  expectError(await boundary.recall(run, other), "TOOL_CALL_CONFLICT", id);
  const otherTool = { ...kept, toolName: "waits" };
  expectError(await boundary.recall(run, otherTool), "TOOL_CALL_CONFLICT", id);
  const never = envelope(run, "search", { query: "disk" });
  expectError(await boundary.recall(run, never), "RECORD_NOT_FOUND", never.toolCallId);
  // The preflight of invoke: the ID, the run, the tool, the input.
  const badId = { ...kept, toolCallId: "no spaces" };
  expectError(await boundary.recall(run, badId), "INVALID_TOOL_CALL_ID", null);
  expectError(await boundary.recall(run, { ...kept, runId: "other" }), "RUN_MISMATCH", id);
  expectError(await boundary.recall(run, { ...kept, toolName: "nope" }), "UNKNOWN_TOOL", id);
  const invalid = await boundary.recall(run, { ...kept, input: { query: 1 } });
  assert.equal(invalid.status === "ERROR" && invalid.code, "INVALID_INPUT");
  while (await store.get(run.runId, id) !== null) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expectError(await boundary.recall(run, kept), "RECORD_EXPIRED", id);
  const gone = { ...run, runId: uniqueId("run_gone") };
  expectError(await boundary.recall(gone, { ...kept, runId: gone.runId }), "RUN_NOT_FOUND", id);
  assert.deepEqual(probe.executed, { search: 1 });
}

async function recallWhileProjecting(store: Store) {
  const { boundary, probe, start, envelope } = system(store);
  const run = await start();
  const call = envelope(run, "waits");
  const first = boundary.invoke(run, call);
  while (probe.executed.waits !== 1) await new Promise((resolve) => setTimeout(resolve, 1));
  expectError(await boundary.recall(run, call), "OUTCOME_UNKNOWN", call.toolCallId);
  probe.gate.resolve();
  const done = await first;
  assert.equal(done.status, "READY");
  assert.deepEqual(await boundary.recall(run, call), { ...done, replayed: true });
  assert.equal(probe.executed.waits, 1);
}

// ---------------------------------------------------------------------------------------------
// listCalls

async function listsBegunCalls(store: Store) {
  const { boundary, probe, start, envelope } = system(store);
  const run = await start(3);
  const ready = envelope(run, "search", { query: "disk" });
  const failed = envelope(run, "fails");
  const projecting = envelope(run, "waits");
  await boundary.invoke(run, ready);
  await boundary.invoke(run, failed);
  const pending = boundary.invoke(run, projecting);
  while (probe.executed.waits !== 1) await new Promise((resolve) => setTimeout(resolve, 1));
  // Refused calls are never begun: a duplicate, an unknown tool, one over the budget.
  await boundary.invoke(run, ready);
  await boundary.invoke(run, envelope(run, "nope"));
  const over = await boundary.invoke(run, envelope(run, "search", { query: "x" }));
  assert.equal(over.status === "ERROR" && over.code, "RUN_BUDGET_EXHAUSTED");
  const calls = await boundary.listCalls(run.runId);
  assert.deepEqual(
    calls.map(({ createdAt: _c, updatedAt: _u, ...rest }) => rest),
    [
      {
        toolCallId: ready.toolCallId,
        status: "READY",
        toolName: "search",
        evidence: "EVIDENCE_FOUND",
        errorCode: null,
      },
      {
        toolCallId: failed.toolCallId,
        status: "ERROR",
        toolName: "fails",
        evidence: "ERROR",
        errorCode: "EXECUTION_FAILED",
      },
      {
        toolCallId: projecting.toolCallId,
        status: "PROJECTING",
        toolName: "waits",
        evidence: null,
        errorCode: null,
      },
    ],
  );
  for (const call of calls) {
    const record = (await store.get(run.runId, call.toolCallId))!;
    assert.equal(call.createdAt, record.createdAt);
    assert.equal(call.updatedAt, record.updatedAt);
  }
  probe.gate.resolve();
  await pending;
  assert.equal((await boundary.listCalls(run.runId))[2]!.status, "READY");
}

async function listsExpiredCalls(store: Store) {
  const { boundary, start, envelope } = system(store, { recordTtlMs: 50 });
  const run = await start();
  const call = envelope(run, "search", { query: "disk" });
  await boundary.invoke(run, call);
  while (await store.get(run.runId, call.toolCallId) !== null) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(await boundary.listCalls(run.runId), [{
    toolCallId: call.toolCallId,
    status: "EXPIRED",
    toolName: null,
    evidence: null,
    errorCode: null,
    createdAt: null,
    updatedAt: null,
  }]);
}

async function listCallsRefusals(store: Store) {
  const { boundary } = system(store);
  await assert.rejects(
    boundary.listCalls(uniqueId("run_absent")),
    (error: Error) => (error as { code?: string }).code === "RUN_NOT_FOUND",
  );
  await assert.rejects(
    boundary.listCalls("not a run id"),
    (error: Error) => (error as { code?: string }).code === "INVALID_RUN_ID",
  );
}

// ---------------------------------------------------------------------------------------------
// checkCitations

/** The store, counting its readFacts calls. */
function countingFacts(store: Store) {
  const counts = { readFacts: 0 };
  const counted = new Proxy(store, {
    get(target, key) {
      if (key === "readFacts") counts.readFacts++;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { counted, counts };
}

async function checksCitations(store: Store) {
  const { counted, counts } = countingFacts(store);
  const { boundary, probe, start, envelope } = system(counted);
  const run = await start();
  const evidence = envelope(run, "search", { query: "disk" });
  const negative = envelope(run, "search", { query: "cpu" });
  const failed = envelope(run, "fails");
  const projecting = envelope(run, "waits");
  for (const call of [evidence, negative, failed]) await boundary.invoke(run, call);
  const pending = boundary.invoke(run, projecting);
  while (probe.executed.waits !== 1) await new Promise((resolve) => setTimeout(resolve, 1));
  const otherRun = await start();
  const elsewhere = envelope(otherRun, "search", { query: "disk" });
  assert.equal((await boundary.invoke(otherRun, elsewhere)).status, "READY");

  const before = counts.readFacts;
  const ids = [
    negative.toolCallId,
    "call_never_made",
    evidence.toolCallId,
    failed.toolCallId,
    projecting.toolCallId,
    elsewhere.toolCallId,
    "no spaces",
    evidence.toolCallId,
  ];
  assert.deepEqual(await boundary.checkCitations(run, ids), [
    { toolCallId: negative.toolCallId, verdict: "NEGATIVE_OBSERVATION", scope: 'search for "cpu"' },
    { toolCallId: "call_never_made", verdict: "NOT_EVIDENCE" },
    { toolCallId: evidence.toolCallId, verdict: "EVIDENCE" },
    { toolCallId: failed.toolCallId, verdict: "NOT_EVIDENCE" },
    { toolCallId: projecting.toolCallId, verdict: "NOT_EVIDENCE" },
    { toolCallId: elsewhere.toolCallId, verdict: "NOT_EVIDENCE" },
    { toolCallId: "no spaces", verdict: "NOT_EVIDENCE" },
    { toolCallId: evidence.toolCallId, verdict: "EVIDENCE" },
  ]);
  assert.equal(counts.readFacts - before, 1, "one store read for all of them");
  // By run ID too, and after the run ended.
  await boundary.endRun(run);
  assert.deepEqual(await boundary.checkCitations(run.runId, [evidence.toolCallId]), [
    { toolCallId: evidence.toolCallId, verdict: "EVIDENCE" },
  ]);
  probe.gate.resolve();
  await pending;
}

async function citationLimits(store: Store) {
  const { boundary, start, envelope } = system(store);
  const run = await start();
  const call = envelope(run, "search", { query: "disk" });
  await boundary.invoke(run, call);
  const many = Array.from({ length: 999 }, (_, i) => `call_${i}`);
  const verdicts = await boundary.checkCitations(run, [...many, call.toolCallId]);
  assert.equal(verdicts.length, 1_000);
  assert.deepEqual(verdicts.at(-1), { toolCallId: call.toolCallId, verdict: "EVIDENCE" });
  await assert.rejects(boundary.checkCitations(run, [...many, "a", "b"]), RangeError);
  await assert.rejects(boundary.checkCitations(run, [1 as unknown as string]), TypeError);
  assert.deepEqual(await boundary.checkCitations(run, []), []);
  await assert.rejects(
    boundary.checkCitations("not a run id", []),
    (error: Error) => (error as { code?: string }).code === "INVALID_RUN_ID",
  );
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
  [
    "recall() gives READY and ERROR results as first returned, replayed: true, after the run ended, running and writing nothing",
    recallsRecorded,
  ],
  [
    "recall() refuses another request or tool (TOOL_CALL_CONFLICT), a key never begun (RECORD_NOT_FOUND), an expired record, an absent run, and what invoke's preflight refuses",
    recallRefusals,
  ],
  [
    "recall() of a call still PROJECTING is OUTCOME_UNKNOWN, then its result once it completes",
    recallWhileProjecting,
  ],
  [
    "listCalls() lists every begun call in begin order with status, evidence and error code; refused calls are not listed",
    listsBegunCalls,
  ],
  ["listCalls() lists a call whose record expired as EXPIRED", listsExpiredCalls],
  [
    "listCalls() refuses an absent run (RUN_NOT_FOUND) and an unsafe run ID (INVALID_RUN_ID)",
    listCallsRefusals,
  ],
  [
    "checkCitations() gives EVIDENCE, NEGATIVE_OBSERVATION with its scope, or NOT_EVIDENCE per ID in the order given, with one store read",
    checksCitations,
  ],
  [
    "checkCitations() takes up to 1,000 IDs, refuses more with a RangeError and non-strings with a TypeError",
    citationLimits,
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
