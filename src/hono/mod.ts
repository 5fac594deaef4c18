/**
 * The HTTP API: a Hono app over a {@linkcode ToolBoundary}. Web APIs and Hono only, so it runs on
 * Cloudflare Workers, Deno, Bun and anything else that speaks `fetch`.
 *
 * Routes: `POST /v1/runs`, `GET /v1/runs/{runId}`, `POST /v1/runs/{runId}/tool-calls`,
 * `GET /v1/runs/{runId}/tool-calls/{toolCallId}`, `POST /v1/runs/{runId}/end`, `GET /v1/tools`,
 * `GET /healthz`, `GET /openapi.json`; with an `mcp` route (from `@tool-boundary/core/mcp`) and a
 * server `secret`, MCP at `POST /v1/runs/{runId}/mcp`; and with an `inspector` (from
 * `@tool-boundary/core/inspector`) the run inspector's page at `GET /inspect`. The MCP route and
 * the inspector are entries of their own, so an app (a Worker's bundle) without them does not
 * carry them. Two bearer tokens:
 * the agent token may only submit tool calls, the harness token may do everything; with a
 * `secret`, each started run also gets its own agent token, valid on that run only. Every error is
 * JSON
 * (`{ status: "ERROR", code, message }`) with the status from {@linkcode HTTP_STATUS_BY_CODE}.
 *
 * Every route is one entry of a route table, which the app registers, the OpenAPI document
 * describes and the `405 Method Not Allowed` answers (with `Allow`) are derived from. Each route
 * is one handler that runs its checks in turn (token, path, body) as plain functions, and the
 * documents (OpenAPI, the tool list) are made on their first request: a request pays for what it
 * uses, and a cold start for nothing it does not.
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
import type { Context, Hono, MiddlewareHandler } from "hono";
import { HonoBase } from "hono/hono-base";
import { TrieRouter } from "hono/router/trie-router";
import { HTTPException } from "hono/http-exception";
import type { ToolBoundary } from "../core/boundary.ts";
import { capabilitiesOf } from "../core/capabilities.ts";
import { BoundaryError } from "../core/errors.ts";
import type { InspectorApp } from "../inspector/types.ts";
import type { McpRoute } from "../mcp/types.ts";
import { accessGuards, type AppEnv, type Guard, type Role } from "./auth.ts";
import {
  type BodySize,
  CITATIONS_BODY_BYTES,
  CONTROL_BODY_BYTES,
  jsonBody,
  toolCallBodyLimit,
} from "./body.ts";
import { pathGuards, type RouteDeps, ROUTES, toolList } from "./routes.ts";
import { newSessionId, Signer, verifyRunToken, verifySessionId } from "./run_token.ts";
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
  /**
   * Receives unexpected errors (500s) and the failures of the services behind a 503 (the store,
   * the timestamp authority, the archive: STORE_UNAVAILABLE, TIMESTAMP_UNAVAILABLE,
   * ARCHIVE_UNAVAILABLE) for logs; never shown to a client.
   */
  onError?: (error: unknown, requestId: string) => void;
  /**
   * The server secret (at least 32 characters; the same on every instance): signs run tokens
   * (`POST /v1/runs` then answers an `agentToken` valid on that run only, until its deadline,
   * and never on a later run started under the same ID)
   * and MCP session IDs. Without it there are no run tokens and no MCP route. Nothing signed is
   * stored; a new secret revokes every run token and session. Each app keeps the MACs of the
   * tokens and sessions it signed or checked in memory (at most 4,096), so one seen before costs
   * no WebCrypto call; the claims of a token are checked on every request.
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
   * The MCP route to serve at `POST /v1/runs/{runId}/mcp`: `mcpRoute()` of
   * `@tool-boundary/core/mcp` (its options name the browser origins allowed). It needs `secret`,
   * which signs its session IDs. Its own entry, so an app without it does not load it.
   * @default none: `POST /v1/runs/{runId}/mcp` is a 404
   */
  mcp?: McpRoute;
}

/**
 * Creates the Hono app. Tokens are required (fail closed): an app without them cannot be made.
 *
 * @param options The boundary, the two roles' tokens, limits and hooks.
 * @returns The app; serve `app.fetch` on any runtime.
 * @throws {TypeError} When a token is missing, shorter than 16 characters, not a valid bearer
 *   token, or used by both roles, when `secret` is shorter than 32 characters, or when `mcp` is
 *   given without `secret` or is not a route of `mcpRoute()`.
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
  const mcpOption = options.mcp;
  if (mcpOption !== undefined && typeof mcpOption?.mount !== "function") {
    throw new TypeError(
      "Cannot create app: options.mcp must be mcpRoute() of @tool-boundary/core/mcp",
    );
  }
  if (mcpOption !== undefined && signer === null) {
    throw new TypeError(
      "Cannot create app: options.mcp needs options.secret (it signs MCP session IDs)",
    );
  }
  const guardsFor = accessGuards(
    options,
    signer === null ? undefined : {
      scope: (token) => {
        const claims = verifyRunToken(signer, token, Date.now());
        const scopeOf = (claims: { runId: string; startedAt: number } | null) =>
          claims === null ? null : { runId: claims.runId, startedAt: claims.startedAt };
        return claims instanceof Promise ? claims.then(scopeOf) : scopeOf(claims);
      },
    },
  );
  const bodyBytes: Record<BodySize, number> = {
    control: CONTROL_BODY_BYTES,
    toolCall: options.toolCallBodyBytes ?? toolCallBodyLimit(boundary.limits),
    citations: CITATIONS_BODY_BYTES,
  };
  const info = options.info ?? { title: "tool-boundary", version: "0.1.0" };
  const mcp = mcpOption === undefined || signer === null ? null : mcpOption.mount({
    boundary,
    maxBytes: bodyBytes.toolCall,
    info,
    sessions: {
      issue: (runId) => newSessionId(signer, runId),
      check: (sessionId, runId) => verifySessionId(signer, sessionId, runId),
    },
  });
  // The MCP route is served, documented and listed only when it is given.
  const served = ROUTES.filter((route) => !route.mcp || mcp !== null);
  let openapi: Promise<Record<string, unknown>> | undefined;
  let tools: ReturnType<RouteDeps["tools"]> | undefined;
  let index: ReturnType<RouteDeps["index"]> | undefined;
  // The store is the boundary's for its life: a route whose capability it lacks is NOT_FOUND.
  const capabilities = capabilitiesOf(boundary.store);
  const deps: RouteDeps = {
    boundary,
    // Loaded on the first request for it: a cold start builds none of the response schemas.
    openapi: () =>
      openapi ??= import("./openapi.ts").then(({ buildOpenApi }) => buildOpenApi(served, info)),
    tools: () => tools ??= toolList(boundary),
    signer,
    mcp,
    index: () =>
      index ??= {
        name: info.title,
        version: info.version,
        openapi: "/openapi.json",
        routes: served.map(({ method, path, summary }) => ({
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

  /**
   * One route: the request stamped, its checks in turn, then its handler. Synchronous until a
   * check or the handler is not: every turn of the event loop a request does not take is time.
   */
  const serve = (
    guards: readonly Guard[],
    handle: (c: Context<AppEnv>) => Response | Promise<Response>,
  ) => {
    const from = (c: Context<AppEnv>, first: number): Response | Promise<Response> => {
      for (let i = first; i < guards.length; i++) {
        const checked = guards[i]!(c);
        if (checked instanceof Promise) {
          return checked.then((refusal) => refusal ?? from(c, i + 1));
        }
        if (checked !== undefined) return checked;
      }
      return handle(c);
    };
    return (c: Context<AppEnv>): Response | Promise<Response> => {
      identify(c);
      const answer = from(c, 0);
      return answer instanceof Promise ? answer.then((res) => stamped(c, res)) : stamped(c, answer);
    };
  };

  // TrieRouter alone: the default (RegExpRouter behind SmartRouter) builds one regular expression
  // of every route on the first request, which a cold Worker pays for before it answers; this
  // one matches as strictly (no trailing slash) and costs about the same per request when warm.
  const app: Hono<AppEnv> = new HonoBase<AppEnv>({ router: new TrieRouter() });
  // Each route behind its checks, in this order: (the MCP route's Origin), token and role, path
  // parameters, body. One handler per route, no middleware: Hono then runs it directly.
  for (const route of served) {
    const guards = [
      ...(route.mcp ? [mcp!.precheck] : []),
      ...guardsFor(route.access, route.mcp ? mcp!.unauthenticated : undefined),
      ...pathGuards(route.path),
      ...(route.body === undefined ? [] : [jsonBody(route.body, bodyBytes[route.body.size])]),
    ];
    const handle = route.needs === undefined || capabilities.includes(route.needs)
      ? (c: Context<AppEnv>) => route.handle(c, deps)
      : (c: Context<AppEnv>) => errorResponse(c, "NOT_FOUND");
    app.on(route.method.toUpperCase(), route.path, serve(guards, handle));
  }

  if (options.inspector !== undefined) {
    // The inspector's own app, under the same request ID and headers.
    const stamping: MiddlewareHandler<AppEnv> = async (c, next) => {
      identify(c);
      await next();
      stamped(c, c.res);
    };
    app.use("/inspect", stamping);
    app.use("/inspect/*", stamping);
    app.route("/", options.inspector);
  }

  // A path that some route serves, with a method none does: 405 with the methods that are.
  const allowedOn = allowedMethods(app);
  app.notFound((c) => {
    identify(c);
    const allowed = allowedOn(c.req.path);
    if (allowed.length === 0 || allowed.includes(c.req.method)) {
      return stamped(c, errorResponse(c, "NOT_FOUND"));
    }
    c.header("Allow", allowed.join(", "));
    return stamped(c, errorResponse(c, "METHOD_NOT_ALLOWED"));
  });
  app.onError((error, c) => stamped(c, answerError(error, c)));
  /** The answer to an error a route threw: its code, or INTERNAL_ERROR (and the log hook). */
  const answerError = (error: Error, c: Context<AppEnv>): Response => {
    if (error instanceof BoundaryError) {
      // A service that did not answer (the store, a timestamp authority, an archive): the
      // operator's to see, as the client gets only the code.
      if (HTTP_STATUS_BY_CODE[error.code] === 503) report(error, c);
      return errorResponse(c, error.code);
    }
    if (error instanceof HTTPException) {
      // Hono's own refusals of a malformed or oversized request.
      if (error.status === 400) return errorResponse(c, "INVALID_REQUEST");
      if (error.status === 413) return errorResponse(c, "REQUEST_TOO_LARGE");
    }
    // A budget or TTL the boundary refused as out of range.
    if (error instanceof RangeError) return errorResponse(c, "INVALID_REQUEST");
    report(error, c);
    return errorResponse(c, "INTERNAL_ERROR");
  };
  return app;
}

/**
 * Gives a request its ID, before anything answers: the `X-Request-Id` it sent, when that is 1 to
 * 255 of `A-Z a-z 0-9 _ - =`, else a new UUID.
 */
function identify(c: Context<AppEnv>): void {
  if (c.get("requestId") !== undefined) return;
  const sent = c.req.header("x-request-id");
  c.set(
    "requestId",
    sent !== undefined && sent.length > 0 && sent.length <= 255 && !UNSAFE_ID.test(sent)
      ? sent
      : crypto.randomUUID(),
  );
}

/**
 * What every response of the app carries: the request ID, and headers that keep records (raw
 * tool data) out of caches and away from content sniffing. Set on the response once it is made:
 * a response made with one header and given three more costs a fraction of one made with four
 * (about 0.7 µs against 7 µs in Deno).
 */
function stamped(c: Context<AppEnv>, res: Response): Response {
  res.headers.set("X-Request-Id", c.get("requestId"));
  res.headers.set("Cache-Control", "no-store");
  res.headers.set("X-Content-Type-Options", "nosniff");
  return res;
}

const UNSAFE_ID = /[^\w\-=]/;

/**
 * The methods the app serves on a path, `HEAD` with each `GET`, in the order the routes were
 * registered; the table is made on the first request that needs it.
 */
function allowedMethods(app: Hono<AppEnv>): (path: string) => string[] {
  let table: [RegExp, string][] | undefined;
  return (path) => {
    table ??= app.routes.filter((route) => route.method !== "ALL").map((route) => [
      new RegExp(
        `^${
          route.path.split("/").map((part) =>
            part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
          ).join("/")
        }$`,
      ),
      route.method,
    ]);
    const methods = new Set<string>();
    for (const [pattern, method] of table) {
      if (!pattern.test(path)) continue;
      methods.add(method);
      if (method === "GET") methods.add("HEAD");
    }
    return [...methods];
  };
}
