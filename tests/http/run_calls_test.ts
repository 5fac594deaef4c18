/**
 * `boundary.listCalls` and `GET /v1/runs/{runId}`, as the run inspector reads them:
 * every begun call in begin order with its record's status, refused calls absent, EXPIRED once a
 * record is gone, and the run's state with what was used of its budgets.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { BoundaryError, defineTool, ToolBoundary } from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { RunCallsSchema } from "../../src/hono/responses.ts";
import { DEMO_TOOLS } from "../../edge/demo/tools.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const harness = { authorization: `Bearer ${HARNESS}` };

/** A boundary and app on one MemoryStore and one clock the test moves. */
function setup(store?: Store) {
  let now = Date.UTC(2025, 2, 1, 12);
  const clock = () => now;
  const boundary = new ToolBoundary({
    tools: DEMO_TOOLS,
    store: store ?? new MemoryStore({ clock }),
    clock,
    recordTtlMs: 60_000,
  });
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
  return { boundary, app, advance: (ms: number) => now += ms };
}

const call = (toolCallId: string, toolName: string, input: Record<string, unknown>) => ({
  toolCallId,
  toolName,
  input,
});

Deno.test("listCalls lists every begun call in begin order with its record's status; refused calls are absent", async () => {
  const { boundary, advance } = setup();
  const run = await boundary.startRun({ runId: "run-list", ttlMs: 600_000, budget: { calls: 9 } });
  const calls = [
    call("call_found", "search_runbook", { query: "disk full" }),
    call("call_write", "restart_service", { service: "api" }),
    call("call_none", "search_logs", { service: "worker", query: "timeout" }),
    call("call_failed", "query_metrics", { metric: "p99" }),
    call("call_found", "search_runbook", { query: "disk full" }),
    call("call_bad", "search_runbook", {}),
  ];
  const codes = [];
  for (const envelope of calls) {
    const result = await boundary.invoke(run, { ...envelope, runId: run.runId });
    codes.push(result.status === "ERROR" ? result.code : result.evidence);
    advance(5);
  }
  assert.deepEqual(codes, [
    "EVIDENCE_FOUND",
    "NOT_READ_ONLY",
    "NO_EVIDENCE",
    "EXECUTION_FAILED",
    "DUPLICATE_TOOL_CALL",
    "INVALID_INPUT",
  ]);
  const listed = await boundary.listCalls(run.runId);
  assert.deepEqual(
    listed.map((c) => [c.toolCallId, c.status, c.toolName, c.evidence, c.errorCode]),
    [
      ["call_found", "READY", "search_runbook", "EVIDENCE_FOUND", null],
      ["call_none", "READY", "search_logs", "NO_EVIDENCE", null],
      ["call_failed", "ERROR", "query_metrics", "ERROR", "EXECUTION_FAILED"],
    ],
  );
  for (const summary of listed) {
    const record = await boundary.inspect(run.runId, summary.toolCallId);
    assert.equal(summary.createdAt, record!.createdAt);
    assert.equal(summary.updatedAt, record!.updatedAt);
  }
});

Deno.test("listCalls shows a call still running as PROJECTING and a call whose record expired as EXPIRED", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const held = defineTool({
    name: "held",
    readOnly: true,
    execute: async () => {
      await released;
      return { ok: true };
    },
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: "held", content: null }),
  });
  let now = Date.UTC(2025, 2, 1, 12);
  const clock = () => now;
  const boundary = new ToolBoundary({
    tools: [...DEMO_TOOLS, held],
    store: new MemoryStore({ clock }),
    clock,
    recordTtlMs: 1_000,
  });
  const run = await boundary.startRun({ runId: "run-ttl", ttlMs: 600_000 });
  await boundary.invoke(run, {
    ...call("call_old", "search_runbook", { query: "tls" }),
    runId: "run-ttl",
  });
  now += 2_000;
  const pending = boundary.invoke(run, { ...call("call_held", "held", {}), runId: "run-ttl" });
  for (;;) {
    const calls = await boundary.listCalls("run-ttl");
    if (calls.length === 2) {
      assert.deepEqual(calls, [
        {
          toolCallId: "call_old",
          status: "EXPIRED",
          toolName: null,
          evidence: null,
          errorCode: null,
          createdAt: null,
          updatedAt: null,
        },
        {
          toolCallId: "call_held",
          status: "PROJECTING",
          toolName: "held",
          evidence: null,
          errorCode: null,
          createdAt: now,
          updatedAt: now,
        },
      ]);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  release();
  assert.equal((await pending).status, "READY");
  assert.equal((await boundary.listCalls("run-ttl"))[1]!.status, "READY");
});

Deno.test("listCalls refuses an unsafe run ID, an unknown run and a failing store with their codes", async () => {
  const { boundary } = setup();
  for (
    const [runId, code] of [["..", "INVALID_RUN_ID"], ["run{x}", "INVALID_RUN_ID"], [
      "run-nobody",
      "RUN_NOT_FOUND",
    ]] as const
  ) {
    await assert.rejects(boundary.listCalls(runId), (error) => {
      assert.ok(error instanceof BoundaryError);
      assert.equal(error.code, code, runId);
      return true;
    });
  }
  const failing = new MemoryStore();
  failing.listCalls = () => Promise.reject(new Error("connection reset"));
  const broken = new ToolBoundary({ tools: [], store: failing });
  await assert.rejects(broken.listCalls("run-1"), (error) => {
    assert.ok(error instanceof BoundaryError);
    assert.equal(error.code, "STORE_UNAVAILABLE");
    return true;
  });
});

Deno.test("GET /v1/runs/{runId} answers the harness with { run, calls } in the documented schema, before and after the end", async () => {
  const { app } = setup();
  const started = await app.request("/v1/runs", {
    method: "POST",
    headers: { ...harness, "content-type": "application/json" },
    body: JSON.stringify({ runId: "run-http", ttlMs: 600_000, budget: { calls: 5 } }),
  });
  assert.equal(started.status, 201);
  for (
    const body of [
      call("call_1", "search_runbook", { query: "disk full" }),
      call("call_2", "restart_service", { service: "api" }),
      call("call_3", "trace_lookup", { traceId: "t-1" }),
    ]
  ) {
    const res = await app.request("/v1/runs/run-http/tool-calls", {
      method: "POST",
      headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await res.body?.cancel();
  }
  const read = async () => {
    const res = await app.request("/v1/runs/run-http", { headers: harness });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    return v.parse(RunCallsSchema, await res.json());
  };
  const active = await read();
  assert.equal(active.run.status, "ACTIVE");
  assert.equal(active.run.endedAt, null);
  assert.deepEqual(active.run.used, { calls: 2, perTool: { search_runbook: 1, trace_lookup: 1 } });
  assert.deepEqual(active.calls.map((c) => [c.toolCallId, c.status, c.errorCode]), [
    ["call_1", "READY", null],
    ["call_3", "ERROR", "TOOL_TIMEOUT"],
  ]);
  const ended = await app.request("/v1/runs/run-http/end", { method: "POST", headers: harness });
  assert.equal(ended.status, 200);
  await ended.body?.cancel();
  const after = await read();
  assert.equal(after.run.status, "ENDED");
  assert.equal(typeof after.run.endedAt, "number");
  assert.deepEqual(after.calls, active.calls);
});

Deno.test("GET /v1/runs/{runId} is harness-only and refuses unsafe and unknown runs", async () => {
  const { app } = setup();
  const cases: [string, Record<string, string>, number, string][] = [
    ["/v1/runs/run-1", {}, 401, "UNAUTHENTICATED"],
    ["/v1/runs/run-1", { authorization: `Bearer ${AGENT}` }, 403, "FORBIDDEN"],
    ["/v1/runs/run-nobody", harness, 404, "RUN_NOT_FOUND"],
    ["/v1/runs/run%7Bx%7D", harness, 400, "INVALID_RUN_ID"],
    ["/v1/runs/%2E%2E%2E", harness, 400, "INVALID_RUN_ID"],
  ];
  for (const [path, headers, status, code] of cases) {
    const res = await app.request(path, { headers });
    assert.equal(res.status, status, path);
    assert.equal((await res.json()).code, code, path);
  }
  const post = await app.request("/v1/runs/run-1", { method: "POST", headers: harness });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD");
  await post.body?.cancel();
});

Deno.test("the OpenAPI document describes GET /v1/runs/{runId} with the RunCalls schema", async () => {
  const { app } = setup();
  const doc = await (await app.request("/openapi.json")).json();
  const operation = doc.paths["/v1/runs/{runId}"].get;
  assert.equal(operation.operationId, "getRun");
  assert.equal(operation["x-access"], "harness");
  assert.deepEqual(
    Object.keys(operation.responses).sort(),
    ["200", "400", "401", "403", "404", "503"],
  );
  assert.deepEqual(operation.responses["200"].content["application/json"].schema, {
    $ref: "#/components/schemas/RunCalls",
  });
  const schema = doc.components.schemas.RunCalls;
  assert.deepEqual(schema.required, ["run", "calls"]);
  assert.deepEqual(
    schema.properties.calls.items.properties.status.enum,
    ["PROJECTING", "READY", "ERROR", "EXPIRED"],
  );
});
