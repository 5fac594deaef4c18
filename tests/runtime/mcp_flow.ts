/**
 * The MCP route of a served app, driven by the official MCP SDK client
 * (`StreamableHTTPClientTransport`) with a run token, the same in every runtime: `deno serve`, the
 * dev server, workerd, Bun. Throws an AssertionError on the first surprise.
 *
 * `mcpRun` drives the demo tools of edge/; `mcpOtherRun` and `mcpWithoutSecret` check what the
 * route refuses.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TOOL_CALL_ID_META } from "../../src/harness/mod.ts";

/** The server secret the runtime tests give an app (at least 32 characters). */
export const SERVER_SECRET = "server-secret-runtime-0123456789abcdef";

/** A run started over HTTP, with the run token POST /v1/runs answers when the app has a secret. */
export interface McpRunStart {
  /** The run's ID. */
  runId: string;
  /** The run token (`tbr.` prefix): an agent token for this run only. */
  agentToken: string;
}

/**
 * Starts a run with the harness token and returns its ID and run token.
 *
 * @param base The server (no trailing slash).
 * @param harness The harness token.
 */
export async function startMcpRun(base: string, harness: string): Promise<McpRunStart> {
  const started = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${harness}`, "content-type": "application/json" },
    body: JSON.stringify({ ttlMs: 60_000 }),
  });
  assert.equal(started.status, 201);
  const { runId, agentToken } = await started.json();
  assert.match(agentToken, /^tbr\./);
  return { runId, agentToken };
}

/**
 * Connects the official client to a run's MCP route with a bearer token (the client sends
 * `initialize` and `notifications/initialized`). The caller closes the client.
 *
 * @param base The server (no trailing slash).
 * @param runId The run whose route to use.
 * @param token The bearer token.
 */
export async function mcpConnect(
  base: string,
  runId: string,
  token: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "runtime-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/runs/${runId}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

/**
 * Starts a run, then lists and calls the demo tools of edge/ over MCP with the run's own token:
 * evidence with a `_meta` tool call ID (its record READY for the harness), a tool that throws, and
 * the unlisted writable tool, refused by the boundary.
 *
 * @param base The server (no trailing slash).
 * @param harness The harness token.
 * @returns A one-line summary per step, for the test log.
 */
export async function mcpRun(base: string, harness: string): Promise<string[]> {
  const { runId, agentToken } = await startMcpRun(base, harness);
  const { client, transport } = await mcpConnect(base, runId, agentToken);
  try {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    assert.ok(names.includes("search_runbook") && !names.includes("restart_service"));
    const found = await client.callTool({
      name: "search_runbook",
      arguments: { query: "disk full" },
      _meta: { [TOOL_CALL_ID_META]: "call_1" },
    });
    assert.equal((found.structuredContent as { evidence: string }).evidence, "EVIDENCE_FOUND");
    const failed = await client.callTool({ name: "query_metrics", arguments: { metric: "cpu" } });
    assert.equal(failed.isError, true);
    const restart = await client.callTool({
      name: "restart_service",
      arguments: { service: "api" },
    });
    assert.equal((restart.structuredContent as { code: string }).code, "NOT_READ_ONLY");
    const record = await fetch(`${base}/v1/runs/${runId}/tool-calls/call_1`, {
      headers: { authorization: `Bearer ${harness}` },
    });
    assert.equal((await record.json()).status, "READY");
    return [`${transport.protocolVersion}`, `${names.length} tools`, "READY", "ERROR"];
  } finally {
    await client.close();
  }
}

/** The body of a route's refusal (`errorResponse` of src/hono/status.ts). */
const refusal = (code: string, message: string) => ({ status: "ERROR", code, message });

/**
 * A run token on another run's MCP route: 403 FORBIDDEN (the agent guard's own-run check, before
 * the route reads the body), for a raw JSON-RPC request and for the official client's
 * `initialize`; the same token still connects to its own run.
 *
 * @param base The server (no trailing slash).
 * @param harness The harness token.
 * @returns A one-line summary, for the test log.
 */
export async function mcpOtherRun(base: string, harness: string): Promise<string> {
  const one = await startMcpRun(base, harness);
  const two = await startMcpRun(base, harness);
  const res = await fetch(`${base}/v1/runs/${two.runId}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${one.agentToken}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(res.status, 403);
  assert.deepEqual(
    await res.json(),
    refusal("FORBIDDEN", "This token may not use this route."),
  );
  await assert.rejects(
    mcpConnect(base, two.runId, one.agentToken),
    (error) => error instanceof StreamableHTTPError && error.code === 403,
  );
  const own = await mcpConnect(base, one.runId, one.agentToken);
  try {
    assert.ok((await own.client.listTools()).tools.length > 0);
  } finally {
    await own.client.close();
  }
  return "other run 403 FORBIDDEN, own run served";
}

/**
 * An app without a server secret: POST /v1/runs answers no run token, and the MCP route is
 * 404 NOT_FOUND even to the static agent token.
 *
 * @param base The server (no trailing slash).
 * @param agent The static agent token.
 * @param harness The harness token.
 */
export async function mcpWithoutSecret(
  base: string,
  agent: string,
  harness: string,
): Promise<void> {
  const started = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${harness}`, "content-type": "application/json" },
    body: JSON.stringify({ ttlMs: 60_000 }),
  });
  assert.equal(started.status, 201);
  const run = await started.json();
  assert.equal("agentToken" in run, false);
  const res = await fetch(`${base}/v1/runs/${run.runId}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${agent}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), refusal("NOT_FOUND", "Not found."));
}

/** MCP_UPSTREAMS for the everything server at `url`: trusted, get-env vetoed, prefixed. */
export const EVERYTHING_UPSTREAM = (url: string): string =>
  JSON.stringify([{ url, trusted: true, readOnly: { "get-env": false }, prefix: "everything_" }]);

/**
 * The canonical record of a call, read with the harness token (200 expected).
 *
 * @param base The server (no trailing slash).
 * @param harness The harness token.
 * @param runId The run.
 * @param toolCallId The call.
 */
export async function harnessRecord(
  base: string,
  harness: string,
  runId: string,
  toolCallId: string,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const res = await fetch(`${base}/v1/runs/${runId}/tool-calls/${toolCallId}`, {
    headers: { authorization: `Bearer ${harness}` },
  });
  assert.equal(res.status, 200);
  return await res.json();
}

/**
 * Drives the everything server's tools through a gateway at `base` (configured with
 * {@linkcode EVERYTHING_UPSTREAM}) over its MCP route, with a run token: the vetoed and writable
 * tools are not listed and are refused, two echoes in two requests are READY with the upstream's
 * text as the record's raw, and a tool with an outputSchema passes the client's check.
 *
 * @param base The gateway (no trailing slash).
 * @param harness The harness token.
 * @returns What happened, for the test log.
 */
export async function gatewayRun(base: string, harness: string): Promise<string[]> {
  const { runId, agentToken } = await startMcpRun(base, harness);
  const { client, transport } = await mcpConnect(base, runId, agentToken);
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("everything_echo"), names.join(", "));
    assert.ok(!names.includes("everything_get-env"), "the vetoed tool is not listed");
    assert.ok(!names.includes("everything_gzip-file-as-resource"), "a writable tool is not listed");
    // Two calls, two HTTP requests to the gateway (on Workers each connects upstream on its own).
    for (const [id, message] of [["call_echo", "first"], ["call_echo_2", "second"]] as const) {
      const echoed = await client.callTool({
        name: "everything_echo",
        arguments: { message: `${message} through the gateway` },
        _meta: { [TOOL_CALL_ID_META]: id },
      });
      assert.equal(echoed.isError, undefined, JSON.stringify(echoed));
      assert.deepEqual(echoed.structuredContent, {
        evidence: "EVIDENCE_FOUND",
        scope: 'tool "echo" of MCP server "mcp-servers/everything"',
        content: [`Echo: ${message} through the gateway`],
      });
      const held = await harnessRecord(base, harness, runId, id);
      assert.equal(held.status, "READY");
      assert.deepEqual(held.raw.content, [
        { type: "text", text: `Echo: ${message} through the gateway` },
      ]);
    }
    const vetoed = await client.callTool({ name: "everything_get-env", arguments: {} });
    assert.equal((vetoed.structuredContent as { code: string }).code, "NOT_READ_ONLY");
    // A tool with an outputSchema: its result is checked by a validator that needs no eval
    // (workerd refuses eval).
    const weather = await client.callTool({
      name: "everything_get-structured-content",
      arguments: { location: "Chicago" },
      _meta: { [TOOL_CALL_ID_META]: "call_weather" },
    });
    assert.equal(weather.isError, undefined, JSON.stringify(weather));
    const checked = await harnessRecord(base, harness, runId, "call_weather");
    assert.equal(checked.status, "READY");
    assert.deepEqual(checked.raw.structuredContent, {
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
    return [
      `${transport.protocolVersion}`,
      `${names.length} tools`,
      "2 echoes READY",
      "structured content checked, READY",
    ];
  } finally {
    await client.close();
  }
}
