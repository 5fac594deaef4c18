/**
 * The MCP route's public types, in a module of their own: `createApp`'s options name
 * {@linkcode McpRoute}, so the app's files import these types of the route and nothing else of
 * it, and an app without the route does not load it.
 *
 * @module
 */
import type { Context } from "hono";
import type { ToolBoundary } from "../core/boundary.ts";
import type { AppEnv } from "../hono/auth.ts";

/**
 * Hono's `Context` of a request of the app, `Context<AppEnv>`, as the route's handlers get it.
 * `deno doc --lint` counts Hono's own types as private when an entry names them
 * (denoland/deno#27364); this names it for the docs.
 * @internal
 */
export type McpContext = Context<AppEnv>;

/**
 * MCP session IDs under the app's server secret: `<random>.<HMAC(secret, runId, random)>`, signed,
 * never stored. The app keeps the MACs it issued or checked (bounded), so a session seen before is
 * checked at once.
 */
export interface McpSessions {
  /**
   * A new session ID bound to a run.
   * @param runId The run in the request's path.
   */
  issue(runId: string): Promise<string>;
  /**
   * Whether a session ID was issued by this server for this run.
   * @param sessionId The `Mcp-Session-Id` header as sent.
   * @param runId The run in the request's path.
   */
  check(sessionId: string, runId: string): boolean | Promise<boolean>;
}

/** What an app gives the MCP route it serves; `createApp` makes it once. */
export interface McpMount {
  /** The boundary the app serves. */
  boundary: ToolBoundary;
  /** The largest request body, in bytes: the app's tool-call body limit. */
  maxBytes: number;
  /** The app's title and version, the route's `serverInfo`. */
  info: { title: string; version: string };
  /** The route's session IDs, under the app's server secret. */
  sessions: McpSessions;
}

/**
 * The route's part of each request, around the app's own: `precheck` before the bearer token is
 * read, `unauthenticated` when it is missing or wrong, `handle` once the token, its role, its run
 * and the path's run ID passed.
 */
export interface McpHandlers {
  /**
   * A refusal before the token is read (an `Origin` not allowed), or `undefined`.
   * @param c The request's context.
   */
  precheck(c: McpContext): Response | undefined;
  /**
   * The route's 401 (no OAuth challenge: it takes a bearer token).
   * @param c The request's context.
   */
  unauthenticated(c: McpContext): Response;
  /**
   * Answers a request that passed every check.
   * @param c The request's context.
   */
  handle(c: McpContext): Promise<Response>;
}

/**
 * The MCP route `POST /v1/runs/{runId}/mcp`, for `createApp`'s `mcp` option: `mcpRoute()` of
 * `@tool-boundary/core/mcp`. `createApp` mounts it once, with what it needs of the app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type McpRoute, mcpRoute } from "@tool-boundary/core/mcp";
 *
 * const route: McpRoute = mcpRoute();
 * assert.equal(typeof route.mount, "function");
 * ```
 */
export interface McpRoute {
  /**
   * Makes the route's handlers for one app.
   * @param app What the app gives the route.
   */
  mount(app: McpMount): McpHandlers;
}
