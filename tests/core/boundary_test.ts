import assert from "node:assert/strict";
import * as v from "valibot";
import {
  BoundaryError,
  type BoundaryEvent,
  type BoundaryResult,
  defineTool,
  ERROR_CODES,
  ERROR_MESSAGES,
  type ErrorCode,
  type RunContext,
  ToolBoundary,
} from "../../src/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { CANARY_SECRET, createFakeToolkit } from "../../src/testing/mod.ts";

function setup(options: { authorize?: () => boolean; limits?: { requestBytes?: number } } = {}) {
  let now = Date.UTC(2026, 5, 1);
  const clock = () => now;
  const store = new MemoryStore({ clock });
  const kit = createFakeToolkit();
  const events: BoundaryEvent[] = [];
  const schemaCalls = { count: 0 };
  const typed = defineTool({
    name: "typed_search",
    readOnly: true,
    input: v.object({ query: v.pipe(v.string(), v.minLength(1)), limit: v.optional(v.number()) }),
    execute: (input) => {
      schemaCalls.count++;
      return { received: input };
    },
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "typed", content: raw.received }),
  });
  const boundary = new ToolBoundary({
    store,
    tools: [...kit.tools, typed],
    clock,
    observe: (event) => events.push(event),
    ...(options.authorize ? { authorize: options.authorize } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
  });
  return {
    boundary,
    store,
    kit,
    events,
    schemaCalls,
    clock,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

function expectError(result: BoundaryResult, code: ErrorCode): void {
  assert.equal(result.status, "ERROR", JSON.stringify(result));
  if (result.status !== "ERROR") return;
  assert.equal(result.code, code);
  assert.equal(result.message, ERROR_MESSAGES[code]);
}

function totalExecutions(kit: ReturnType<typeof createFakeToolkit>): number {
  return Object.values(kit.counts.execute).reduce((a, b) => a + b, 0);
}

Deno.test("every error code has a fixed message that names no call data", () => {
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length);
  for (const code of ERROR_CODES) {
    const message = ERROR_MESSAGES[code];
    assert.ok(message.length > 10 && message.endsWith("."), code);
  }
});

Deno.test("invoke() refuses each preflight failure before the executor runs and stores nothing", async () => {
  const { boundary, store, kit } = setup({ limits: { requestBytes: 256 } });
  const run = await boundary.startRun({ runId: "run-preflight", ttlMs: 60_000 });
  const id = (n: number) => `call_${n}`;
  const cases: [Record<string, unknown>, ErrorCode][] = [
    [{ toolCallId: undefined }, "INVALID_TOOL_CALL_ID"],
    [{ toolCallId: "" }, "INVALID_TOOL_CALL_ID"],
    [{ toolCallId: "call\t1" }, "INVALID_TOOL_CALL_ID"],
    [{ toolCallId: "call}{" }, "INVALID_TOOL_CALL_ID"],
    [{ toolCallId: id(1), runId: "run-other" }, "RUN_MISMATCH"],
    [{ toolCallId: id(2), runId: undefined }, "RUN_MISMATCH"],
    [{ toolCallId: id(3), toolName: "missing" }, "UNKNOWN_TOOL"],
    [{ toolCallId: id(4), toolName: 7 }, "UNKNOWN_TOOL"],
    [{ toolCallId: id(5), input: null }, "INVALID_INPUT"],
    [{ toolCallId: id(6), input: [] }, "INVALID_INPUT"],
    [{ toolCallId: id(7), input: "[1]" }, "INVALID_INPUT"],
    [{ toolCallId: id(8), input: "42" }, "INVALID_INPUT"],
    [{ toolCallId: id(9), input: "{" }, "INVALID_INPUT"],
    [{ toolCallId: id(10), input: 42 }, "INVALID_INPUT"],
    [{ toolCallId: id(11), input: { a: undefined } }, "INVALID_INPUT"],
    [{ toolCallId: id(12), input: { a: () => 1 } }, "INVALID_INPUT"],
    [{ toolCallId: id(13), input: { a: Symbol("s") } }, "INVALID_INPUT"],
    [{ toolCallId: id(14), input: { a: 1n } }, "INVALID_INPUT"],
    [{ toolCallId: id(15), input: { a: Number.NaN } }, "INVALID_INPUT"],
    [{ toolCallId: id(16), input: { a: Number.POSITIVE_INFINITY } }, "INVALID_INPUT"],
    [{ toolCallId: id(17), input: { at: new Date() } }, "INVALID_INPUT"],
    [{ toolCallId: id(18), input: { m: new Map() } }, "INVALID_INPUT"],
    [{ toolCallId: id(19), input: new Map() }, "INVALID_INPUT"],
    [{ toolCallId: id(20), input: { q: "x".repeat(300) } }, "REQUEST_TOO_LARGE"],
    [{ toolCallId: id(21), input: JSON.stringify({ q: "x".repeat(300) }) }, "REQUEST_TOO_LARGE"],
    [{ toolCallId: id(22), toolName: kit.names.writable }, "NOT_READ_ONLY"],
    [{ toolCallId: id(23), toolName: "typed_search", input: { query: "" } }, "INVALID_INPUT"],
  ];
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  cases.push([{ toolCallId: id(24), input: cyclic }, "INVALID_INPUT"]);
  let deep: unknown = {};
  for (let i = 0; i < 10_000; i++) deep = { d: deep };
  cases.push([{ toolCallId: id(25), input: deep }, "INVALID_INPUT"]);
  cases.push([
    { toolCallId: id(26), input: '{"a":'.repeat(100) + "1" + "}".repeat(100) },
    "INVALID_INPUT",
  ]);
  cases.push([
    { toolCallId: id(27), input: "[".repeat(5000) + "]".repeat(5000) },
    "REQUEST_TOO_LARGE",
  ]);
  for (const [overrides, code] of cases) {
    const envelope = {
      toolCallId: id(0),
      runId: run.runId,
      toolName: kit.names.success,
      input: { query: "disk" },
      ...overrides,
    };
    expectError(await boundary.invoke(run, envelope), code);
    if (typeof envelope.toolCallId === "string") {
      assert.equal(
        await store.get(run.runId, envelope.toolCallId),
        null,
        String(envelope.toolCallId),
      );
    }
  }
  assert.equal(totalExecutions(kit), 0);
  assert.equal((await store.getRun(run.runId))?.used.calls, 0, "refusals use no budget");
});

Deno.test("invoke() refuses calls after the run ends or past its deadline, with no record", async () => {
  const { boundary, store, kit, advance } = setup();
  const run = await boundary.startRun({ runId: "run-ends", ttlMs: 1_000 });
  await boundary.endRun(run);
  const call = (r: RunContext, toolCallId: string) =>
    boundary.invoke(r, { toolCallId, runId: r.runId, toolName: kit.names.success, input: {} });
  expectError(await call(run, "call_1"), "RUN_INACTIVE");
  // A fresh context object for the ended run is still refused: the store knows.
  const reloaded = await boundary.getRun("run-ends");
  assert.ok(reloaded);
  expectError(await call(reloaded, "call_2"), "RUN_INACTIVE");
  const late = await boundary.startRun({ runId: "run-late", ttlMs: 1_000 });
  advance(1_000);
  expectError(await call(late, "call_3"), "DEADLINE_EXCEEDED");
  for (const [r, c] of [["run-ends", "call_1"], ["run-ends", "call_2"], ["run-late", "call_3"]]) {
    assert.equal(await store.get(r!, c!), null);
  }
  assert.equal(totalExecutions(kit), 0);
});

Deno.test("invoke() authorizes fail-closed: false, truthy non-true and throwing all refuse", async () => {
  for (
    const authorize of [() => false, () => 1 as unknown as boolean, () => {
      throw new Error(CANARY_SECRET);
    }]
  ) {
    const { boundary, store, kit, events } = setup({ authorize });
    const run = await boundary.startRun({ ttlMs: 10_000 });
    const result = await boundary.invoke(run, {
      toolCallId: "call_auth",
      runId: run.runId,
      toolName: kit.names.success,
      input: {},
    });
    expectError(result, "UNAUTHORIZED");
    assert.ok(!JSON.stringify(result).includes(CANARY_SECRET));
    assert.equal(await store.get(run.runId, "call_auth"), null);
    assert.equal(totalExecutions(kit), 0);
    assert.equal(events.at(-1)?.type, "call.refused");
  }
});

Deno.test("invoke() accepts JSON text input and stores exactly what the tool received", async () => {
  const { boundary, store, schemaCalls } = setup();
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const result = await boundary.invoke(run, {
    toolCallId: "call_text",
    runId: run.runId,
    toolName: "typed_search",
    input: '{ "query": "naïve 日本", "limit": 2, "extra": "dropped by the schema" }',
  });
  assert.equal(result.status, "READY");
  assert.equal(schemaCalls.count, 1);
  const stored = await store.get(run.runId, "call_text");
  assert.equal(stored?.requestJson, '{"query":"naïve 日本","limit":2}');
  assert.deepEqual(result.status === "READY" && result.content, { query: "naïve 日本", limit: 2 });
});

Deno.test("invoke() keeps __proto__ and constructor keys as data and pollutes nothing", async () => {
  const { boundary, store } = setup();
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const input = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}';
  const result = await boundary.invoke(run, {
    toolCallId: "call_proto",
    runId: run.runId,
    toolName: "fake_success",
    input,
  });
  assert.equal(result.status, "READY");
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal((await store.get(run.runId, "call_proto"))?.requestJson, input);
});

Deno.test("schema failures list field paths and expected types, never the values", async () => {
  const { boundary } = setup();
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const result = await boundary.invoke(run, {
    toolCallId: "call_schema",
    runId: run.runId,
    toolName: "typed_search",
    input: { query: 12345, limit: CANARY_SECRET },
  });
  expectError(result, "INVALID_INPUT");
  assert.ok(result.status === "ERROR");
  assert.deepEqual(result.issues, [
    { path: "query", expected: "string" },
    { path: "limit", expected: "number" },
  ]);
  assert.ok(!JSON.stringify(result).includes(CANARY_SECRET));
  assert.ok(!JSON.stringify(result).includes("12345"));
});

Deno.test("a canary in exceptions, raw data and store errors reaches the observer only", async () => {
  const { boundary, kit, events, clock } = setup();
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const results: BoundaryResult[] = [];
  for (const [i, tool] of Object.values(kit.names).entries()) {
    results.push(
      await boundary.invoke(run, {
        toolCallId: `call_${i}`,
        runId: run.runId,
        toolName: tool,
        input: { query: "disk", bytes: 3 * 1024 * 1024 },
      }),
    );
  }
  const store = boundary.store;
  const broken = new ToolBoundary({
    store: new Proxy(store, {
      get: (target, prop) =>
        prop === "begin"
          ? () => Promise.reject(new Error(`redis://default:${CANARY_SECRET}@host`))
          : Reflect.get(target, prop).bind(target),
    }),
    tools: kit.tools,
    clock,
  });
  results.push(
    await broken.invoke(run, {
      toolCallId: "call_store",
      runId: run.runId,
      toolName: kit.names.success,
      input: {},
    }),
  );
  const agentFacing = JSON.stringify([results, await boundary.endRunReport(run)]);
  assert.ok(!agentFacing.includes(CANARY_SECRET), "the canary must not reach the agent");
  assert.ok(!agentFacing.includes("credential"));
  assert.deepEqual(
    results.map((r) => r.status === "ERROR" ? r.code : r.status),
    [
      "READY",
      "READY",
      "EXECUTION_FAILED",
      "TOOL_TIMEOUT",
      "RESULT_TOO_LARGE",
      "INVALID_PROJECTION",
      "PROJECTION_FAILED",
      "RESULT_TOO_LARGE",
      "SERIALIZATION_FAILED",
      "NOT_READ_ONLY",
      "STORE_UNAVAILABLE",
    ],
  );
  // The observer is where the detail goes, for harness logs.
  const withDetail = events.filter((e) => "error" in e && String(e.error).includes(CANARY_SECRET));
  assert.ok(withDetail.length >= 2, "the observer receives internal detail");
});

Deno.test("a slow tool is aborted at its timeout and its late result is discarded", async () => {
  let aborted = false;
  let finishLate: (v: unknown) => void = () => {};
  const boundary = new ToolBoundary({
    tools: [defineTool({
      name: "stubborn",
      readOnly: true,
      timeoutMs: 30,
      execute: (_input, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            aborted = true;
          });
          finishLate = resolve;
        }),
      project: () => ({ evidence: "EVIDENCE_FOUND", scope: "x", content: "late" }),
    })],
  });
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const started = performance.now();
  const result = await boundary.invoke(run, {
    toolCallId: "call_slow",
    runId: run.runId,
    toolName: "stubborn",
    input: {},
  });
  expectError(result, "TOOL_TIMEOUT");
  assert.ok(aborted, "the executor's signal fired");
  assert.ok(performance.now() - started < 1_000);
  finishLate({ too: "late" });
  await new Promise((r) => setTimeout(r, 10));
  const record = await boundary.inspect(run.runId, "call_slow");
  assert.equal(record?.status, "ERROR");
  assert.equal(record?.errorCode, "TOOL_TIMEOUT");
  assert.equal(record?.raw, undefined);
});

Deno.test("the execute signal fires at the run deadline when it comes before the tool timeout", async () => {
  let reason: unknown;
  const boundary = new ToolBoundary({
    tools: [defineTool({
      name: "waits",
      readOnly: true,
      timeoutMs: 60_000,
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener("abort", () => {
            reason = ctx.signal.reason;
            reject(ctx.signal.reason);
          });
        }),
      project: () => ({ evidence: "EVIDENCE_FOUND", scope: "x", content: null }),
    })],
  });
  const run = await boundary.startRun({ ttlMs: 60 });
  const result = await boundary.invoke(run, {
    toolCallId: "call_deadline",
    runId: run.runId,
    toolName: "waits",
    input: {},
  });
  expectError(result, "TOOL_TIMEOUT");
  assert.equal((reason as DOMException).name, "TimeoutError");
});

Deno.test("a synchronous executor then a slow projector: the timer still bounds the projector", async () => {
  let aborted = false;
  const boundary = new ToolBoundary({
    tools: [defineTool({
      name: "sync_then_slow",
      readOnly: true,
      timeoutMs: 30,
      execute: (_input, ctx) => {
        ctx.signal.addEventListener("abort", () => {
          aborted = true;
        });
        return { rows: [1, 2] };
      },
      project: () => new Promise<never>(() => {}),
    })],
  });
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const started = performance.now();
  const result = await boundary.invoke(run, {
    toolCallId: "call_sync_slow",
    runId: run.runId,
    toolName: "sync_then_slow",
    input: {},
  });
  expectError(result, "TOOL_TIMEOUT");
  assert.ok(aborted, "the signal fired");
  assert.ok(performance.now() - started < 1_000);
  const record = await boundary.inspect(run.runId, "call_sync_slow");
  assert.equal(record?.errorCode, "TOOL_TIMEOUT");
  assert.deepEqual(record?.raw, { rows: [1, 2] });
});

Deno.test("the agent gets the recorded projection, not an object the projector changes later", async () => {
  const shared = { items: ["a"] };
  const boundary = new ToolBoundary({
    tools: [defineTool({
      name: "leaky",
      readOnly: true,
      execute: () => ({ ok: true }),
      project: () => {
        setTimeout(() => shared.items.push("changed"), 0);
        return { evidence: "EVIDENCE_FOUND", scope: "x", content: shared };
      },
    })],
  });
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const result = await boundary.invoke(run, {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: "leaky",
    input: {},
  });
  await new Promise((r) => setTimeout(r, 5));
  assert.ok(result.status === "READY");
  assert.deepEqual(result.content, { items: ["a"] });
});

Deno.test("an observer that throws changes no outcome", async () => {
  const kit = createFakeToolkit();
  const boundary = new ToolBoundary({
    tools: kit.tools,
    observe: () => {
      throw new Error("observer broke");
    },
  });
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const result = await boundary.invoke(run, {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: kit.names.success,
    input: {},
  });
  assert.equal(result.status, "READY");
});

Deno.test("observe gets a copy of each result: changing it changes nothing the agent got", async () => {
  const { boundary, kit, events } = setup();
  const run = await boundary.startRun({ ttlMs: 10_000 });
  const call = (toolCallId: string, toolName: string, input: unknown) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
  const ready = await call("call_1", kit.names.success, { query: "q" });
  const refused = await call("call_2", kit.names.writable, {});
  const invalid = await call("call_3", "typed_search", { query: "" });
  const results = events.flatMap((event) =>
    event.type === "call.finished" || event.type === "call.refused" ? [event.result] : []
  );
  assert.deepEqual(results, [ready, refused, invalid]);
  assert.deepEqual(invalid.status === "ERROR" ? invalid.issues : null, [
    { path: "query", expected: ">=1" },
  ]);
  for (const result of results) {
    (result as { status: string }).status = "CHANGED";
    if (result.status === "READY") (result.content as string[]).push("changed");
    if (result.status === "ERROR") result.issues?.pop();
  }
  assert.equal(ready.status, "READY");
  assert.deepEqual(ready.status === "READY" ? ready.content : null, [
    "line 1: match",
    "line 2: match",
  ]);
  assert.equal(refused.status, "ERROR");
  assert.equal(invalid.status === "ERROR" ? invalid.issues?.length : 0, 1);
  assert.deepEqual(
    (await boundary.inspect(run.runId, "call_1"))?.agentResult?.content,
    ["line 1: match", "line 2: match"],
  );
});

Deno.test("startRun() validates run IDs, deadlines and budgets", async () => {
  const { boundary } = setup();
  for (const runId of ["", "run 1", "run:1", "run{1}", "r/1", "x".repeat(129)]) {
    await assert.rejects(
      boundary.startRun({ runId }),
      (e: unknown) => e instanceof BoundaryError && e.code === "INVALID_RUN_ID",
    );
  }
  await assert.rejects(
    boundary.startRun({ deadline: 0 }),
    (e: unknown) => e instanceof BoundaryError && e.code === "DEADLINE_EXCEEDED",
  );
  await assert.rejects(boundary.startRun({ budget: { calls: 0 } }), RangeError);
  await assert.rejects(boundary.startRun({ budget: { calls: 1.5 } }), RangeError);
  const run = await boundary.startRun({ runId: "run-ok", budget: { calls: 2, perTool: { a: 1 } } });
  assert.deepEqual(run.budget, { calls: 2, perTool: { a: 1 } });
  assert.ok(Object.isFrozen(run));
  await assert.rejects(
    boundary.startRun({ runId: "run-ok" }),
    (e: unknown) => e instanceof BoundaryError && e.code === "RUN_ALREADY_EXISTS",
  );
  await assert.rejects(
    boundary.endRun("run-missing"),
    (e: unknown) => e instanceof BoundaryError && e.code === "RUN_NOT_FOUND",
  );
});

Deno.test("a tool's own budget applies per run unless the run's budget names the tool", async () => {
  const limited = defineTool({
    name: "limited",
    readOnly: true,
    budget: 1,
    execute: () => 1,
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: "x", content: 1 }),
  });
  const boundary = new ToolBoundary({ tools: [limited] });
  const run = await boundary.startRun({ ttlMs: 10_000 });
  assert.deepEqual(run.budget.perTool, { limited: 1 });
  const call = (r: RunContext, id: string) =>
    boundary.invoke(r, { toolCallId: id, runId: r.runId, toolName: "limited", input: {} });
  assert.equal((await call(run, "c1")).status, "READY");
  expectError(await call(run, "c2"), "TOOL_BUDGET_EXHAUSTED");
  const roomy = await boundary.startRun({
    ttlMs: 10_000,
    budget: { calls: 5, perTool: { limited: 3 } },
  });
  assert.equal((await call(roomy, "c1")).status, "READY");
  assert.equal((await call(roomy, "c2")).status, "READY");
});

Deno.test("ToolBoundary and defineTool refuse misuse with TypeError and RangeError", () => {
  assert.throws(() => new ToolBoundary({} as never), TypeError);
  const tool = defineTool({
    name: "t",
    readOnly: true,
    execute: () => 1,
    project: () => ({ evidence: "NO_EVIDENCE", scope: "s", content: 1 }),
  });
  assert.throws(() => new ToolBoundary({ tools: [tool, tool] }), TypeError);
  assert.throws(() => new ToolBoundary({ tools: [], limits: { rawBytes: 0 } }), RangeError);
  assert.throws(() => new ToolBoundary({ tools: [], store: {} as never }), TypeError);
  assert.throws(() => defineTool({ ...tool, name: "" }), TypeError);
  assert.throws(() => defineTool({ ...tool, timeoutMs: -1 }), RangeError);
  assert.throws(() => defineTool({ ...tool, execute: 1 as never }), TypeError);
});

Deno.test("invoke() throws TypeError only for a missing run context", async () => {
  const { boundary } = setup();
  await assert.rejects(boundary.invoke(null as never, {} as never), TypeError);
  const run = await boundary.startRun({ ttlMs: 1_000 });
  expectError(await boundary.invoke(run, null as never), "INVALID_TOOL_CALL_ID");
});

Deno.test("inspect() returns null for unsafe IDs without reaching the store", async () => {
  let reads = 0;
  const store = new MemoryStore();
  const counting = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (prop === "get") reads++;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const boundary = new ToolBoundary({ store: counting, tools: [] });
  reads = 0;
  assert.equal(await boundary.inspect("run{1}", "call_1"), null);
  assert.equal(await boundary.inspect("run-1", "call/1"), null);
  assert.equal(reads, 0);
});
