/**
 * The MCP route's own request checks, before its token: the Origin allow-list (DNS rebinding
 * protection) and a 401 that names the token instead of an OAuth challenge; driven by the
 * official MCP SDK client where a client is involved.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { createApp, type CreateAppOptions } from "../../src/http/mod.ts";
import { MCP_UNAUTHENTICATED_MESSAGE } from "../../src/http/mcp_guards.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const SECRET = "server-secret-0123456789abcdef-0123";
const BASE = "http://tb.test";

const echo = defineTool({
  name: "echo",
  readOnly: true,
  input: v.object({ text: v.string() }),
  execute: ({ text }) => ({ text }),
  project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "echo", content: raw.text }),
});

async function setup(options: Partial<CreateAppOptions> = {}) {
  const calls: string[] = [];
  const app = createApp({
    boundary: new ToolBoundary({ tools: [echo] }),
    agentToken: AGENT,
    harnessToken: HARNESS,
    secret: SECRET,
    ...options,
  });
  const fetchApp = (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    calls.push(`${request.method} ${new URL(request.url).pathname}`);
    return Promise.resolve(app.fetch(request));
  };
  const started = await fetchApp(`${BASE}/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${HARNESS}`, "content-type": "application/json" },
    body: JSON.stringify({ ttlMs: 60_000 }),
  });
  assert.equal(started.status, 201);
  const { runId } = await started.json() as { runId: string };
  const initialize = (headers: Record<string, string>) =>
    fetchApp(`${BASE}/v1/runs/${runId}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "origin-test", version: "1.0.0" },
        },
      }),
    });
  return { app, runId, fetchApp, initialize, calls };
}

const bearer = { authorization: `Bearer ${AGENT}` };

Deno.test("the MCP route refuses a foreign Origin with 403 before reading the token", async () => {
  const { initialize } = await setup({ allowedOrigins: ["https://app.example.com"] });
  for (
    const headers of [
      { ...bearer, origin: "http://evil.example.com" },
      { origin: "http://evil.example.com" }, // no token: still 403, not 401
      { ...bearer, origin: "null" },
      { ...bearer, origin: "https://app.example.com:8443" },
      { ...bearer, origin: "http://app.example.com" },
    ]
  ) {
    const res = await initialize(headers);
    assert.equal(res.status, 403, headers.origin);
    assert.deepEqual(await res.json(), {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "Origin not allowed: a browser page may use this MCP route only from an " +
          "origin the server lists (allowedOrigins).",
      },
    });
  }
});

Deno.test("the MCP route serves an allowed Origin, and a request without Origin", async () => {
  const { initialize } = await setup({ allowedOrigins: ["https://app.example.com/"] });
  for (const headers of [{ ...bearer, origin: "https://app.example.com" }, bearer]) {
    const res = await initialize(headers);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).result.protocolVersion, "2025-11-25");
  }
});

Deno.test("without allowedOrigins the MCP route refuses every Origin and serves clients without one", async () => {
  const { initialize } = await setup();
  const foreign = await initialize({ ...bearer, origin: "http://127.0.0.1:8787" });
  assert.equal(foreign.status, 403);
  await foreign.body?.cancel();
  const plain = await initialize(bearer);
  assert.equal(plain.status, 200);
  await plain.body?.cancel();
});

Deno.test("Origin is read on the MCP route only: the other routes serve a foreign Origin", async () => {
  const { fetchApp, runId } = await setup();
  const res = await fetchApp(`${BASE}/v1/runs/${runId}`, {
    headers: { authorization: `Bearer ${HARNESS}`, origin: "http://evil.example.com" },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
});

Deno.test("createApp refuses allowedOrigins entries that are not http or https origins", async () => {
  const boundary = new ToolBoundary({ tools: [] });
  for (
    const entry of [
      "app.example.com",
      "https://app.example.com/path",
      "ftp://app.example.com",
      "null",
      "*",
      "",
    ]
  ) {
    assert.throws(
      () =>
        createApp({
          boundary,
          agentToken: AGENT,
          harnessToken: HARNESS,
          allowedOrigins: [entry],
        }),
      {
        name: "TypeError",
        message: "Cannot create app: options.allowedOrigins must list origins such as " +
          "https://app.example.com (http or https, host and port only, no path)",
      },
      entry,
    );
  }
  assert.throws(
    () =>
      createApp({
        boundary,
        agentToken: AGENT,
        harnessToken: HARNESS,
        allowedOrigins: "https://app.example.com" as unknown as string[],
      }),
    /options\.allowedOrigins must be an array of origins/,
  );
  // Not served by a path: the one that is built works.
  const ok = createApp({
    boundary,
    agentToken: AGENT,
    harnessToken: HARNESS,
    allowedOrigins: ["http://localhost:8787", "https://app.example.com"],
  });
  assert.equal((await ok.request("/healthz")).status, 200);
});

Deno.test("the MCP route's 401 names the token it takes and is no OAuth challenge, to the official client", async () => {
  const { runId, fetchApp, initialize } = await setup();
  for (const headers of [{}, { authorization: "Bearer not-the-agent-token-0123" }]) {
    const res = await initialize(headers);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), null);
    assert.deepEqual(await res.json(), {
      status: "ERROR",
      code: "UNAUTHENTICATED",
      message: MCP_UNAUTHENTICATED_MESSAGE,
    });
  }
  const client = new Client({ name: "test-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/v1/runs/${runId}/mcp`), {
    fetch: fetchApp,
    requestInit: { headers: { authorization: "Bearer not-the-agent-token-0123" } },
  });
  const refused = await client.connect(transport).then(
    () => assert.fail("connected with a wrong token"),
    (error: unknown) => error,
  );
  await client.close();
  assert.equal((refused as { code?: unknown }).code, 401);
  // What a person sees: the route wants a bearer token (the agent's or the run's), not OAuth.
  assert.match(String((refused as Error).message), /takes a bearer token, not OAuth/);
  assert.match(String((refused as Error).message), /agent token, or the run token/);
  // Every other route keeps the Bearer challenge of RFC 6750.
  const other = await fetchApp(`${BASE}/v1/runs/${runId}/tool-calls`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(other.status, 401);
  assert.match(other.headers.get("www-authenticate") ?? "", /^Bearer/);
  await other.body?.cancel();
});
