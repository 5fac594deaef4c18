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
import { TOOL_CALL_ID_META } from "../../src/http/mod.ts";

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

/** The body of a route's refusal (`errorResponse` of src/http/status.ts). */
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
