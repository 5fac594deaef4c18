/**
 * `GET /v1/runs`: the recent runs, newest first, a page at a time, for the run console, on both
 * stores: the roles, paging with the cursor, the counts, and bad queries refused with 400.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { ToolBoundary } from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { RunsPageSchema } from "../../src/hono/responses.ts";
import { DEMO_TOOLS } from "../../edge/demo/tools.ts";
import { STORES } from "../support/stores.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";

function appOn(store: Store) {
  let now = Date.UTC(2025, 2, 1, 12);
  const clock = () => now;
  const boundary = new ToolBoundary({ tools: DEMO_TOOLS, store, clock });
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
  const get = async (query: string, token: string | null = HARNESS) => {
    const headers: Record<string, string> = token === null
      ? {}
      : { authorization: `Bearer ${token}` };
    const res = await app.request(`/v1/runs${query}`, { headers });
    return { status: res.status, body: await res.json() };
  };
  return { boundary, get, advance: (ms: number) => now += ms };
}

for (const { name, open } of STORES) {
  Deno.test(`${name}: GET /v1/runs pages the runs newest first with their calls and errors`, async () => {
    const { store, close } = await open();
    try {
      const { boundary, get, advance } = appOn(store);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push((await boundary.startRun({ runId: `run-${i}`, ttlMs: 600_000 })).runId);
        advance(10);
      }
      const run = (await boundary.getRun("run-0"))!;
      for (
        const [id, tool, input] of [
          ["call_ok", "search_runbook", { query: "disk full" }],
          ["call_failed", "query_metrics", { metric: "p99" }],
        ] as const
      ) {
        await boundary.invoke(run, { toolCallId: id, runId: run.runId, toolName: tool, input });
      }
      await boundary.endRun(run);

      const first = await get("?limit=2");
      assert.equal(first.status, 200);
      v.parse(RunsPageSchema, first.body);
      assert.deepEqual(first.body.runs.map((r: { runId: string }) => r.runId), ["run-2", "run-1"]);
      assert.equal(typeof first.body.next, "string");
      const second = await get(`?limit=2&cursor=${encodeURIComponent(first.body.next)}`);
      assert.equal(second.status, 200);
      assert.deepEqual(second.body, {
        runs: [{
          runId: "run-0",
          status: "ENDED",
          startedAt: Date.UTC(2025, 2, 1, 12),
          endedAt: Date.UTC(2025, 2, 1, 12, 0, 0, 30),
          calls: 2,
          errors: 1,
        }],
        next: null,
      });
      // Without a limit: the default page holds all three.
      const all = await get("");
      assert.deepEqual(all.body.runs.map((r: { runId: string }) => r.runId), [
        "run-2",
        "run-1",
        "run-0",
      ]);
      assert.equal(all.body.next, null);
    } finally {
      await close();
    }
  });
}

Deno.test("GET /v1/runs is harness-only: no token 401, the agent token 403", async () => {
  const { get } = appOn(new MemoryStore());
  assert.equal((await get("", null)).status, 401);
  const agent = await get("", AGENT);
  assert.equal(agent.status, 403);
  assert.equal(agent.body.runs, undefined);
  assert.equal((await get("", HARNESS)).status, 200);
});

Deno.test("GET /v1/runs refuses a bad limit or a cursor of no position, or either given twice, with 400 INVALID_REQUEST", async () => {
  const { get, boundary } = appOn(new MemoryStore());
  await boundary.startRun({ runId: "run-a" });
  const bad = [
    "?limit=0",
    "?limit=101",
    "?limit=-1",
    "?limit=1.5",
    "?limit=1e1",
    "?limit=01",
    "?limit=abc",
    "?limit=",
    "?limit=1&limit=2",
    "?cursor=",
    "?cursor=nope",
    "?cursor=1.bad%20id",
    "?cursor=1.a&cursor=1.b",
  ];
  for (const query of bad) {
    const res = await get(query);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.code, "INVALID_REQUEST", query);
  }
  assert.equal((await get("?limit=100")).status, 200);
  assert.equal((await get("?limit=1")).status, 200);
  // A position no page gave: the runs after it (a cursor is a position, not a token).
  const made = await get(`?cursor=${Number.MAX_SAFE_INTEGER}.z`);
  assert.equal(made.status, 200);
  assert.deepEqual(made.body.runs.map((r: { runId: string }) => r.runId), ["run-a"]);
});

Deno.test("GET /v1/runs answers 404 on a store without RunIndex", async () => {
  const store = new MemoryStore();
  Object.defineProperty(store, "listRuns", { value: undefined });
  const { get } = appOn(store);
  const res = await get("");
  assert.equal(res.status, 404);
  assert.equal(res.body.code, "NOT_FOUND");
});

Deno.test("the OpenAPI document gives GET /v1/runs its limit and cursor query parameters", async () => {
  const { boundary } = appOn(new MemoryStore());
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
  const doc = await (await app.request("/openapi.json")).json();
  const operation = doc.paths["/v1/runs"].get;
  assert.equal(operation.operationId, "listRuns");
  assert.deepEqual(
    operation.parameters.map((p: { name: string; in: string }) => [p.name, p.in]),
    [["limit", "query"], ["cursor", "query"]],
  );
  assert.equal(
    operation.responses["200"].content["application/json"].schema.$ref,
    "#/components/schemas/RunsPage",
  );
  assert.ok(doc.paths["/v1/runs"].post, "POST /v1/runs stays documented");
});
