/**
 * The HTTP API: a Hono app over a {@linkcode ToolBoundary}. Web APIs and Hono only, so it runs on
 * Cloudflare Workers, Deno, Bun and anything else that speaks `fetch`.
 *
 * Routes: `POST /v1/runs`, `GET /v1/runs/{runId}`, `POST /v1/runs/{runId}/tool-calls`,
 * `POST /v1/runs/{runId}/mcp` (MCP, with a server `secret`),
 * `GET /v1/runs/{runId}/tool-calls/{toolCallId}`, `POST /v1/runs/{runId}/end`, `GET /v1/tools`,
 * `GET /healthz`, `GET /openapi.json`, and with an `inspector` (from
 * `@tool-boundary/core/inspector`) the run inspector's page at `GET /inspect`. Two bearer tokens:
 * the agent token may only submit tool calls, the harness token may do everything; with a
 * `secret`, each started run also gets its own agent token, valid on that run only. Every error is
 * JSON
 * (`{ status: "ERROR", code, message }`) with the status from {@linkcode HTTP_STATUS_BY_CODE}.
 *
 * Every route is one entry of a route table, which the app registers, the OpenAPI document
 * describes and the `405 Method Not Allowed` answers (with `Allow`) are derived from.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { createApp } from "@tool-boundary/core/hono";
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
 * });
 * const harness = { authorization: "Bearer harness-token-0123456789", "content-type": "application/json" };
 * const started = await app.request("/v1/runs", {
 *   method: "POST", headers: harness, body: JSON.stringify({ ttlMs: 60_000 }),
 * });
 * assert.equal(started.status, 201);
 * const run = await started.json();
 * const res = await app.request(`/v1/runs/${run.runId}/tool-calls`, {
 *   method: "POST",
 *   headers: { authorization: "Bearer agent-token-0123456789", "content-type": "application/json" },
 *   body: JSON.stringify({ toolCallId: "call_1", toolName: "echo", input: { text: "hi" } }),
 * });
 * assert.equal(res.status, 200);
 * assert.deepEqual(await res.json(), {
 *   status: "READY", toolCallId: "call_1", evidence: "EVIDENCE_FOUND", scope: "echo", content: "hi",
 * });
 * const wrongMethod = await app.request(`/v1/runs/${run.runId}/tool-calls`, { method: "GET" });
 * assert.equal(wrongMethod.status, 405);
 * assert.equal(wrongMethod.headers.get("allow"), "POST");
 * ```
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { methodNotAllowed } from "hono/method-not-allowed";
import { requestId } from "hono/request-id";
import type { ToolBoundary } from "../core/boundary.ts";
import { BoundaryError } from "../core/errors.ts";
import type { InspectorApp } from "../inspector/types.ts";
import { accessGuards, type AppEnv, type Role } from "./auth.ts";
import {
  type BodySize,
  CITATIONS_BODY_BYTES,
  CONTROL_BODY_BYTES,
  jsonBody,
  toolCallBodyLimit,
} from "./body.ts";
import { mcpServer } from "../mcp/server.ts";
import { originGuard, originList, withoutChallenge } from "./mcp_guards.ts";
import { buildOpenApi } from "./openapi.ts";
import { pathGuards, type RouteDeps, ROUTES, toolList } from "./routes.ts";
import { Signer, verifyRunToken } from "./run_token.ts";
import {
  type AnyErrorCode,
  errorResponse,
  type ErrorStatus,
  HTTP_ERROR_CODES,
  HTTP_ERROR_MESSAGES,
  HTTP_STATUS_BY_CODE,
  type HttpErrorCode,
} from "./status.ts";

export {
  type AnyErrorCode,
  type AppEnv,
  type ErrorStatus,
  HTTP_ERROR_CODES,
  HTTP_ERROR_MESSAGES,
  HTTP_STATUS_BY_CODE,
  type HttpErrorCode,
  type Role,
};

// `deno doc --lint` on this entry alone counts every type it does not export as private, also
// the package root's and Hono's (denoland/deno#27364); these name them for the docs.
/**
 * {@linkcode ToolBoundary} of `@tool-boundary/core`.
 * @internal
 */
type Boundary = ToolBoundary;
/**
 * What {@linkcode createApp} returns: Hono's own `Hono<AppEnv>`, to serve with `app.fetch` or
 * mount in another Hono app with `app.route()`.
 * @internal
 */
export type BoundaryApp = Hono<AppEnv>;

/**
 * Options of {@linkcode createApp}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { createApp, type CreateAppOptions } from "@tool-boundary/core/hono";
 *
 * const errors: string[] = [];
 * const options: CreateAppOptions = {
 *   boundary: new ToolBoundary({ tools: [] }),
 *   agentToken: ["agent-token-0123456789", "agent-token-next-0123456789"], // rotation
 *   harnessToken: "harness-token-0123456789",
 *   toolCallBodyBytes: 4096,
 *   info: { title: "my tools", version: "2.0.0" },
 *   onError: (_error, requestId) => errors.push(requestId),
 * };
 * const doc = await (await createApp(options).request("/openapi.json")).json();
 * assert.deepEqual([doc.info.title, doc.info.version], ["my tools", "2.0.0"]);
 * assert.deepEqual(errors, []);
 * ```
 */
export interface CreateAppOptions {
  /** The boundary to serve. */
  boundary: Boundary;
  /** Bearer token(s) of the agent role: may only submit tool calls. At least 16 characters. */
  agentToken: string | readonly string[];
  /** Bearer token(s) of the harness role: may do everything. At least 16 characters. */
  harnessToken: string | readonly string[];
  /**
   * Largest tool-call body accepted, in bytes, checked before the body is parsed.
   * @default toolCallBodyLimit(boundary.limits)
   */
  toolCallBodyBytes?: number;
  /** OpenAPI `info`. @default { title: "tool-boundary", version: "0.1.0" } */
  info?: { title: string; version: string };
  /** Receives unexpected errors (500s and store failures) for logs; never shown to a client. */
  onError?: (error: unknown, requestId: string) => void;
  /**
   * The server secret (at least 32 characters; the same on every instance): signs run tokens
   * (`POST /v1/runs` then answers an `agentToken` valid on that run only, until its deadline,
   * and never on a later run started under the same ID)
   * and MCP session IDs. Without it there are no run tokens and `POST /v1/runs/{runId}/mcp`
   * answers 404. Nothing signed is stored; a new secret revokes every run token and session.
   */
  secret?: string;
  /**
   * The run inspector to serve at `/inspect`: `runInspector()` of
   * `@tool-boundary/core/inspector`, a static page (no data of its own) that asks for the harness
   * token and shows a run, its calls and their records through the JSON API. Its own entry, so
   * an app without it does not load it.
   * @default none: `/inspect` is a 404
   */
  inspector?: InspectorApp;
  /**
   * The origins whose browser pages may use the MCP route `POST /v1/runs/{runId}/mcp`, e.g.
   * `["https://app.example.com"]` (scheme, host and port). A request that carries an `Origin`
   * not on this list is refused with 403 before its token is read, as the MCP Streamable HTTP
   * transport asks (DNS rebinding protection); one without `Origin` (an MCP client that is not a
   * browser page) is served. Other routes do not read `Origin`.
   * @default [] (every request that carries an Origin is refused on the MCP route)
   */
  allowedOrigins?: readonly string[];
}

/**
 * Creates the Hono app. Tokens are required (fail closed): an app without them cannot be made.
 *
 * @param options The boundary, the two roles' tokens, limits and hooks.
 * @returns The app; serve `app.fetch` on any runtime.
 * @throws {TypeError} When a token is missing, shorter than 16 characters, not a valid bearer
 *   token, or used by both roles, when `secret` is shorter than 32 characters, or when
 *   `allowedOrigins` lists something that is not an http or https origin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { createApp } from "@tool-boundary/core/hono";
 *
 * const app = createApp({
 *   boundary: new ToolBoundary({ tools: [] }),
 *   agentToken: "agent-token-0123456789",
 *   harnessToken: "harness-token-0123456789",
 * });
 * assert.equal((await app.request("/healthz")).status, 200);
 * const denied = await app.request("/v1/tools", {
 *   headers: { authorization: "Bearer agent-token-0123456789" },
 * });
 * assert.equal(denied.status, 403);
 * assert.equal((await denied.json()).code, "FORBIDDEN");
 * assert.throws(
 *   () => createApp({ boundary: new ToolBoundary({ tools: [] }), agentToken: "short", harnessToken: "" }),
 *   TypeError,
 * );
 * ```
 */
export function createApp(options: CreateAppOptions): BoundaryApp {
  const { boundary } = options;
  if (!boundary || typeof boundary.invoke !== "function") {
    throw new TypeError("Cannot create app: options.boundary must be a ToolBoundary");
  }
  const signer = options.secret === undefined ? null : new Signer(options.secret);
  const mcpOrigins = originGuard(originList(options.allowedOrigins));
  const guardsFor = accessGuards(
    options,
    signer === null ? undefined : {
      scope: async (token) => {
        const claims = await verifyRunToken(signer, token, Date.now());
        return claims === null ? null : { runId: claims.runId, startedAt: claims.startedAt };
      },
    },
  );
  const bodyBytes: Record<BodySize, number> = {
    control: CONTROL_BODY_BYTES,
    toolCall: options.toolCallBodyBytes ?? toolCallBodyLimit(boundary.limits),
    citations: CITATIONS_BODY_BYTES,
  };
  const info = options.info ?? { title: "tool-boundary", version: "0.1.0" };
  const deps: RouteDeps = {
    boundary,
    openapi: buildOpenApi(ROUTES, info),
    tools: toolList(boundary),
    signer,
    mcp: signer === null ? null : mcpServer(boundary, signer, bodyBytes.toolCall, info),
    index: {
      name: info.title,
      version: info.version,
      openapi: "/openapi.json",
      routes: ROUTES.map(({ method, path, summary }) => ({
        method: method.toUpperCase(),
        path: path.replace(/:(\w+)/g, "{$1}"),
        summary,
      })),
    },
    home: options.inspector ? "inspect" : null,
  };
  const report = (error: unknown, c: Context<AppEnv>) => {
    try {
      options.onError?.(error, c.get("requestId"));
    } catch {
      // A logging hook must never change a response.
    }
  };

  const app = new Hono<AppEnv>();
  app.use(requestId());
  app.use(async (c, next) => {
    await next();
    // Records hold raw tool data: never cached by a proxy, never sniffed by a browser.
    c.res.headers.set("Cache-Control", "no-store");
    c.res.headers.set("X-Content-Type-Options", "nosniff");
  });
  // A path that some route serves, with a method none does: 405 with the methods that are.
  app.use(methodNotAllowed({
    app,
    onMethodNotAllowed: (c, methods) => {
      c.header("Allow", methods.join(", "));
      return errorResponse(c, "METHOD_NOT_ALLOWED");
    },
  }));

  // Each route behind its guards, in this order: (the MCP route's Origin), token and role, path
  // parameters, body.
  for (const route of ROUTES) {
    const access = guardsFor(route.access);
    app.on(
      route.method.toUpperCase(),
      [route.path],
      ...(route.mcp ? [mcpOrigins, ...access.map(withoutChallenge)] : access),
      ...pathGuards(route.path),
      ...(route.body === undefined ? [] : jsonBody(route.body, bodyBytes[route.body.size])),
      (c) => route.handle(c, deps),
    );
  }

  if (options.inspector !== undefined) app.route("/", options.inspector);

  app.notFound((c) => errorResponse(c, "NOT_FOUND"));
  app.onError((error, c) => {
    if (error instanceof BoundaryError) {
      if (error.code === "STORE_UNAVAILABLE") report(error, c);
      return errorResponse(c, error.code);
    }
    if (error instanceof HTTPException) {
      // Hono's own refusals: malformed JSON (400) and bearer-auth (which carries our response).
      if (error.status === 401) {
        c.header(
          "WWW-Authenticate",
          error.getResponse().headers.get("WWW-Authenticate") ?? "Bearer",
        );
        return errorResponse(c, "UNAUTHENTICATED");
      }
      if (error.status === 400) return errorResponse(c, "INVALID_REQUEST");
      if (error.status === 413) return errorResponse(c, "REQUEST_TOO_LARGE");
    }
    // A budget or TTL the boundary refused as out of range.
    if (error instanceof RangeError) return errorResponse(c, "INVALID_REQUEST");
    report(error, c);
    return errorResponse(c, "INTERNAL_ERROR");
  });
  return app;
}
