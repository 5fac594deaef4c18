/**
 * The harness routes for resume and audit: `GET /v1/runs/:runId`, `POST .../recall` and
 * `POST .../citations`, and what a client that disconnects does to its tool call.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  defineTool,
  ERROR_MESSAGES,
  ToolBoundary,
  type ToolBoundaryOptions,
  toolError,
} from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { CITATIONS_BODY_BYTES } from "../../src/hono/body.ts";
import { BoundaryResultSchema, CitationsSchema, RunCallsSchema } from "../../src/hono/responses.ts";
import { startHttpRun } from "../support/runs.ts";
import { STORES } from "../support/stores.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";

function setup(store: Store = new MemoryStore(), options: Partial<ToolBoundaryOptions> = {}) {
  const executed: Record<string, number> = {};
  const ran = (name: string) => executed[name] = (executed[name] ?? 0) + 1;
  let gate = Promise.withResolvers<void>();
  const boundary = new ToolBoundary({
    ...options,
    store,
    tools: [
      defineTool({
        name: "search",
        readOnly: true,
        input: v.object({ query: v.string() }),
        execute: ({ query }) => (ran("search"), { query, hits: query === "disk" ? ["a"] : [] }),
        project: (raw) => ({
          evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
          scope: `search for "${raw.query}"`,
          content: raw.hits,
        }),
      }),
      defineTool({
        name: "grep",
        readOnly: true,
        input: v.object({ query: v.string() }),
        execute: ({ query }) => (ran("grep"), { query }),
        project: (raw) => ({ evidence: "NO_EVIDENCE", scope: `grep ${raw.query}`, content: null }),
      }),
      defineTool({
        name: "fails",
        readOnly: true,
        execute: () => (ran("fails"), toolError({ status: 503, body: "upstream raw body" })),
        project: () => ({ evidence: "NO_EVIDENCE", scope: "never", content: null }),
      }),
      defineTool({
        name: "waits",
        readOnly: true,
        execute: async () => {
          ran("waits");
          await gate.promise;
          return {};
        },
        project: () => ({ evidence: "EVIDENCE_FOUND", scope: "the wait", content: "done" }),
      }),
    ],
  });
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
  const call = (
    method: string,
    path: string,
    body?: unknown,
    options: { token?: string; signal?: AbortSignal; raw?: string } = {},
  ) =>
    app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${options.token ?? HARNESS}`,
        ...(body === undefined && options.raw === undefined
          ? {}
          : { "content-type": "application/json" }),
      },
      ...(options.raw !== undefined
        ? { body: options.raw }
        : body === undefined
        ? {}
        : { body: JSON.stringify(body) }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  const startRun = async () =>
    (await startHttpRun(app.request, "", HARNESS, { ttlMs: 60_000, budget: { calls: 20 } }))
      .runId as string;
  const submit = (runId: string, body: unknown, signal?: AbortSignal) =>
    call("POST", `/v1/runs/${runId}/tool-calls`, body, {
      token: AGENT,
      ...(signal === undefined ? {} : { signal }),
    });
  const open = () => {
    gate.resolve();
    gate = Promise.withResolvers<void>();
  };
  return { app, store, boundary, executed, call, startRun, submit, open };
}

Deno.test("GET /v1/runs/:runId gives the run's state and every begun call without payloads, 404 for an absent run", async () => {
  const { call, startRun, submit } = setup();
  const runId = await startRun();
  await submit(runId, { toolCallId: "call_1", toolName: "search", input: { query: "disk" } });
  await submit(runId, { toolCallId: "call_2", toolName: "fails", input: {} });
  await submit(runId, { toolCallId: "call_3", toolName: "nope", input: {} }); // never begun
  const res = await call("GET", `/v1/runs/${runId}`);
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(v.safeParse(RunCallsSchema, body).success, true);
  assert.deepEqual(Object.keys(body.run), [
    "runId",
    "status",
    "deadline",
    "startedAt",
    "endedAt",
    "budget",
    "used",
  ]);
  assert.equal(body.run.status, "ACTIVE");
  assert.equal(body.run.endedAt, null);
  assert.deepEqual(body.run.used, { calls: 2, perTool: { search: 1, fails: 1 } });
  assert.deepEqual(
    body.calls.map((c: Record<string, unknown>) => [c.toolCallId, c.status, c.errorCode]),
    [["call_1", "READY", null], ["call_2", "ERROR", "EXECUTION_FAILED"]],
  );
  // Not "503" alone: a deadline or a run ID may hold those digits.
  assert.equal(JSON.stringify(body).includes("upstream raw body"), false, "no raw response");

  await call("POST", `/v1/runs/${runId}/end`);
  const ended = await (await call("GET", `/v1/runs/${runId}`)).json();
  assert.equal(ended.run.status, "ENDED");
  assert.equal(typeof ended.run.endedAt, "number");

  const absent = await call("GET", "/v1/runs/no-such-run");
  assert.equal(absent.status, 404);
  assert.equal((await absent.json()).code, "RUN_NOT_FOUND");
  assert.equal((await call("GET", `/v1/runs/${runId}`, undefined, { token: AGENT })).status, 403);
});

Deno.test("POST /v1/runs/:runId/recall gives the recorded result with replayed: true, statuses by code, and never runs the tool", async () => {
  const { call, startRun, submit, executed } = setup();
  const runId = await startRun();
  const ready = { toolCallId: "call_1", toolName: "search", input: '{"query":"disk"}' };
  const first = await (await submit(runId, ready)).json();
  const failed = { toolCallId: "call_2", toolName: "fails", input: {} };
  await submit(runId, failed);
  const recall = (body: unknown) => call("POST", `/v1/runs/${runId}/recall`, body);

  const again = await recall({ ...ready, input: { query: "disk" } });
  assert.equal(again.status, 200);
  const body = await again.json();
  assert.deepEqual(body, { ...first, replayed: true });
  assert.equal(v.safeParse(BoundaryResultSchema, body).success, true);

  const error = await recall(failed);
  assert.equal(error.status, 200, "a recorded tool-side failure is 200 as when first returned");
  assert.deepEqual(await error.json(), {
    status: "ERROR",
    toolCallId: "call_2",
    code: "EXECUTION_FAILED",
    message: ERROR_MESSAGES.EXECUTION_FAILED,
    replayed: true,
  });

  const answers: [unknown, number, string][] = [
    [{ ...ready, input: { query: "cpu" } }, 409, "TOOL_CALL_CONFLICT"],
    [{ ...ready, toolCallId: "call_9" }, 404, "RECORD_NOT_FOUND"],
    [{ ...ready, toolName: "nope" }, 404, "UNKNOWN_TOOL"],
    [{ ...ready, input: 7 }, 400, "INVALID_INPUT"],
  ];
  for (const [sent, status, code] of answers) {
    const res = await recall(sent);
    assert.equal(res.status, status, code);
    assert.equal((await res.json()).code, code);
  }
  const absent = await call("POST", "/v1/runs/no-such-run/recall", ready);
  assert.equal(absent.status, 404);
  assert.equal((await absent.json()).code, "RUN_NOT_FOUND");
  assert.deepEqual(executed, { search: 1, fails: 1 });
});

Deno.test("POST /v1/runs/:runId/recall of a call still running is 409 OUTCOME_UNKNOWN", async () => {
  const { call, startRun, submit, open, executed } = setup();
  const runId = await startRun();
  const waits = { toolCallId: "call_w", toolName: "waits", input: {} };
  const pending = submit(runId, waits);
  while (executed.waits !== 1) await new Promise((resolve) => setTimeout(resolve, 1));
  const res = await call("POST", `/v1/runs/${runId}/recall`, waits);
  assert.equal(res.status, 409);
  assert.equal((await res.json()).code, "OUTCOME_UNKNOWN");
  open();
  assert.equal((await pending).status, 200);
});

Deno.test("POST /v1/runs/:runId/citations gives a verdict per ID in order; a bad body is 400, a huge one 413", async () => {
  const { call, startRun, submit } = setup();
  const runId = await startRun();
  await submit(runId, { toolCallId: "call_e", toolName: "search", input: { query: "disk" } });
  await submit(runId, { toolCallId: "call_n", toolName: "search", input: { query: "cpu" } });
  await submit(runId, { toolCallId: "call_x", toolName: "fails", input: {} });
  const cite = (body: unknown, raw?: string) =>
    call("POST", `/v1/runs/${runId}/citations`, body, raw === undefined ? {} : { raw });
  const res = await cite({ toolCallIds: ["call_n", "call_x", "call_e", "nope", "a b"] });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(v.safeParse(CitationsSchema, body).success, true);
  assert.deepEqual(body, {
    citations: [
      { toolCallId: "call_n", verdict: "NEGATIVE_OBSERVATION", scope: 'search for "cpu"' },
      { toolCallId: "call_x", verdict: "NOT_EVIDENCE" },
      { toolCallId: "call_e", verdict: "EVIDENCE" },
      { toolCallId: "nope", verdict: "NOT_EVIDENCE" },
      { toolCallId: "a b", verdict: "NOT_EVIDENCE" },
    ],
  });
  // 1,000 IDs of the longest allowed length fit the body limit.
  const longest = Array.from({ length: 1_000 }, (_, i) => `${i}`.padStart(256, "c"));
  const full = await cite({ toolCallIds: longest });
  assert.equal(full.status, 200);
  assert.equal((await full.json()).citations.length, 1_000);

  for (const bad of [{ toolCallIds: [...longest, "call_e"] }, { toolCallIds: [1] }, {}]) {
    const refused = await cite(bad);
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).code, "INVALID_REQUEST");
  }
  const huge = await cite(
    undefined,
    JSON.stringify({ toolCallIds: ["x".repeat(CITATIONS_BODY_BYTES)] }),
  );
  assert.equal(huge.status, 413);
  assert.equal((await huge.json()).code, "REQUEST_TOO_LARGE");
});

Deno.test("a client that disconnects while its tool runs does not cancel it: the call finishes and its record is READY", async () => {
  const { store, startRun, submit, open, executed, call } = setup();
  const runId = await startRun();
  const controller = new AbortController();
  const waits = { toolCallId: "call_gone", toolName: "waits", input: {} };
  const pending = Promise.resolve(submit(runId, waits, controller.signal)).catch((error) => error);
  while (executed.waits !== 1) await new Promise((resolve) => setTimeout(resolve, 1));
  controller.abort(new Error("the client went away"));
  open();
  await pending;
  let record = await store.get(runId, "call_gone");
  while (record?.status === "PROJECTING") {
    await new Promise((resolve) => setTimeout(resolve, 1));
    record = await store.get(runId, "call_gone");
  }
  assert.equal(record?.status, "READY");
  // The client's retry gets the real outcome back.
  const recalled = await (await call("POST", `/v1/runs/${runId}/recall`, waits)).json();
  assert.equal(recalled.status, "READY");
  assert.equal(recalled.replayed, true);
});

for (const { name, open } of STORES) {
  Deno.test(`${name}: a used key with another tool and the same input is 409 TOOL_CALL_CONFLICT on tool calls (refusing or replaying) and on recall; the first record stays`, async () => {
    const { store, close } = await open();
    try {
      const refusing = setup(store);
      const replaying = setup(store, { onDuplicate: "replay" });
      const runId = await refusing.startRun();
      const first = { toolCallId: "call_k", toolName: "search", input: { query: "disk" } };
      assert.equal((await refusing.submit(runId, first)).status, 200);
      const record = await (await refusing.call("GET", `/v1/runs/${runId}/tool-calls/call_k`))
        .json();
      const otherTool = { ...first, toolName: "grep" };
      for (
        const res of [
          await refusing.submit(runId, otherTool),
          await replaying.submit(runId, otherTool),
          await refusing.call("POST", `/v1/runs/${runId}/recall`, otherTool),
        ]
      ) {
        assert.equal(res.status, 409);
        assert.deepEqual(await res.json(), {
          status: "ERROR",
          toolCallId: "call_k",
          code: "TOOL_CALL_CONFLICT",
          message: ERROR_MESSAGES.TOOL_CALL_CONFLICT,
        });
      }
      const after = await refusing.call("GET", `/v1/runs/${runId}/tool-calls/call_k`);
      assert.deepEqual(await after.json(), record);
      assert.deepEqual(refusing.executed, { search: 1 });
      assert.deepEqual(replaying.executed, {});
    } finally {
      await close();
    }
  });
}
