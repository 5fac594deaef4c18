/**
 * Cost budgets over HTTP: a run started with `budget.cost`, the run and record reads that carry
 * its cost and each call's, the OpenAPI document that describes them, and the tool calls a cost
 * budget refuses (429 BUDGET_EXHAUSTED) or a tool's cost function cannot price (400 INVALID_COST),
 * each a safe error that ran nothing.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { defineTool, ERROR_MESSAGES, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { startUpstashFixture } from "../support/upstash_fixture.ts";
import { createApp } from "../../src/hono/mod.ts";
import {
  CanonicalRecordSchema,
  RunCallsSchema,
  RunsPageSchema,
  StartedRunSchema,
} from "../../src/hono/responses.ts";
import { MAX_COST } from "../../src/core/limits.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";

/**
 * An app on a MemoryStore with three costed tools: `priced` costs 4 and settles what its input's
 * `used` says; `metered` costs its input's `units` (a function); `free` has no cost. `ran` counts
 * each tool's executions.
 */
function setup(store?: Store) {
  // A store of its own keeps real time; MemoryStore follows this clock.
  let now = store === undefined ? Date.UTC(2025, 2, 1, 12) : Date.now();
  const clock = store === undefined ? () => now : () => Date.now();
  const ran: Record<string, number> = { priced: 0, metered: 0, free: 0 };
  let release: (() => void) | null = null;
  const project = () => ({ evidence: "EVIDENCE_FOUND" as const, scope: "test", content: "ok" });
  const priced = defineTool({
    name: "priced",
    readOnly: true,
    cost: 4,
    execute: async (input: Record<string, unknown>, ctx) => {
      ran.priced!++;
      if (typeof input.used === "number") ctx.settle(input.used);
      if (input.hold === true) await new Promise<void>((resolve) => release = resolve);
      return { ok: true };
    },
    project,
  });
  const metered = defineTool({
    name: "metered",
    readOnly: true,
    cost: (input: Record<string, unknown>) => input.units as number,
    execute: () => {
      ran.metered!++;
      return { ok: true };
    },
    project,
  });
  const free = defineTool({
    name: "free",
    readOnly: true,
    execute: () => {
      ran.free!++;
      return { ok: true };
    },
    project,
  });
  const boundary = new ToolBoundary({
    tools: [priced, metered, free],
    store: store ?? new MemoryStore({ clock }),
    clock,
  });
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
  const send = async (
    method: string,
    path: string,
    body?: unknown,
    { token = HARNESS, headers = {} }: { token?: string; headers?: Record<string, string> } = {},
  ) => {
    const res = await app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  const callTool = (runId: string, toolCallId: string, toolName: string, input: object) =>
    send("POST", `/v1/runs/${runId}/tool-calls`, { toolCallId, toolName, input }, {
      token: AGENT,
    });
  return {
    boundary,
    send,
    callTool,
    ran,
    release: () => release?.(),
    advance: (ms: number) => now += ms,
  };
}

Deno.test("a run started over HTTP with budget.cost keeps it, and its calls past it are 429 BUDGET_EXHAUSTED without running", async () => {
  await budgetOverHttp(setup());
});

Deno.test("the same on UpstashStore: budget.cost crosses HTTP and the store's scripts alike", async () => {
  const fixture = await startUpstashFixture();
  try {
    await budgetOverHttp(setup(new UpstashStore({ redis: fixture.createRedis() })));
  } finally {
    await fixture.stop();
  }
});

/** Starts a run with a cost budget of 10 and spends it over HTTP, refusals included. */
async function budgetOverHttp({ send, callTool, ran }: ReturnType<typeof setup>): Promise<void> {
  const started = await send("POST", "/v1/runs", {
    runId: "run-cost",
    ttlMs: 600_000,
    budget: { calls: 10, cost: 10 },
  });
  assert.equal(started.status, 201);
  v.parse(StartedRunSchema, started.body);
  assert.deepEqual(started.body.budget, { calls: 10, perTool: {}, cost: 10 });

  // 4 reserved, 3 settled; then 4 reserved and spent: 7 of 10.
  const first = await callTool("run-cost", "call_1", "priced", { used: 3 });
  assert.equal(first.status, 200);
  assert.equal(first.body.status, "READY");
  const second = await callTool("run-cost", "call_2", "priced", {});
  assert.equal(second.status, 200);
  assert.equal(second.body.status, "READY");
  assert.equal(ran.priced, 2);

  // 7 + 4 > 10: refused before the tool runs, with the code's fixed message and nothing else.
  const third = await callTool("run-cost", "call_3", "priced", { used: 0 });
  assert.equal(third.status, 429);
  assert.deepEqual(third.body, {
    status: "ERROR",
    toolCallId: "call_3",
    code: "BUDGET_EXHAUSTED",
    message: ERROR_MESSAGES.BUDGET_EXHAUSTED,
  });
  assert.equal(ran.priced, 2);
  // What fits still begins: 7 + 3 = 10; a tool without a cost is never refused by it.
  const fits = await callTool("run-cost", "call_4", "metered", { units: 3 });
  assert.equal(fits.status, 200);
  assert.equal(fits.body.status, "READY");
  const over = await callTool("run-cost", "call_5", "metered", { units: 1 });
  assert.equal(over.status, 429);
  assert.equal(over.body.code, "BUDGET_EXHAUSTED");
  const costless = await callTool("run-cost", "call_6", "free", {});
  assert.equal(costless.status, 200);
  assert.deepEqual(ran, { priced: 2, metered: 1, free: 1 });

  // The refused calls began nothing: no record, no place among the run's calls.
  const refused = await send("GET", "/v1/runs/run-cost/tool-calls/call_3");
  assert.equal(refused.status, 404);
  const read = await send("GET", "/v1/runs/run-cost");
  assert.equal(read.status, 200);
  const { run, calls } = v.parse(RunCallsSchema, read.body);
  assert.deepEqual(run.budget, { calls: 10, perTool: {}, cost: 10 });
  assert.deepEqual(run.cost, { reserved: 0, spent: 10 });
  assert.deepEqual(run.used, { calls: 4, perTool: { priced: 2, metered: 1, free: 1 } });
  assert.deepEqual(calls.map((c) => c.toolCallId), ["call_1", "call_2", "call_4", "call_6"]);
}

Deno.test("record reads carry each call's cost: reserved and spent, none for a tool without a cost", async () => {
  const { send, callTool, release } = setup();
  assert.equal(
    (await send("POST", "/v1/runs", { runId: "run-rec", budget: { calls: 5 } })).status,
    201,
  );
  await callTool("run-rec", "call_settled", "priced", { used: 1 });
  await callTool("run-rec", "call_reserved", "priced", {});
  await callTool("run-rec", "call_free", "free", {});
  const record = async (id: string) => {
    const res = await send("GET", `/v1/runs/run-rec/tool-calls/${id}`);
    assert.equal(res.status, 200, id);
    return v.parse(CanonicalRecordSchema, res.body);
  };
  assert.deepEqual((await record("call_settled")).cost, { reserved: 4, spent: 1 });
  assert.deepEqual((await record("call_reserved")).cost, { reserved: 4, spent: 4 });
  assert.equal("cost" in (await record("call_free")), false);

  // In flight: reserved, spent null, and held by the run until it completes.
  const pending = callTool("run-rec", "call_held", "priced", { hold: true, used: 2 });
  for (;;) {
    const res = await send("GET", "/v1/runs/run-rec/tool-calls/call_held");
    if (res.status === 200) {
      assert.equal(res.body.status, "PROJECTING");
      assert.deepEqual(res.body.cost, { reserved: 4, spent: null });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  // A run without a cost budget still counts what its costed calls reserve and spend.
  const during = v.parse(RunCallsSchema, (await send("GET", "/v1/runs/run-rec")).body);
  assert.equal(during.run.budget.cost, undefined);
  assert.deepEqual(during.run.cost, { reserved: 4, spent: 5 });
  release();
  assert.equal((await pending).body.status, "READY");
  assert.deepEqual((await record("call_held")).cost, { reserved: 4, spent: 2 });
  const after = v.parse(RunCallsSchema, (await send("GET", "/v1/runs/run-rec")).body);
  assert.deepEqual(after.run.cost, { reserved: 0, spent: 7 });

  // The export holds the same record costs and run cost.
  const exported = await send("GET", "/v1/runs/run-rec/export");
  assert.equal(exported.status, 200);
  assert.deepEqual(exported.body.run.cost, { reserved: 0, spent: 7 });
  assert.deepEqual(
    exported.body.records.map((r: { toolCallId: string; cost?: unknown }) => [
      r.toolCallId,
      r.cost ?? null,
    ]),
    [
      ["call_settled", { reserved: 4, spent: 1 }],
      ["call_reserved", { reserved: 4, spent: 4 }],
      ["call_free", null],
      ["call_held", { reserved: 4, spent: 2 }],
    ],
  );
});

Deno.test("GET /v1/runs lists each run's cost, absent for a run without one", async () => {
  const { send, callTool, advance } = setup();
  await send("POST", "/v1/runs", { runId: "run-plain", ttlMs: 600_000 });
  advance(10);
  await send("POST", "/v1/runs", {
    runId: "run-budgeted",
    ttlMs: 600_000,
    budget: { calls: 3, cost: 50 },
  });
  await callTool("run-budgeted", "call_1", "metered", { units: 12 });
  advance(10);
  await send("POST", "/v1/runs", { runId: "run-spending", ttlMs: 600_000 });
  await callTool("run-spending", "call_1", "priced", { used: 9 });
  const listed = await send("GET", "/v1/runs");
  assert.equal(listed.status, 200);
  const page = v.parse(RunsPageSchema, listed.body);
  assert.deepEqual(page.runs.map((r) => [r.runId, r.cost ?? null]), [
    ["run-spending", { reserved: 0, spent: 9 }],
    ["run-budgeted", { reserved: 0, spent: 12 }],
    ["run-plain", null],
  ]);
});

Deno.test("a cost function that gives no cost is 400 INVALID_COST and runs nothing", async () => {
  const { send, callTool, ran } = setup();
  await send("POST", "/v1/runs", { runId: "run-bad", budget: { calls: 5, cost: 100 } });
  for (const [id, units] of [["call_neg", -1], ["call_frac", 1.5], ["call_big", MAX_COST + 1]]) {
    const res = await callTool("run-bad", id as string, "metered", { units });
    assert.equal(res.status, 400, String(units));
    assert.deepEqual(res.body, {
      status: "ERROR",
      toolCallId: id,
      code: "INVALID_COST",
      message: ERROR_MESSAGES.INVALID_COST,
    });
  }
  assert.equal(ran.metered, 0);
  const read = v.parse(RunCallsSchema, (await send("GET", "/v1/runs/run-bad")).body);
  assert.deepEqual(read.run.cost, { reserved: 0, spent: 0 });
  assert.deepEqual(read.calls, []);
});

Deno.test("a start-run budget.cost that is not a cost is 400 INVALID_REQUEST naming budget.cost", async () => {
  const { send } = setup();
  for (const cost of [-1, 1.5, MAX_COST + 1, "10", null]) {
    const res = await send("POST", "/v1/runs", { budget: { calls: 1, cost } });
    assert.equal(res.status, 400, String(cost));
    assert.equal(res.body.code, "INVALID_REQUEST", String(cost));
    assert.equal(res.body.issues?.[0]?.path, "budget.cost", String(cost));
  }
  const most = await send("POST", "/v1/runs", { budget: { calls: 1, cost: MAX_COST } });
  assert.equal(most.status, 201);
  assert.equal(most.body.budget.cost, MAX_COST);
  const none = await send("POST", "/v1/runs", { budget: { calls: 1, cost: 0 } });
  assert.equal(none.status, 201);
  assert.equal(none.body.budget.cost, 0);
});

Deno.test("an Idempotency-Key start repeated with another budget.cost is 409, with the same one the same run", async () => {
  const { send } = setup();
  const headers = { "idempotency-key": "start-cost-1" };
  const body = { ttlMs: 600_000, budget: { calls: 2, cost: 30 } };
  const first = await send("POST", "/v1/runs", body, { headers });
  assert.equal(first.status, 201);
  const again = await send("POST", "/v1/runs", body, { headers });
  assert.equal(again.status, 201);
  assert.deepEqual(again.body, first.body);
  const other = await send("POST", "/v1/runs", { ...body, budget: { calls: 2, cost: 31 } }, {
    headers,
  });
  assert.equal(other.status, 409);
});

Deno.test("the OpenAPI document describes budget.cost, the run's and each record's cost, and the 429 of a tool call", async () => {
  const { send } = setup();
  const doc = (await send("GET", "/openapi.json")).body;
  const schemas = doc.components.schemas;
  const budget = schemas.StartRunBody.properties.budget;
  assert.equal(budget.properties.cost.type, "integer");
  assert.equal(budget.properties.cost.minimum, 0);
  assert.equal(budget.properties.cost.maximum, MAX_COST);
  assert.ok(!budget.required.includes("cost"));
  const runCost = schemas.RunCalls.properties.run.properties.cost;
  assert.deepEqual(Object.keys(runCost.properties).sort(), ["reserved", "spent"]);
  assert.ok(!schemas.RunCalls.properties.run.required.includes("cost"));
  assert.equal(schemas.RunCalls.properties.run.properties.budget.properties.cost.type, "integer");
  assert.deepEqual(
    Object.keys(schemas.RunsPage.properties.runs.items.properties.cost.properties).sort(),
    ["reserved", "spent"],
  );
  const recordCost = schemas.CanonicalRecord.properties.cost;
  assert.deepEqual(recordCost.required.sort(), ["reserved", "spent"]);
  assert.ok(!schemas.CanonicalRecord.required.includes("cost"));
  assert.equal(
    JSON.stringify(recordCost.properties.spent).includes("null"),
    true,
    "spent is nullable",
  );
  assert.ok(schemas.StartedRun.properties.budget.properties.cost);
  assert.ok(schemas.BoundaryResult.oneOf ?? schemas.BoundaryResult.anyOf);
  assert.ok(JSON.stringify(schemas.BoundaryResult).includes('"BUDGET_EXHAUSTED"'));
  assert.ok(JSON.stringify(schemas.BoundaryResult).includes('"INVALID_COST"'));
  const submit = doc.paths["/v1/runs/{runId}/tool-calls"].post;
  assert.deepEqual(submit.responses["429"].content["application/json"].schema, {
    $ref: "#/components/schemas/BoundaryResult",
  });
  assert.ok(submit.responses["400"]);
});
