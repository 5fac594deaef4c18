/**
 * `POST /v1/runs/{runId}/mcp` driven by the official MCP SDK client (in process: its fetch calls
 * `app.fetch`), plus the wire rules the client never breaks, sent by hand. Run tokens too.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { createApp, type CreateAppOptions } from "../../src/hono/mod.ts";
import { type McpRoute, mcpRoute } from "../../src/mcp/mod.ts";
import { TOOL_CALL_ID_META } from "../../src/harness/mod.ts";
import { Signer, signRunToken } from "../../src/hono/run_token.ts";
import { CANARY_SECRET, createFakeToolkit } from "../../src/testing/fakes.ts";
import { startHttpRun } from "../support/runs.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const SECRET = "server-secret-0123456789abcdef-0123";
const BASE = "http://tb.test";

const lookup = defineTool({
  name: "lookup",
  description: "Looks a key up.",
  readOnly: true,
  input: v.object({ key: v.string() }),
  execute: ({ key }) => ({ key, found: key === "a" }),
  project: (raw) => ({
    evidence: raw.found ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
    scope: "the lookup table",
    content: { found: raw.found },
  }),
});

function setup(options: Partial<CreateAppOptions> = {}) {
  const kit = createFakeToolkit();
  const boundary = new ToolBoundary({ tools: [lookup, ...kit.tools] });
  const app = createApp({
    boundary,
    agentToken: AGENT,
    harnessToken: HARNESS,
    secret: SECRET,
    mcp: mcpRoute(),
    ...options,
  });
  const fetchApp = (input: string | URL | Request, init?: RequestInit) =>
    Promise.resolve(app.fetch(new Request(input, init)));
  const startRun = async (body: Record<string, unknown> = {}) =>
    await startHttpRun(fetchApp, BASE, HARNESS, { ttlMs: 60_000, ...body }) as {
      runId: string;
      deadline: number;
      startedAt: number;
      agentToken?: string;
    };
  const connect = async (runId: string, token = AGENT) => {
    const client = new Client({ name: "test-client", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/v1/runs/${runId}/mcp`), {
      fetch: fetchApp,
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    return { client, transport };
  };
  /** One raw JSON-RPC POST. */
  const post = (runId: string, body: unknown, headers: Record<string, string> = {}) =>
    fetchApp(`${BASE}/v1/runs/${runId}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${AGENT}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return { app, boundary, kit, fetchApp, startRun, connect, post };
}

const meta = (toolCallId: unknown) => ({ [TOOL_CALL_ID_META]: toolCallId });
/** The `_meta` key of the server in a 2026-07-28 result. */
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

Deno.test("the official client negotiates 2025-11-25, gets a session, and lists only the read-only tools", async () => {
  const { startRun, connect, kit } = setup();
  const { runId } = await startRun();
  const { client, transport } = await connect(runId);
  try {
    assert.equal(transport.protocolVersion, "2025-11-25");
    assert.match(transport.sessionId ?? "", /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(client.getServerCapabilities(), { tools: {} });
    assert.deepEqual(client.getServerVersion(), { name: "tool-boundary", version: "0.1.0" });
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    assert.ok(!names.includes(kit.names.writable));
    assert.equal(names.length, kit.tools.length); // lookup in, fake_writable out
    const listed = tools.find((tool) => tool.name === "lookup");
    assert.deepEqual(listed?.annotations, { readOnlyHint: true });
    assert.equal(listed?.description, "Looks a key up.");
    assert.deepEqual(listed?.inputSchema.required, ["key"]);
    assert.ok(tools.every((tool) => tool.annotations?.readOnlyHint === true));
    assert.equal(await client.ping().then(() => "pong"), "pong");
  } finally {
    await client.close();
  }
});

Deno.test("callTool: READY, NO_EVIDENCE, ERROR, writable and invalid input as MCP results, the _meta ID kept exactly", async () => {
  const { startRun, connect, boundary, kit } = setup();
  const { runId } = await startRun();
  const { client } = await connect(runId);
  try {
    const ready = await client.callTool({
      name: "lookup",
      arguments: { key: "a" },
      _meta: meta("call_Ab-9.x:1"),
    });
    const readyJson = {
      evidence: "EVIDENCE_FOUND",
      scope: "the lookup table",
      content: { found: true },
    };
    assert.deepEqual(ready, {
      content: [{ type: "text", text: JSON.stringify(readyJson) }],
      structuredContent: readyJson,
      _meta: meta("call_Ab-9.x:1"), // the ID the call was recorded under
    });
    const record = await boundary.inspect(runId, "call_Ab-9.x:1");
    assert.deepEqual(
      [record?.toolCallId, record?.status, record?.request, record?.raw],
      ["call_Ab-9.x:1", "READY", { key: "a" }, { key: "a", found: true }],
    );

    const none = await client.callTool({
      name: "lookup",
      arguments: { key: "b" },
      _meta: meta("c2"),
    });
    assert.equal(none.isError, undefined);
    assert.deepEqual(none.structuredContent, {
      evidence: "NO_EVIDENCE",
      scope: "the lookup table",
      content: { found: false },
    });

    const failed = await client.callTool({
      name: kit.names.throwing,
      arguments: { query: "q" },
      _meta: meta("c3"),
    });
    assert.equal(failed.isError, true);
    assert.deepEqual(Object.keys(failed.structuredContent ?? {}), ["code", "message"]);
    assert.equal((failed.structuredContent as { code: string }).code, "EXECUTION_FAILED");
    assert.deepEqual(failed.content, [{
      type: "text",
      text: JSON.stringify(failed.structuredContent),
    }]);
    const thrown = await boundary.inspect(runId, "c3");
    assert.equal(thrown?.errorCode, "EXECUTION_FAILED");
    // What the tool threw is in the harness's record, never in the MCP answer (checked below).
    assert.deepEqual(thrown?.failure, {
      name: "Error",
      message: `backend refused credential ${CANARY_SECRET}`,
    });

    const writable = await client.callTool({
      name: kit.names.writable,
      arguments: {},
      _meta: meta("c4"),
    });
    assert.equal(writable.isError, true);
    assert.equal((writable.structuredContent as { code: string }).code, "NOT_READ_ONLY");
    assert.equal(await boundary.inspect(runId, "c4"), null);

    const invalid = await client.callTool({
      name: "lookup",
      arguments: { key: 7 },
      _meta: meta("c5"),
    });
    assert.equal(invalid.isError, true);
    assert.deepEqual(invalid.structuredContent, {
      code: "INVALID_INPUT",
      message: (invalid.structuredContent as { message: string }).message,
      issues: [{ path: "key", expected: "string" }],
    });

    const badId = await client.callTool({
      name: "lookup",
      arguments: { key: "a" },
      _meta: meta(" x"),
    });
    assert.equal((badId.structuredContent as { code: string }).code, "INVALID_TOOL_CALL_ID");
    assert.equal(badId._meta, undefined); // a refused ID is not echoed

    await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), {
      code: -32602,
    });
    for (const result of [ready, none, failed, writable, invalid, badId]) {
      assert.ok(!JSON.stringify(result).includes(CANARY_SECRET));
      assert.ok(!JSON.stringify(result).includes("backend refused"));
    }
    assert.equal(kit.counts.execute[kit.names.writable], undefined);
  } finally {
    await client.close();
  }
});

Deno.test("two clients that both count JSON-RPC ids from 1 get their own sessions and never collide", async () => {
  const { startRun, connect, boundary } = setup();
  const { runId } = await startRun();
  const first = await connect(runId);
  const second = await connect(runId);
  try {
    assert.notEqual(first.transport.sessionId, second.transport.sessionId);
    const a = await first.client.callTool({ name: "lookup", arguments: { key: "a" } });
    const b = await second.client.callTool({ name: "lookup", arguments: { key: "b" } });
    assert.equal(a.isError, undefined);
    assert.equal(b.isError, undefined);
    const calls = [];
    for (const { transport } of [first, second]) {
      // initialize is JSON-RPC id 0 and callTool id 1 on both clients.
      calls.push(await boundary.inspect(runId, `${transport.sessionId}:1`));
    }
    assert.deepEqual(calls.map((record) => record?.request), [{ key: "a" }, { key: "b" }]);
  } finally {
    await first.client.close();
    await second.client.close();
  }
});

Deno.test("a _meta tool call ID used again is DUPLICATE_TOOL_CALL with the same input, TOOL_CALL_CONFLICT with another, and keeps the first record", async () => {
  const { startRun, connect, boundary } = setup();
  const { runId } = await startRun();
  const { client } = await connect(runId);
  try {
    await client.callTool({ name: "lookup", arguments: { key: "a" }, _meta: meta("call_dup") });
    const same = await client.callTool({
      name: "lookup",
      arguments: { key: "a" },
      _meta: meta("call_dup"),
    });
    assert.equal(same.isError, true);
    assert.equal((same.structuredContent as { code: string }).code, "DUPLICATE_TOOL_CALL");
    const other = await client.callTool({
      name: "lookup",
      arguments: { key: "b" },
      _meta: meta("call_dup"),
    });
    assert.equal(other.isError, true);
    assert.equal((other.structuredContent as { code: string }).code, "TOOL_CALL_CONFLICT");
    assert.deepEqual((await boundary.inspect(runId, "call_dup"))?.request, { key: "a" });
  } finally {
    await client.close();
  }
});

Deno.test("a session issued for one run, or a forged one, is 404 on another run; a call without session or _meta ID is INVALID_TOOL_CALL_ID", async () => {
  const { startRun, post } = setup();
  const one = await startRun();
  const two = await startRun();
  const init = await post(one.runId, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  assert.equal(init.status, 200);
  assert.equal((await init.json()).result.protocolVersion, "2025-06-18");
  const session = init.headers.get("mcp-session-id")!;
  const call = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "lookup", arguments: { key: "a" } },
  };
  const own = await post(one.runId, call, { "mcp-session-id": session });
  assert.equal((await own.json()).result.structuredContent.evidence, "EVIDENCE_FOUND");
  for (const forged of [session, `${session.slice(0, 22)}.${"A".repeat(43)}`, "nope"]) {
    const res = await post(two.runId, call, { "mcp-session-id": forged });
    assert.equal(res.status, 404);
    assert.deepEqual((await res.json()).error.code, -32001);
  }
  const bare = await post(two.runId, call);
  const result = (await bare.json()).result;
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent.code, "INVALID_TOOL_CALL_ID");
});

Deno.test("the wire: parse error, invalid request, unknown method, notifications, batches, versions, methods, limits", async () => {
  const { startRun, post, fetchApp } = setup({ toolCallBodyBytes: 4096 });
  const { runId } = await startRun();
  const rpc = async (res: Response) => [res.status, (await res.json()).error?.code];
  assert.deepEqual(await rpc(await post(runId, "{nope")), [400, -32700]);
  assert.deepEqual(await rpc(await post(runId, { jsonrpc: "1.0", id: 1, method: "ping" })), [
    400,
    -32600,
  ]);
  assert.deepEqual(await rpc(await post(runId, { jsonrpc: "2.0", id: null, method: "ping" })), [
    400,
    -32600,
  ]);
  assert.deepEqual(
    await rpc(await post(runId, { jsonrpc: "2.0", id: 1, method: "resources/list" })),
    [200, -32601],
  );
  assert.deepEqual(
    await rpc(await post(runId, { jsonrpc: "2.0", id: 1, method: "ping", params: [] })),
    [200, -32602],
  );
  assert.deepEqual(
    await rpc(
      await post(runId, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 5 } }),
    ),
    [200, -32602],
  );
  assert.deepEqual(
    await rpc(await post(runId, { jsonrpc: "2.0", id: 1, method: "initialize", params: {} })),
    [200, -32602],
  );
  const ping = await post(runId, { jsonrpc: "2.0", id: "p", method: "ping" });
  assert.deepEqual(await ping.json(), { jsonrpc: "2.0", id: "p", result: {} });
  for (const method of ["notifications/initialized", "notifications/cancelled", "anything"]) {
    const res = await post(runId, { jsonrpc: "2.0", method });
    assert.deepEqual([res.status, await res.text()], [202, ""]);
  }
  const late = await post(runId, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2099-01-01",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  assert.equal((await late.json()).result.protocolVersion, "2025-11-25");
  assert.deepEqual(
    await rpc(
      await post(runId, { jsonrpc: "2.0", id: 1, method: "ping" }, {
        "mcp-protocol-version": "2024-11-05",
      }),
    ),
    [400, -32600],
  );
  // Batches: only in 2025-03-26 (also the revision a request without the header speaks).
  const batch = [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "nope" },
  ];
  const batched = await post(runId, batch, { "mcp-protocol-version": "2025-03-26" });
  assert.deepEqual(await batched.json(), [
    { jsonrpc: "2.0", id: 1, result: {} },
    { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found." } },
  ]);
  assert.equal((await post(runId, batch)).status, 200);
  assert.deepEqual(await rpc(await post(runId, batch, { "mcp-protocol-version": "2025-11-25" })), [
    400,
    -32600,
  ]);
  assert.deepEqual(await rpc(await post(runId, [])), [400, -32600]);
  const onlyNotes = await post(runId, [{ jsonrpc: "2.0", method: "notifications/initialized" }]);
  assert.equal(onlyNotes.status, 202);
  // No SSE stream, no session to delete.
  for (const method of ["GET", "DELETE"]) {
    const res = await fetchApp(`${BASE}/v1/runs/${runId}/mcp`, {
      method,
      headers: { authorization: `Bearer ${AGENT}`, accept: "text/event-stream" },
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "POST");
    await res.body?.cancel();
  }
  assert.deepEqual(
    await rpc(await post(runId, { jsonrpc: "2.0", id: 1, method: "ping", pad: "x".repeat(5000) })),
    [413, -32600],
  );
  assert.deepEqual(await rpc(await post(runId, "{}", { "content-type": "text/plain" })), [
    415,
    -32600,
  ]);
  assert.deepEqual(await rpc(await post(runId, "{}", { accept: "text/html" })), [406, -32600]);
  const anon = await fetchApp(`${BASE}/v1/runs/${runId}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(anon.status, 401);
});

Deno.test("without the MCP route it is 404 (before any token), and without a secret a run has no agentToken", async () => {
  const noRoute = setup({ mcp: undefined as unknown as McpRoute });
  const run = await noRoute.startRun();
  assert.equal(typeof run.agentToken, "string");
  for (const token of [AGENT, "not-a-token-0123456789"]) {
    const res = await noRoute.post(run.runId, { jsonrpc: "2.0", id: 1, method: "ping" }, {
      authorization: `Bearer ${token}`,
    });
    assert.equal(res.status, 404);
    assert.equal((await res.json()).code, "NOT_FOUND");
  }
  const noSecret = setup({
    secret: undefined as unknown as string,
    mcp: undefined as unknown as McpRoute,
  });
  const plain = await noSecret.startRun();
  assert.equal("agentToken" in plain, false);
  const res = await noSecret.post(plain.runId, { jsonrpc: "2.0", id: 1, method: "ping" });
  assert.equal(res.status, 404);
  assert.equal((await res.json()).code, "NOT_FOUND");
  assert.throws(() => setup({ secret: "short" }), TypeError);
});

Deno.test("createApp refuses an MCP route without a server secret, and an mcp option that is no route", () => {
  assert.throws(() => setup({ secret: undefined as unknown as string }), {
    name: "TypeError",
    message: "Cannot create app: options.mcp needs options.secret (it signs MCP session IDs)",
  });
  assert.throws(() => setup({ mcp: {} as McpRoute }), {
    name: "TypeError",
    message: "Cannot create app: options.mcp must be mcpRoute() of @tool-boundary/core/mcp",
  });
});

Deno.test("a run token works on its own run's tool calls and MCP route, and nowhere else", async () => {
  const { startRun, connect, fetchApp, boundary } = setup();
  const one = await startRun();
  const two = await startRun();
  assert.match(one.agentToken ?? "", /^tbr\./);
  const token = one.agentToken!;
  const toolCall = (runId: string, bearer: string, toolCallId: string) =>
    fetchApp(`${BASE}/v1/runs/${runId}/tool-calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: JSON.stringify({ toolCallId, toolName: "lookup", input: { key: "a" } }),
    });
  assert.equal((await toolCall(one.runId, token, "t1")).status, 200);
  const { client } = await connect(one.runId, token);
  try {
    const result = await client.callTool({
      name: "lookup",
      arguments: { key: "a" },
      _meta: meta("t2"),
    });
    assert.equal(result.isError, undefined);
  } finally {
    await client.close();
  }
  const codeOf = async (res: Response) => [res.status, (await res.json()).code];
  assert.deepEqual(await codeOf(await toolCall(two.runId, token, "t3")), [403, "FORBIDDEN"]);
  await assert.rejects(connect(two.runId, token));
  const harnessRoute = await fetchApp(`${BASE}/v1/runs/${one.runId}/tool-calls/t1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.deepEqual(await codeOf(harnessRoute), [403, "FORBIDDEN"]);
  // Expired (signed with the same secret, deadline passed) and tampered.
  const signer = new Signer(SECRET);
  const expired = await signRunToken(signer, {
    runId: one.runId,
    startedAt: one.startedAt,
    exp: Date.now() - 1,
  });
  assert.deepEqual(await codeOf(await toolCall(one.runId, expired, "t4")), [
    401,
    "UNAUTHENTICATED",
  ]);
  const tampered = `${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`;
  assert.deepEqual(await codeOf(await toolCall(one.runId, tampered, "t5")), [
    401,
    "UNAUTHENTICATED",
  ]);
  const otherSecret = await signRunToken(new Signer(`${SECRET}-x`), {
    runId: one.runId,
    startedAt: one.startedAt,
    exp: one.deadline,
  });
  assert.deepEqual(await codeOf(await toolCall(one.runId, otherSecret, "t6")), [
    401,
    "UNAUTHENTICATED",
  ]);
  for (const refused of ["t3", "t4", "t5", "t6"]) {
    assert.equal(await boundary.inspect(one.runId, refused), null);
    assert.equal(await boundary.inspect(two.runId, refused), null);
  }
  // The static agent token still works on any run.
  assert.equal((await toolCall(two.runId, AGENT, "t7")).status, 200);
});

Deno.test("the 2.x client speaks 2026-07-28: server/discover, no initialize, no session; calls without _meta ID get fresh IDs", async () => {
  const { startRun, fetchApp, boundary } = setup();
  const { runId } = await startRun();
  const seen: { method: string; version: string | null; session: string | null }[] = [];
  const logged = async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    const body = req.method === "POST" ? await req.clone().json() : null;
    seen.push({
      method: body?.method ?? req.method,
      version: req.headers.get("mcp-protocol-version"),
      session: req.headers.get("mcp-session-id"),
    });
    return fetchApp(req);
  };
  const client = new ClientV2({ name: "v2", version: "1.0.0" }, {
    versionNegotiation: { mode: "auto" },
  });
  await client.connect(
    new TransportV2(new URL(`${BASE}/v1/runs/${runId}/mcp`), {
      fetch: logged,
      requestInit: { headers: { authorization: `Bearer ${AGENT}` } },
    }),
  );
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
    assert.equal(client.getProtocolEra(), "modern");
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "lookup"));
    const first = await client.callTool({ name: "lookup", arguments: { key: "a" } });
    const again = await client.callTool({ name: "lookup", arguments: { key: "a" } });
    const named = await client.callTool({
      name: "lookup",
      arguments: { key: "b" },
      _meta: meta("call_v2"),
    });
    assert.deepEqual(first.structuredContent, {
      evidence: "EVIDENCE_FOUND",
      scope: "the lookup table",
      content: { found: true },
    });
    const ids = [first, again, named].map((result) => result._meta?.[TOOL_CALL_ID_META]);
    assert.match(String(ids[0]), /^mcp-[A-Za-z0-9_-]{22}$/);
    assert.notEqual(ids[0], ids[1]); // the same request twice is two calls
    assert.equal(ids[2], "call_v2");
    for (const id of ids) {
      assert.equal((await boundary.inspect(runId, String(id)))?.status, "READY");
    }
  } finally {
    await client.close();
  }
  assert.deepEqual(seen.map((request) => request.method), [
    "server/discover",
    "tools/list",
    "tools/call",
    "tools/call",
    "tools/call",
  ]);
  assert.ok(seen.every((request) => request.version === "2026-07-28" && request.session === null));
});

Deno.test("2026-07-28 by hand: discover, results, and the hostile envelope, headers, batches and methods", async () => {
  const { startRun, post, boundary } = setup();
  const { runId } = await startRun();
  const envelope = (extra: Record<string, unknown> = {}) => ({
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    ...extra,
  });
  const modern = (method: string, params: Record<string, unknown> = {}, id: unknown = 1) => ({
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: { ...envelope(), ...(params._meta as object ?? {}) } },
  });
  const headers = (method: string, extra: Record<string, string> = {}) => ({
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...extra,
  });
  const answer = async (res: Response) => [res.status, await res.json()];

  const [status, discover] = await answer(
    await post(runId, modern("server/discover"), headers("server/discover")),
  );
  assert.equal(status, 200);
  assert.deepEqual(discover, {
    jsonrpc: "2.0",
    id: 1,
    result: {
      resultType: "complete",
      supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
      capabilities: { tools: {} },
      ttlMs: 0,
      cacheScope: "private",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "tool-boundary", version: "0.1.0" } },
    },
  });
  const call = modern("tools/call", { name: "lookup", arguments: { key: "a" } });
  const called = await post(runId, call, headers("tools/call", { "mcp-name": "lookup" }));
  assert.equal(called.headers.get("mcp-session-id"), null);
  const result = (await called.json()).result;
  assert.equal(result.resultType, "complete");
  assert.equal(result.structuredContent.evidence, "EVIDENCE_FOUND");
  // Written as text ahead of time, the result has the shape every 2026-07-28 result has (as
  // server/discover's): resultType first, the server in _meta beside the call's ID.
  assert.deepEqual(Object.keys(result), ["resultType", "content", "structuredContent", "_meta"]);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  assert.deepEqual(Object.keys(result._meta), [TOOL_CALL_ID_META, SERVER_INFO]);
  assert.match(result._meta[TOOL_CALL_ID_META], /^mcp-[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(result._meta[SERVER_INFO], discover.result._meta[SERVER_INFO]);
  // Mcp-Name as the base64 form 2026-07-28 clients use for values that are not plain ASCII.
  const encoded = await post(
    runId,
    call,
    headers("tools/call", { "mcp-name": `=?base64?${btoa("lookup")}?=` }),
  );
  assert.equal((await encoded.json()).result.structuredContent.evidence, "EVIDENCE_FOUND");

  const code = async (res: Response) => {
    const body = await res.json();
    return [res.status, body.error?.code, body.error?.data];
  };
  const supported = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];
  const cases: [string, unknown, Record<string, string>, unknown[]][] = [
    [
      "no envelope, 2026 header",
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers(
        "tools/list",
      ),
      [400, -32602, undefined],
    ],
    [
      "version not a string",
      modern("tools/list", { _meta: { "io.modelcontextprotocol/protocolVersion": 7 } }),
      headers("tools/list"),
      [400, -32602, undefined],
    ],
    [
      "capabilities missing",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
      },
      headers("tools/list"),
      [400, -32602, undefined],
    ],
    [
      "clientInfo not an object",
      modern("tools/list", { _meta: { "io.modelcontextprotocol/clientInfo": "me" } }),
      headers("tools/list"),
      [400, -32602, undefined],
    ],
    [
      "a future revision in the envelope",
      modern("server/discover", {
        _meta: { "io.modelcontextprotocol/protocolVersion": "2027-01-01" },
      }),
      { "mcp-protocol-version": "2027-01-01", "mcp-method": "server/discover" },
      [400, -32022, { supported, requested: "2027-01-01" }],
    ],
    [
      "a future revision in the envelope, no header",
      modern("server/discover", {
        _meta: { "io.modelcontextprotocol/protocolVersion": "2027-01-01" },
      }),
      { "mcp-method": "server/discover" },
      [400, -32022, { supported, requested: "2027-01-01" }],
    ],
    ["header and envelope disagree", modern("tools/list"), {
      "mcp-protocol-version": "2025-11-25",
      "mcp-method": "tools/list",
    }, [400, -32020, undefined]],
    ["no MCP-Protocol-Version", modern("tools/list"), { "mcp-method": "tools/list" }, [
      400,
      -32020,
      undefined,
    ]],
    ["no Mcp-Method", modern("tools/list"), { "mcp-protocol-version": "2026-07-28" }, [
      400,
      -32020,
      undefined,
    ]],
    ["Mcp-Method disagrees", modern("tools/list"), headers("tools/call"), [400, -32020, undefined]],
    ["no Mcp-Name", call, headers("tools/call"), [400, -32020, undefined]],
    ["Mcp-Name disagrees", call, headers("tools/call", { "mcp-name": "crash" }), [
      400,
      -32020,
      undefined,
    ]],
    ["Mcp-Name a broken base64", call, headers("tools/call", { "mcp-name": "=?base64?%%?=" }), [
      400,
      -32020,
      undefined,
    ]],
    ["discover in a batch", [modern("server/discover")], {}, [400, -32600, undefined]],
    ["a 2026 header on a batch", [{ jsonrpc: "2.0", id: 1, method: "ping" }], {
      "mcp-protocol-version": "2026-07-28",
    }, [400, -32600, undefined]],
    ["a response posted", { jsonrpc: "2.0", id: 1, result: {} }, {
      "mcp-protocol-version": "2026-07-28",
    }, [400, -32600, undefined]],
    ["unknown method", modern("resources/list"), headers("resources/list"), [
      200,
      -32601,
      undefined,
    ]],
    ["initialize is not of 2026-07-28", modern("initialize"), headers("initialize"), [
      200,
      -32601,
      undefined,
    ]],
    ["ping is not of 2026-07-28", modern("ping"), headers("ping"), [200, -32601, undefined]],
    [
      "unknown tool",
      modern("tools/call", { name: "nope" }),
      headers("tools/call", {
        "mcp-name": "nope",
      }),
      [200, -32602, undefined],
    ],
    ["a future revision in the header", { jsonrpc: "2.0", id: 1, method: "tools/list" }, {
      "mcp-protocol-version": "2030-01-01",
    }, [400, -32022, { supported, requested: "2030-01-01" }]],
  ];
  for (const [name, body, extra, expected] of cases) {
    assert.deepEqual(await code(await post(runId, body, extra)), expected, name);
  }
  // Notifications are 202 with or without an envelope; a 2025 envelope is that revision's request.
  const note = await post(runId, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 1, _meta: envelope() },
  }, { "mcp-protocol-version": "2026-07-28" });
  assert.deepEqual([note.status, await note.text()], [202, ""]);
  const old = await post(
    runId,
    modern("ping", { _meta: { "io.modelcontextprotocol/protocolVersion": "2025-11-25" } }),
  );
  assert.deepEqual(await old.json(), { jsonrpc: "2.0", id: 1, result: {} });
  // Nothing refused reached a record: only the two good calls are there.
  assert.equal((await boundary.listCalls(runId)).length, 2);
});
