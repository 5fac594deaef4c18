import assert from "node:assert/strict";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import * as v from "valibot";
import { defineTool, ToolBoundary } from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import { CANARY_SECRET, createFakeToolkit } from "@tool-boundary/core/testing";
import { otelObserver, REFUSED_EVENT } from "../mod.ts";

const T0 = Date.UTC(2026, 5, 1);
/** The time the observer reads when a call ends (a fixed epoch, so span times are exact). */
const END = T0 + 60_000;

function setup(options: { recordResult?: boolean } = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let now = T0;
  const clock = () => now;
  const kit = createFakeToolkit();
  const timed = defineTool({
    name: "timed_search",
    readOnly: true,
    input: v.object({ query: v.string() }),
    execute: ({ query }) => {
      now += 7; // the boundary's clock says the tool took 7 ms
      return { query, hits: [], credential: CANARY_SECRET };
    },
    project: (raw) => ({
      evidence: "NO_EVIDENCE",
      scope: `index, query "${raw.query}"`,
      content: raw.hits,
    }),
  });
  const boundary = new ToolBoundary({
    store: new MemoryStore({ clock }),
    tools: [...kit.tools, timed],
    clock,
    observe: otelObserver({
      tracer: provider.getTracer("tool-boundary-test", "0.1.0"),
      clock: () => END,
      ...options,
    }),
  });
  const call = (run: { runId: string }, toolCallId: string, toolName: string, input: unknown) =>
    boundary.invoke(run as never, { toolCallId, runId: run.runId, toolName, input });
  return { exporter, provider, boundary, kit, call };
}

/** Everything of a span an exporter sends, as text. */
function exported(span: ReadableSpan): string {
  return JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events,
    status: span.status,
    links: span.links,
    resource: span.resource.attributes,
  });
}

function ms(time: [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

Deno.test("otelObserver: a READY call is one INTERNAL execute_tool span with exact attributes", async () => {
  const { exporter, boundary, call } = setup();
  const run = await boundary.startRun({ runId: "run-otel-1", ttlMs: 60_000 });
  const result = await call(run, "call_ready", "timed_search", { query: "disk" });
  assert.equal(result.status, "READY");

  const spans = exporter.getFinishedSpans();
  assert.equal(spans.length, 1);
  const span = spans[0]!;
  assert.equal(span.name, "execute_tool timed_search");
  assert.equal(span.kind, SpanKind.INTERNAL);
  assert.deepEqual(span.attributes, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.name": "timed_search",
    "gen_ai.tool.call.id": "call_ready",
    "tool_boundary.run.id": "run-otel-1",
    "tool_boundary.status": "READY",
    "tool_boundary.evidence": "NO_EVIDENCE",
    "tool_boundary.replayed": false,
  });
  assert.deepEqual(span.status, { code: SpanStatusCode.UNSET });
  assert.deepEqual(span.events, []);
  // Started the call's duration (7 ms on the boundary's clock) before it ended.
  assert.equal(ms(span.endTime), END);
  assert.equal(ms(span.startTime), END - 7);
  assert.equal(span.instrumentationScope.name, "tool-boundary-test");
});

Deno.test("otelObserver: an ERROR call sets error.type and status ERROR, with no exception text", async () => {
  const { exporter, boundary, kit, call } = setup();
  const run = await boundary.startRun({ runId: "run-otel-2", ttlMs: 60_000 });
  const results = [
    await call(run, "call_throw", kit.names.throwing, { query: "q" }),
    await call(run, "call_project", kit.names.secretError, { query: "q" }),
    await call(run, "call_slow", kit.names.slow, { ms: 5_000 }),
  ];
  assert.deepEqual(results.map((r) => r.status === "ERROR" && r.code), [
    "EXECUTION_FAILED",
    "PROJECTION_FAILED",
    "TOOL_TIMEOUT",
  ]);
  const spans = exporter.getFinishedSpans();
  assert.deepEqual(spans.map((s) => [s.name, s.attributes["error.type"]]), [
    ["execute_tool fake_throwing", "EXECUTION_FAILED"],
    [`execute_tool ${kit.names.secretError}`, "PROJECTION_FAILED"],
    ["execute_tool fake_slow", "TOOL_TIMEOUT"],
  ]);
  assert.deepEqual(spans[0]!.attributes, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.name": "fake_throwing",
    "gen_ai.tool.call.id": "call_throw",
    "tool_boundary.run.id": "run-otel-2",
    "tool_boundary.status": "ERROR",
    "tool_boundary.evidence": "ERROR",
    "tool_boundary.replayed": false,
    "error.type": "EXECUTION_FAILED",
  });
  for (const span of spans) {
    // Status ERROR without a description; no exception event.
    assert.deepEqual(span.status, { code: SpanStatusCode.ERROR });
    assert.deepEqual(span.events, []);
    assert.ok(!exported(span).includes(CANARY_SECRET), exported(span));
    assert.ok(!exported(span).includes("backend refused"), exported(span));
  }
  // What the tool threw stays in the harness's record: its failure, never the span.
  assert.deepEqual((await boundary.inspect("run-otel-2", "call_throw"))?.failure, {
    name: "Error",
    message: `backend refused credential ${CANARY_SECRET}`,
  });
});

Deno.test("otelObserver: refused calls are spans too, with their code and a refusal event", async () => {
  const { exporter, boundary, kit, call } = setup();
  const run = await boundary.startRun({
    runId: "run-otel-3",
    ttlMs: 60_000,
    budget: { calls: 2 },
  });
  const codes = [
    await call(run, "call_w", kit.names.writable, {}),
    await call(run, "call_u", "no_such_tool", {}),
    await call(run, "call_i", "timed_search", { query: 1 }),
    await call(run, "call bad id", kit.names.success, {}),
    await call(run, "call_m", kit.names.success, '{"query":'),
    await call(run, "call_ok", kit.names.success, { query: "q" }),
    await call(run, "call_ok", kit.names.success, { query: "q" }),
    await call(run, "call_ok2", kit.names.success, { query: "q" }),
    await call(run, "call_ok3", kit.names.success, { query: "q" }),
  ].map((r) => r.status === "ERROR" ? r.code : r.status);
  assert.deepEqual(codes, [
    "NOT_READ_ONLY",
    "UNKNOWN_TOOL",
    "INVALID_INPUT",
    "INVALID_TOOL_CALL_ID",
    "INVALID_INPUT",
    "READY",
    "DUPLICATE_TOOL_CALL",
    "READY",
    "RUN_BUDGET_EXHAUSTED",
  ]);
  const spans = exporter.getFinishedSpans();
  assert.equal(spans.length, codes.length, "one span per invoke");
  const refused = spans.filter((s) => s.attributes["tool_boundary.status"] === "ERROR");
  assert.deepEqual(
    refused.map((
      s,
    ) => [s.name, s.attributes["gen_ai.tool.call.id"] ?? null, s.attributes["error.type"]]),
    [
      ["execute_tool fake_writable", "call_w", "NOT_READ_ONLY"],
      // Names and IDs the boundary refused are never recorded: they are the agent's text.
      ["execute_tool", "call_u", "UNKNOWN_TOOL"],
      ["execute_tool timed_search", "call_i", "INVALID_INPUT"],
      ["execute_tool", null, "INVALID_TOOL_CALL_ID"],
      ["execute_tool fake_success", "call_m", "INVALID_INPUT"],
      ["execute_tool fake_success", "call_ok", "DUPLICATE_TOOL_CALL"],
      ["execute_tool fake_success", "call_ok3", "RUN_BUDGET_EXHAUSTED"],
    ],
  );
  assert.deepEqual(refused[1]!.attributes, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.call.id": "call_u",
    "tool_boundary.run.id": "run-otel-3",
    "tool_boundary.status": "ERROR",
    "tool_boundary.evidence": "ERROR",
    "tool_boundary.replayed": false,
    "error.type": "UNKNOWN_TOOL",
  });
  for (const span of refused) {
    assert.equal(span.kind, SpanKind.INTERNAL);
    assert.deepEqual(span.status, { code: SpanStatusCode.ERROR });
    assert.deepEqual(
      span.events.map((e) => [e.name, e.attributes, ms(e.time)]),
      [[REFUSED_EVENT, { "tool_boundary.code": span.attributes["error.type"] }, END]],
    );
    assert.equal(ms(span.startTime), END);
    assert.equal(ms(span.endTime), END);
    assert.ok(!exported(span).includes("no_such_tool"), exported(span));
    assert.ok(!exported(span).includes("call bad id"), exported(span));
  }
  for (const span of spans) assert.ok(!exported(span).includes(CANARY_SECRET));
});

Deno.test("otelObserver: recordResult adds what the model got, and never the raw response", async () => {
  const { exporter, boundary, kit, call } = setup({ recordResult: true });
  const run = await boundary.startRun({ runId: "run-otel-4", ttlMs: 60_000 });
  await call(run, "call_1", kit.names.success, { query: "q" });
  await call(run, "call_2", kit.names.throwing, { query: "q" });
  await call(run, "call_3", "timed_search", {});
  const results = exporter.getFinishedSpans().map((s) =>
    JSON.parse(String(s.attributes["gen_ai.tool.call.result"]))
  );
  assert.deepEqual(results, [
    {
      evidence: "EVIDENCE_FOUND",
      scope: 'fake index, query "q"',
      content: ["line 1: match", "line 2: match"],
    },
    { code: "EXECUTION_FAILED", message: "The tool failed while running." },
    {
      code: "INVALID_INPUT",
      message: "The tool input must be a JSON object that matches the tool's input schema.",
      issues: [{ path: "query", expected: '"query"' }],
    },
  ]);
  for (const span of exporter.getFinishedSpans()) {
    assert.ok(!exported(span).includes(CANARY_SECRET), exported(span));
  }
});

Deno.test("otelObserver: run events make no spans, and the tracer's failures change no outcome", async () => {
  const { exporter, boundary, kit } = setup();
  const run = await boundary.startRun({ ttlMs: 60_000 });
  await boundary.endRun(run);
  assert.equal(exporter.getFinishedSpans().length, 0);

  const broken = new ToolBoundary({
    tools: kit.tools,
    observe: otelObserver({
      tracer: {
        startSpan: () => {
          throw new Error("exporter down");
        },
      } as never,
    }),
  });
  const other = await broken.startRun({ ttlMs: 60_000 });
  const result = await broken.invoke(other, {
    toolCallId: "call_1",
    runId: other.runId,
    toolName: kit.names.noEvidence,
    input: { query: "q" },
  });
  assert.equal(result.status, "READY");
});

Deno.test("otelObserver: cancelled calls are ERROR spans with error.type CANCELLED", async () => {
  const { exporter, boundary, kit } = setup();
  const run = await boundary.startRun({ runId: "run-otel-5", ttlMs: 60_000 });
  const envelope = (toolCallId: string) => ({
    toolCallId,
    runId: run.runId,
    toolName: kit.names.slow,
    input: { ms: 5_000 },
  });
  const before = await boundary.invoke(run, envelope("call_before"), {
    signal: AbortSignal.abort(new Error(`stopped ${CANARY_SECRET}`)),
  });
  const controller = new AbortController();
  const during = boundary.invoke(run, envelope("call_during"), { signal: controller.signal });
  // Abort once the call has begun, so it ends a record rather than being refused.
  while ((await boundary.inspect(run.runId, "call_during"))?.status !== "PROJECTING") {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  controller.abort(new Error(`stopped ${CANARY_SECRET}`));
  assert.deepEqual([before, await during].map((r) => r.status === "ERROR" && r.code), [
    "CANCELLED",
    "CANCELLED",
  ]);
  const spans = exporter.getFinishedSpans();
  assert.deepEqual(
    spans.map((
      s,
    ) => [s.attributes["gen_ai.tool.call.id"], s.attributes["error.type"], s.events.length]),
    [["call_before", "CANCELLED", 1], ["call_during", "CANCELLED", 0]],
  );
  for (const span of spans) {
    assert.deepEqual(span.status, { code: SpanStatusCode.ERROR });
    assert.ok(!exported(span).includes(CANARY_SECRET), exported(span));
  }
});

Deno.test("otelObserver: a replayed call gets its own span with tool_boundary.replayed", async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let executions = 0;
  const lookup = defineTool({
    name: "lookup",
    readOnly: true,
    execute: () => ({ n: ++executions }),
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "s", content: raw.n }),
  });
  const boundary = new ToolBoundary({
    tools: [lookup],
    onDuplicate: "replay",
    observe: otelObserver({ tracer: provider.getTracer("t"), clock: () => END }),
  });
  const run = await boundary.startRun({ runId: "run-otel-6", ttlMs: 60_000 });
  const envelope = { toolCallId: "call_1", runId: run.runId, toolName: "lookup", input: {} };
  await boundary.invoke(run, envelope);
  const again = await boundary.invoke(run, envelope);
  assert.equal(again.status === "READY" && again.replayed, true);
  assert.equal(executions, 1);
  const spans = exporter.getFinishedSpans();
  assert.deepEqual(
    spans.map((span) => [span.name, span.attributes["tool_boundary.replayed"]]),
    [["execute_tool lookup", false], ["execute_tool lookup", true]],
  );
  assert.equal(spans[1]?.attributes["tool_boundary.evidence"], "EVIDENCE_FOUND");
});

Deno.test("otelObserver: a call of a tool with a cost carries what it reserved and spent; a refusal and a replay carry no cost", async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const priced = defineTool({
    name: "priced_search",
    readOnly: true,
    cost: 5,
    input: v.object({ used: v.optional(v.number()), fail: v.optional(v.boolean()) }),
    execute: ({ used, fail }, { settle }) => {
      if (used !== undefined) settle(used);
      if (fail === true) throw new Error(`quota ${CANARY_SECRET}`);
      return { hits: 1 };
    },
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "index", content: raw.hits }),
  });
  const free = defineTool({
    name: "free_search",
    readOnly: true,
    execute: () => ({ hits: 0 }),
    project: () => ({ evidence: "NO_EVIDENCE", scope: "index", content: null }),
  });
  const boundary = new ToolBoundary({
    tools: [priced, free],
    onDuplicate: "replay",
    observe: otelObserver({ tracer: provider.getTracer("t"), clock: () => END }),
  });
  const run = await boundary.startRun({
    runId: "run-otel-cost",
    ttlMs: 60_000,
    budget: { calls: 10, cost: 11 },
  });
  const call = (toolCallId: string, toolName: string, input: Record<string, unknown>) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
  const results = [
    await call("call_settled", "priced_search", { used: 2 }),
    // 2 + 5 fits; the tool throws after settling 0.
    await call("call_failed", "priced_search", { used: 0, fail: true }),
    await call("call_reserved", "priced_search", {}),
    await call("call_free", "free_search", {}),
    // 7 spent, 5 more passes 11: refused, nothing reserved.
    await call("call_over", "priced_search", {}),
    // The first call again: its recorded result, nothing spent.
    await call("call_settled", "priced_search", { used: 2 }),
  ];
  assert.deepEqual(results.map((r) => r.status === "ERROR" ? r.code : r.status), [
    "READY",
    "EXECUTION_FAILED",
    "READY",
    "READY",
    "BUDGET_EXHAUSTED",
    "READY",
  ]);
  const spans = exporter.getFinishedSpans();
  assert.deepEqual(
    spans.map((span) => [
      span.attributes["gen_ai.tool.call.id"],
      span.attributes["tool_boundary.cost.reserved"] ?? null,
      span.attributes["tool_boundary.cost.spent"] ?? null,
    ]),
    [
      ["call_settled", 5, 2],
      ["call_failed", 5, 0],
      ["call_reserved", 5, 5],
      ["call_free", null, null],
      ["call_over", null, null],
      ["call_settled", null, null],
    ],
  );
  assert.deepEqual(spans[0]!.attributes, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.name": "priced_search",
    "gen_ai.tool.call.id": "call_settled",
    "tool_boundary.run.id": "run-otel-cost",
    "tool_boundary.status": "READY",
    "tool_boundary.evidence": "EVIDENCE_FOUND",
    "tool_boundary.replayed": false,
    "tool_boundary.cost.reserved": 5,
    "tool_boundary.cost.spent": 2,
  });
  const refused = spans[4]!;
  assert.equal(refused.attributes["error.type"], "BUDGET_EXHAUSTED");
  assert.deepEqual(refused.status, { code: SpanStatusCode.ERROR });
  assert.deepEqual(
    refused.events.map((e) => [e.name, e.attributes]),
    [[REFUSED_EVENT, { "tool_boundary.code": "BUDGET_EXHAUSTED" }]],
  );
  assert.equal(spans[5]!.attributes["tool_boundary.replayed"], true);
  // The spans' spend is the run's: what its records say, and what the store counted.
  const spent = spans.reduce(
    (sum, s) => sum + Number(s.attributes["tool_boundary.cost.spent"] ?? 0),
    0,
  );
  assert.deepEqual((await boundary.listRuns({ limit: 1 })).runs[0]?.cost, { reserved: 0, spent });
  for (const span of spans) assert.ok(!exported(span).includes(CANARY_SECRET), exported(span));
});

Deno.test("otelObserver: a costed call whose record could not be completed carries its reservation and no spend", async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const priced = defineTool({
    name: "priced_search",
    readOnly: true,
    cost: 3,
    execute: () => ({ hits: 1 }),
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "index", content: raw.hits }),
  });
  const store = new MemoryStore();
  store.complete = () => Promise.reject(new Error("connection reset"));
  const boundary = new ToolBoundary({
    tools: [priced],
    store,
    storeRetryMs: 0,
    observe: otelObserver({ tracer: provider.getTracer("t"), clock: () => END }),
  });
  const run = await boundary.startRun({ runId: "run-otel-lost", ttlMs: 60_000 });
  const result = await boundary.invoke(run, {
    toolCallId: "call_lost",
    runId: run.runId,
    toolName: "priced_search",
    input: {},
  });
  assert.equal(result.status === "ERROR" && result.code, "STORE_UNAVAILABLE");
  const [span] = exporter.getFinishedSpans();
  assert.equal(span?.attributes["error.type"], "STORE_UNAVAILABLE");
  assert.equal(span?.attributes["tool_boundary.cost.reserved"], 3);
  assert.equal("tool_boundary.cost.spent" in span!.attributes, false);
});
