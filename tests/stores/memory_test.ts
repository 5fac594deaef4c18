/**
 * MemoryStore's own options beyond the shared conformance suite: its clock, `maxRecords`, the
 * sweep of expired records, and copies in and out.
 */
import assert from "node:assert/strict";
import { PendingBeginRequest } from "../../src/core/begin_request.ts";
import { PendingDigest, requestDigest } from "../../src/core/digest.ts";
import type { BeginRequest } from "../../src/core/store.ts";
import { type BoundaryEvent, defineTool, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/stores/memory.ts";
import { memoryStateForTests } from "../../src/stores/memory_state.ts";
import { startStoreRun } from "../support/runs.ts";

function fakeClock(start = Date.UTC(2026, 0, 1)) {
  let now = start;
  return { clock: () => now, advance: (ms: number) => void (now += ms) };
}

function begin(runId: string, toolCallId: string, now: number, ttlMs = 60_000): BeginRequest {
  return {
    runId,
    toolCallId,
    toolName: "t",
    requestJson: "{}",
    requestDigest: "test-digest",
    attemptId: `attempt-${toolCallId}`,
    ttlMs,
    now,
  };
}

Deno.test("new MemoryStore() refuses a maxRecords that is not a positive integer", () => {
  for (const maxRecords of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    assert.throws(() => new MemoryStore({ maxRecords }), RangeError, String(maxRecords));
  }
  assert.equal(new MemoryStore({ maxRecords: 1 }).size, 0);
});

Deno.test("begin() on a full MemoryStore throws, writes nothing and counts nothing", async () => {
  const { clock } = fakeClock();
  const store = new MemoryStore({ clock, maxRecords: 2 });
  await startStoreRun(store, "run-1", { now: clock() });
  for (const id of ["call_1", "call_2"]) {
    assert.equal((await store.begin(begin("run-1", id, clock()))).ok, true);
  }
  await assert.rejects(store.begin(begin("run-1", "call_3", clock())), Error);
  assert.equal(await store.get("run-1", "call_3"), null);
  assert.equal((await store.getRun("run-1"))?.used.calls, 2);
  assert.equal(store.size, 2);
  // The refused key was never begun, so it may begin once there is room.
  const roomy = new MemoryStore({ clock, maxRecords: 3 });
  await startStoreRun(roomy, "run-1", { now: clock() });
  assert.equal((await roomy.begin(begin("run-1", "call_3", clock()))).ok, true);
});

Deno.test("a full MemoryStore sweeps expired records to make room before it refuses", async () => {
  const { clock, advance } = fakeClock();
  const store = new MemoryStore({ clock, maxRecords: 2 });
  await startStoreRun(store, "run-1", { now: clock() });
  assert.equal((await store.begin(begin("run-1", "call_short", clock(), 1_000))).ok, true);
  assert.equal((await store.begin(begin("run-1", "call_long", clock(), 60_000))).ok, true);
  advance(1_000);
  assert.equal((await store.begin(begin("run-1", "call_new", clock()))).ok, true);
  assert.equal(store.size, 2);
  assert.equal(await store.get("run-1", "call_short"), null);
  assert.notEqual(await store.get("run-1", "call_long"), null);
  await assert.rejects(store.begin(begin("run-1", "call_more", clock())), Error);
});

Deno.test("a full MemoryStore reaches the agent as STORE_UNAVAILABLE; the error only reaches observe", async () => {
  const events: BoundaryEvent[] = [];
  let ran = 0;
  const boundary = new ToolBoundary({
    store: new MemoryStore({ maxRecords: 1 }),
    observe: (event) => events.push(event),
    tools: [{
      name: "t",
      readOnly: true,
      execute: () => ++ran,
      project: () => ({ evidence: "NO_EVIDENCE", scope: "t", content: null }),
    }],
  });
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const call = (toolCallId: string) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName: "t", input: {} });
  assert.equal((await call("call_1")).status, "READY");
  const full = await call("call_2");
  assert.deepEqual([full.status, full.status === "ERROR" && full.code], [
    "ERROR",
    "STORE_UNAVAILABLE",
  ]);
  assert.doesNotMatch(JSON.stringify(full), /MemoryStore|maxRecords|full/);
  assert.equal(ran, 1, "the tool never runs when the store cannot begin");
  const failed = events.find((e) => "toolCallId" in e && e.toolCallId === "call_2");
  assert.ok(failed && "error" in failed && failed.error instanceof Error);
});

Deno.test("size counts live records only: expired ones are swept when it is read", async () => {
  const { clock, advance } = fakeClock();
  const store = new MemoryStore({ clock });
  await startStoreRun(store, "run-1", { now: clock() });
  await startStoreRun(store, "run-2", { now: clock() });
  await store.begin(begin("run-1", "call_a", clock(), 1_000));
  await store.begin(begin("run-2", "call_b", clock(), 2_000));
  await store.begin(begin("run-2", "call_c", clock(), 3_000));
  assert.equal(store.size, 3);
  advance(1_000);
  assert.equal(store.size, 2, "expires at exactly expiresAt");
  advance(1_500);
  assert.equal(store.size, 1);
  advance(500);
  assert.equal(store.size, 0);
});

Deno.test("expired records free their room: 3,000 short-lived begins fit in maxRecords 1,500", async () => {
  const { clock, advance } = fakeClock();
  // Room for 1,500 live records: 3,000 begins fit only if the expired ones are dropped.
  const store = new MemoryStore({ clock, maxRecords: 1_500 });
  await startStoreRun(store, "run-1", { now: clock(), calls: 10_000 });
  for (let i = 0; i < 3_000; i++) {
    const begun = await store.begin(begin("run-1", `call_${i}`, clock(), 10));
    assert.equal(begun.ok, true, `call_${i}`);
    advance(1);
  }
  assert.ok(store.size <= 10, `live records: ${store.size}`);
});

Deno.test("expiry follows the store's clock; record timestamps follow the caller's now", async () => {
  const { clock, advance } = fakeClock(50_000);
  const store = new MemoryStore({ clock });
  await startStoreRun(store, "run-1", { now: 0 });
  const begun = await store.begin(begin("run-1", "call_1", 0, 1_000));
  assert.ok(begun.ok);
  assert.deepEqual([begun.record.createdAt, begun.record.updatedAt], [0, 0]);
  assert.equal(begun.record.expiresAt, 51_000);
  advance(999);
  assert.notEqual(await store.get("run-1", "call_1"), null);
  advance(1);
  assert.equal(await store.get("run-1", "call_1"), null);
});

Deno.test("a MemoryStore run expires with its TTL: getRun is null and begin RUN_NOT_FOUND", async () => {
  const { clock, advance } = fakeClock();
  const store = new MemoryStore({ clock });
  const started = await store.startRun({
    runId: "run-short",
    deadline: clock() + 60_000,
    budget: { calls: 5, perTool: {} },
    ttlMs: 5_000,
    attemptId: "start",
    now: clock(),
  });
  assert.ok(started.ok);
  advance(5_000);
  assert.equal(await store.getRun("run-short"), null);
  assert.deepEqual(await store.begin(begin("run-short", "call_1", clock())), {
    ok: false,
    code: "RUN_NOT_FOUND",
  });
});

Deno.test("MemoryStore hands out copies: changing a returned record or run changes nothing stored", async () => {
  const { clock } = fakeClock();
  const store = new MemoryStore({ clock });
  await startStoreRun(store, "run-1", { now: clock() });
  const begun = await store.begin(begin("run-1", "call_1", clock()));
  assert.ok(begun.ok);
  begun.record.status = "READY";
  begun.record.requestJson = '{"changed":true}';
  const stored = await store.get("run-1", "call_1");
  assert.deepEqual([stored?.status, stored?.requestJson], ["PROJECTING", "{}"]);
  stored!.toolName = "other";
  assert.equal((await store.get("run-1", "call_1"))?.toolName, "t");
  const run = await store.getRun("run-1");
  run!.used.calls = 99;
  run!.budget.perTool.t = 0;
  assert.deepEqual((await store.getRun("run-1"))?.used, { calls: 1, perTool: { t: 1 } });
  assert.deepEqual((await store.getRun("run-1"))?.budget.perTool, {});
});

Deno.test("a full MemoryStore on the next day: every record of the day before expired, and the new day's begins all fit", async () => {
  const { clock, advance } = fakeClock();
  const DAY = 24 * 60 * 60 * 1000;
  const maxRecords = 2_000;
  const store = new MemoryStore({ clock, maxRecords });
  const startDay = async (day: number) => {
    const runId = `run-day-${day}`;
    const started = await store.startRun({
      runId,
      deadline: clock() + DAY,
      budget: { calls: maxRecords + 1, perTool: {} },
      ttlMs: DAY,
      attemptId: `start-${runId}`,
      now: clock(),
    });
    assert.equal(started.ok, true);
    return runId;
  };
  for (let day = 0; day < 3; day++) {
    const runId = await startDay(day);
    for (let i = 0; i < maxRecords; i++) {
      const begun = await store.begin(begin(runId, `call_${i}`, clock(), DAY));
      assert.equal(begun.ok, true, `day ${day} call_${i}`);
      assert.ok(store.size <= maxRecords);
    }
    assert.equal(store.size, maxRecords);
    // Full: one more is refused while every record is live.
    await assert.rejects(store.begin(begin(runId, "call_extra", clock(), DAY)));
    advance(DAY);
  }
  assert.equal(store.size, 0);
});

Deno.test("records of mixed TTLs expire in expiry order: size always counts exactly the live ones", async () => {
  const { clock, advance } = fakeClock();
  const store = new MemoryStore({ clock, maxRecords: 500 });
  await startStoreRun(store, "run-1", { now: clock(), calls: 100_000 });
  let seed = 7;
  const random = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
  const expiries: number[] = [];
  for (let i = 0; i < 3_000; i++) {
    const ttl = 1 + random(400);
    const begun = await store.begin(begin("run-1", `call_${i}`, clock(), ttl));
    assert.equal(begun.ok, true, `call_${i}`);
    expiries.push(clock() + ttl);
    advance(random(3));
    const live = expiries.filter((at) => at > clock()).length;
    assert.equal(store.size, live, `after call_${i}`);
  }
});

Deno.test("the boundary hands MemoryStore's own begin a digest hashed only when it is compared or handed out", async () => {
  const store = new MemoryStore();
  let executed = 0;
  const lookup = defineTool({
    name: "lookup",
    readOnly: true,
    execute: (input) => (executed++, { key: input.key }),
    project: () => ({ evidence: "NO_EVIDENCE", scope: "the table", content: null }),
  });
  const boundary = new ToolBoundary({ store, tools: [lookup] });
  const run = await boundary.startRun();
  const call = (toolCallId: string, key: string) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName: "lookup", input: { key } });
  assert.equal((await call("call_1", "a")).status, "READY");
  const entry = memoryStateForTests(store).runs.get(run.runId)!.begun.get("call_1")!;
  assert.ok(entry.digest instanceof PendingDigest, "not hashed at begin");
  // Handed out: the digest of the recorded request, as requestDigest gives it.
  const found = await store.lookupCall(run.runId, "call_1");
  assert.equal(found?.call?.requestDigest, await requestDigest("lookup", { key: "a" }));
  // Compared: the same request again is a duplicate, another one a conflict, and neither runs.
  const again = await call("call_1", "a");
  assert.equal(again.status === "ERROR" && again.code, "DUPLICATE_TOOL_CALL");
  const other = await call("call_1", "b");
  assert.equal(other.status === "ERROR" && other.code, "TOOL_CALL_CONFLICT");
  assert.equal(executed, 1);
  const recalled = await boundary.recall(run, {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: "lookup",
    input: '{"key":"a"}',
  });
  assert.equal(recalled.status, "READY");
  // A direct caller's begin is checked in full: a forged pending request carries no digest.
  const { requestDigest: _digest, ...fields } = begin(run.runId, "call_2", Date.now());
  const forged = Object.assign(Object.create(PendingBeginRequest.prototype), fields);
  await assert.rejects(store.begin(forged), TypeError);
  await assert.rejects(
    store.begin({ ...begin(run.runId, "call_3", Date.now()), requestDigest: "not a digest" }),
    RangeError,
  );
});

Deno.test("a MemoryStore whose begin is wrapped gets plain begin requests, digest computed", async () => {
  const store = new MemoryStore();
  const seen: BeginRequest[] = [];
  const wrapped = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "begin") {
        return (request: BeginRequest) => (seen.push({ ...request }), target.begin(request));
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const ping = defineTool({
    name: "ping",
    readOnly: true,
    execute: () => ({}),
    project: () => ({ evidence: "NO_EVIDENCE", scope: "ping", content: null }),
  });
  const boundary = new ToolBoundary({ store: wrapped, tools: [ping] });
  const run = await boundary.startRun();
  const result = await boundary.invoke(run, {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: "ping",
    input: {},
  });
  assert.equal(result.status, "READY");
  assert.equal(seen.length, 1);
  assert.equal(seen[0]?.requestDigest, await requestDigest("ping", {}));
  assert.equal(Object.getPrototypeOf(seen[0]), Object.prototype);
});
