/**
 * The routes that need a store capability (`GET /v1/runs`: RunIndex; `GET /v1/runs/:runId` and
 * `POST /v1/runs/:runId/recall`: CallIndex; `/export` and `/verdict`: RunSeal) answer 404
 * NOT_FOUND on a store without it, after the token is checked; every other route works on a
 * store of the required core alone, and the OpenAPI document says which capability a route needs.
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { DEMO_TOOLS } from "../../edge/demo/tools.ts";
import { coreOnly } from "../support/stores.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";

function appOn(store: Store) {
  const boundary = new ToolBoundary({ tools: DEMO_TOOLS, store });
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
  const send = async (method: string, path: string, body?: unknown, token = HARNESS) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await app.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  return { app, send };
}

Deno.test("on a store of the required core alone, each route that needs a capability is 404 NOT_FOUND and the rest work", async () => {
  const { send } = appOn(coreOnly());
  const started = await send("POST", "/v1/runs", { runId: "run-core" });
  assert.equal(started.status, 201);
  const call = {
    toolCallId: "call_1",
    toolName: DEMO_TOOLS[0]!.name,
    input: { query: "disk" },
  };
  const submitted = await send("POST", "/v1/runs/run-core/tool-calls", call, AGENT);
  assert.equal(submitted.status, 200);
  assert.equal(submitted.body.status, "READY");
  const record = await send("GET", "/v1/runs/run-core/tool-calls/call_1");
  assert.equal(record.status, 200);
  for (
    const [method, path, body] of [
      ["GET", "/v1/runs"],
      ["GET", "/v1/runs/run-core"],
      ["POST", "/v1/runs/run-core/recall", call],
      ["GET", "/v1/runs/run-core/export"],
      ["GET", "/v1/runs/run-core/verdict"],
    ] as const
  ) {
    const res = await send(method, path, body);
    assert.deepEqual([res.status, res.body.code], [404, "NOT_FOUND"], `${method} ${path}`);
    // The token is checked first: a stranger learns nothing of the store.
    const stranger = await send(method, path, body, "wrong-token-0123456789abcdef");
    assert.equal(stranger.status, 401, `${method} ${path} without the token`);
  }
  const ended = await send("POST", "/v1/runs/run-core/end");
  assert.equal(ended.status, 200);
  assert.deepEqual(ended.body.facts.map((fact: { toolCallId: string }) => fact.toolCallId), [
    "call_1",
  ]);
});

Deno.test("the OpenAPI document names the capability each such route needs in its 404", async () => {
  const { app } = appOn(new MemoryStore());
  const doc = await (await app.request("/openapi.json")).json();
  const needs = (path: string, method: string) =>
    doc.paths[path][method].responses["404"]?.description as string | undefined;
  assert.match(needs("/v1/runs", "get")!, /no RunIndex/);
  assert.match(needs("/v1/runs/{runId}", "get")!, /no CallIndex/);
  assert.match(needs("/v1/runs/{runId}/recall", "post")!, /no CallIndex/);
  assert.match(needs("/v1/runs/{runId}/export", "get")!, /no RunSeal/);
  assert.match(needs("/v1/runs/{runId}/verdict", "get")!, /no RunSeal/);
  assert.doesNotMatch(needs("/v1/runs/{runId}/end", "post") ?? "", /no /);
});
