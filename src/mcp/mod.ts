/**
 * The MCP route of the HTTP app, `POST /v1/runs/{runId}/mcp`: the boundary of one run as an MCP
 * server (Streamable HTTP, JSON responses; revisions 2026-07-28, 2025-11-25, 2025-06-18 and
 * 2025-03-26; see docs/mcp.md). An entry of its own, so an app without it does not carry it:
 * {@linkcode mcpRoute} makes the route that `createApp` of `@tool-boundary/core/hono` serves when
 * given it as its `mcp` option, with a server `secret` (MCP session IDs are signed with it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { createApp } from "@tool-boundary/core/hono";
 * import { mcpRoute } from "@tool-boundary/core/mcp";
 *
 * const echo = defineTool({
 *   name: "echo",
 *   readOnly: true,
 *   input: v.object({ text: v.string() }),
 *   execute: ({ text }) => ({ text }),
 *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "echo", content: raw.text }),
 * });
 * const app = createApp({
 *   boundary: new ToolBoundary({ tools: [echo] }),
 *   agentToken: "agent-token-0123456789",
 *   harnessToken: "harness-token-0123456789",
 *   secret: "server-secret-0123456789-0123456789",
 *   mcp: mcpRoute(),
 * });
 * const started = await app.request("/v1/runs", {
 *   method: "POST",
 *   headers: {
 *     authorization: "Bearer harness-token-0123456789",
 *     "content-type": "application/json",
 *   },
 *   body: JSON.stringify({ ttlMs: 60_000 }),
 * });
 * const { runId, agentToken } = await started.json();
 * const res = await app.request(`/v1/runs/${runId}/mcp`, {
 *   method: "POST",
 *   headers: {
 *     authorization: `Bearer ${agentToken}`,
 *     "content-type": "application/json",
 *     accept: "application/json",
 *     "mcp-protocol-version": "2025-11-25",
 *   },
 *   body: JSON.stringify({
 *     jsonrpc: "2.0",
 *     id: 1,
 *     method: "tools/call",
 *     params: {
 *       name: "echo",
 *       arguments: { text: "hi" },
 *       _meta: { "io.tool-boundary/toolCallId": "call_1" },
 *     },
 *   }),
 * });
 * assert.equal(res.status, 200);
 * const { result } = await res.json();
 * assert.deepEqual(result.structuredContent, {
 *   evidence: "EVIDENCE_FOUND",
 *   scope: "echo",
 *   content: "hi",
 * });
 * ```
 *
 * @module
 */
import { mcpUnauthenticated, originCheck, originList } from "./guards.ts";
import { MCP_PROTOCOL_VERSIONS, mcpServer, serveMcp } from "./server.ts";
import type { McpContext, McpHandlers, McpMount, McpRoute, McpSessions } from "./types.ts";

export { MCP_PROTOCOL_VERSIONS };
export type { McpContext, McpHandlers, McpMount, McpRoute, McpSessions };

/**
 * Options of {@linkcode mcpRoute}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpRoute, type McpRouteOptions } from "@tool-boundary/core/mcp";
 *
 * const options: McpRouteOptions = { allowedOrigins: ["https://app.example.com"] };
 * assert.equal(typeof mcpRoute(options).mount, "function");
 * assert.throws(() => mcpRoute({ allowedOrigins: ["app.example.com"] }), TypeError);
 * ```
 */
export interface McpRouteOptions {
  /**
   * The origins whose browser pages may use the route, e.g. `["https://app.example.com"]`
   * (scheme, host and port). A request that carries an `Origin` not on this list is refused with
   * 403 before its token is read, as the MCP Streamable HTTP transport asks (DNS rebinding
   * protection); one without `Origin` (an MCP client that is not a browser page) is served.
   * @default [] (every request that carries an Origin is refused)
   */
  allowedOrigins?: readonly string[];
}

/**
 * Makes the MCP route, for `createApp`'s `mcp` option (which needs a server `secret`). Each app
 * it is given to mounts its own server: its tool list (made on the first `tools/list`) and the
 * calls `notifications/cancelled` can cancel.
 *
 * @param options The origins allowed.
 * @returns The route.
 * @throws {TypeError} When `allowedOrigins` lists something that is not an http or https origin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { createApp } from "@tool-boundary/core/hono";
 * import { mcpRoute } from "@tool-boundary/core/mcp";
 *
 * const app = createApp({
 *   boundary: new ToolBoundary({ tools: [] }),
 *   agentToken: "agent-token-0123456789",
 *   harnessToken: "harness-token-0123456789",
 *   secret: "server-secret-0123456789-0123456789",
 *   mcp: mcpRoute({ allowedOrigins: ["https://app.example.com"] }),
 * });
 * const res = await app.request("/v1/runs/run-1/mcp", {
 *   method: "POST",
 *   headers: { origin: "https://evil.example", "content-type": "application/json" },
 *   body: "{}",
 * });
 * assert.equal(res.status, 403);
 * ```
 */
export function mcpRoute(options: McpRouteOptions = {}): McpRoute {
  const precheck = originCheck(originList(options.allowedOrigins));
  return Object.freeze({
    mount(app: McpMount): McpHandlers {
      const server = mcpServer(app);
      return {
        precheck,
        unauthenticated: mcpUnauthenticated,
        handle: (c) => serveMcp(c, server),
      };
    },
  });
}
