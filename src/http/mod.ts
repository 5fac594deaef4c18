/**
 * The HTTP API: a Hono app over a {@linkcode ToolBoundary}. Web APIs and Hono only, so it runs on
 * Cloudflare Workers, Deno, Bun and anything else that speaks `fetch`.
 *
 * Routes: `POST /v1/runs`, `POST /v1/runs/{runId}/tool-calls`,
 * `GET /v1/runs/{runId}/tool-calls/{toolCallId}`, `POST /v1/runs/{runId}/end`, `GET /v1/tools`,
 * `GET /healthz`, `GET /openapi.json`. Two bearer tokens: the agent token may only submit tool
 * calls, the harness token may do everything. Every error is JSON
 * (`{ status: "ERROR", code, message }`) with the status from {@linkcode HTTP_STATUS_BY_CODE}.
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
 * const run = await (await app.request("/v1/runs", {
 *   method: "POST", headers: harness, body: JSON.stringify({ ttlMs: 60_000 }),
 * })).json();
 * const res = await app.request(`/v1/runs/${run.runId}/tool-calls`, {
 *   method: "POST",
 *   headers: { authorization: "Bearer agent-token-0123456789", "content-type": "application/json" },
 *   body: JSON.stringify({ toolCallId: "call_1", toolName: "echo", input: { text: "hi" } }),
 * });
 * assert.equal(res.status, 200);
 * assert.deepEqual(await res.json(), {
 *   status: "READY", toolCallId: "call_1", evidence: "EVIDENCE_FOUND", scope: "echo", content: "hi",
 * });
 * ```
 *
 * @module
 */
import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import { validator } from "hono/validator";
import * as v from "valibot";
import type { ToolBoundary } from "../core/boundary.ts";
import { BoundaryError, type ErrorCode } from "../core/errors.ts";
import { isSafeRunId, isSafeToolCallId } from "../core/ids.ts";
import { toInputIssues } from "../core/issues.ts";
import type { BoundaryResult, InputIssue, Limits, RunContext } from "../core/types.ts";
import { buildOpenApi, ROUTES } from "./openapi.ts";
import { perToolOf, StartRunBody, ToolCallBody } from "./schemas.ts";
import {
  type AnyErrorCode,
  type ErrorStatus,
  HTTP_ERROR_CODES,
  HTTP_ERROR_MESSAGES,
  HTTP_STATUS_BY_CODE,
  type HttpErrorCode,
  messageFor,
} from "./status.ts";

export {
  type AnyErrorCode,
  type ErrorStatus,
  HTTP_ERROR_CODES,
  HTTP_ERROR_MESSAGES,
  HTTP_STATUS_BY_CODE,
  type HttpErrorCode,
};

/** Which token a request carried. */
export type Role = "agent" | "harness";

/** The Hono environment of the app: the request ID and the caller's role. */
export interface AppEnv {
  /** Set by the middleware. */
  Variables: { requestId: string; role: Role };
}

/**
 * What {@linkcode createApp} returns: Hono's own `Hono<AppEnv>`, to serve with `app.fetch` or
 * mount in another Hono app with `app.route()`.
 *
 * @internal Only so that `deno doc --lint` passes: it counts every npm type as private.
 */
export type BoundaryApp = Hono<AppEnv>;

/** Options of {@linkcode createApp}. */
export interface CreateAppOptions {
  /** The boundary to serve. */
  boundary: ToolBoundary;
  /** Bearer token(s) of the agent role: may only submit tool calls. At least 16 characters. */
  agentToken: string | readonly string[];
  /** Bearer token(s) of the harness role: may do everything. At least 16 characters. */
  harnessToken: string | readonly string[];
  /**
   * Largest tool-call body accepted, in bytes, checked before the body is parsed.
   * @default toolCallBodyLimit(boundary.limits)
   */
  toolCallBodyBytes?: number;
  /** Run contexts cached per app, so a tool call need not read its run from the store. @default 1024 */
  runCacheSize?: number;
  /** OpenAPI `info`. @default { title: "tool-boundary", version: "0.1.0" } */
  info?: { title: string; version: string };
  /** Receives unexpected errors (500s and store failures) for logs; never shown to a client. */
  onError?: (error: unknown, requestId: string) => void;
}

/** Room in a body for everything but the input: IDs, tool name, keys, whitespace. */
export const ENVELOPE_OVERHEAD_BYTES = 8192;
/** Bodies of the harness routes (start and end a run) are small. */
export const CONTROL_BODY_BYTES = 65_536;
const MIN_TOKEN_LENGTH = 16;
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]+=*$/;

/**
 * The largest tool-call body worth parsing, derived from the request byte limit.
 *
 * The limit (`requestBytes`) applies to the input as the boundary stores it (compact JSON, UTF-8),
 * but the body carries it encoded once more: as JSON text inside a JSON string (OpenAI-style
 * arguments), escaped by an encoder that may escape every non-ASCII character. Per stored byte
 * that costs at most 3.5 body bytes (`"` -> `\"` is 2x; a 2-byte `é` stored raw is `\u00e9` in
 * the inner text and `\\u00e9` in the body, 7 bytes; an emoji is 4 stored bytes and 14 body
 * bytes). So 4x the limit, plus room for the envelope, admits every input within the limit that
 * a standard encoder produces; the boundary then checks the exact stored size and answers
 * REQUEST_TOO_LARGE. Anything bigger is refused here, before it is read into memory.
 *
 * @param limits The boundary's limits (only `requestBytes` is used).
 * @returns `4 * requestBytes + ENVELOPE_OVERHEAD_BYTES`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolCallBodyLimit } from "@tool-boundary/core/hono";
 * assert.equal(toolCallBodyLimit({ requestBytes: 65_536 }), 270_336);
 * ```
 */
export function toolCallBodyLimit(limits: Pick<Limits, "requestBytes">): number {
  return 4 * limits.requestBytes + ENVELOPE_OVERHEAD_BYTES;
}

/**
 * Creates the Hono app. Tokens are required (fail closed): an app without them cannot be made.
 *
 * @param options The boundary, the two roles' tokens, limits and hooks.
 * @returns The app; serve `app.fetch` on any runtime.
 * @throws {TypeError} When a token is missing, shorter than 16 characters, not a valid bearer
 *   token, or used by both roles.
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
 * const health = await app.request("/healthz");
 * assert.deepEqual([health.status, await health.json()], [200, { status: "ok" }]);
 * const denied = await app.request("/v1/tools", {
 *   headers: { authorization: "Bearer agent-token-0123456789" },
 * });
 * assert.equal(denied.status, 403);
 * assert.equal((await denied.json()).code, "FORBIDDEN");
 * ```
 */
export function createApp(options: CreateAppOptions): BoundaryApp {
  const { boundary } = options;
  if (!boundary || typeof boundary.invoke !== "function") {
    throw new TypeError("Cannot create app: options.boundary must be a ToolBoundary");
  }
  const agentTokens = tokenList("agentToken", options.agentToken);
  const harnessTokens = tokenList("harnessToken", options.harnessToken);
  if (agentTokens.some((token) => harnessTokens.includes(token))) {
    throw new TypeError("Cannot create app: the agent and harness tokens must differ");
  }
  const agentKeys = agentTokens.map((token) => encoder.encode(token));
  const harnessKeys = harnessTokens.map((token) => encoder.encode(token));
  const toolCallBytes = options.toolCallBodyBytes ?? toolCallBodyLimit(boundary.limits);
  const runs = new RunCache(options.runCacheSize ?? 1024);
  const openapi = buildOpenApi(options.info ?? { title: "tool-boundary", version: "0.1.0" });
  const tools = {
    tools: boundary.describeTools().map((tool) => ({
      name: tool.name,
      description: tool.description ?? null,
      readOnly: tool.readOnly,
      inputSchema: tool.inputSchema,
    })),
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

  const authenticate = bearerAuth<AppEnv>({
    verifyToken: (token, c) => {
      // Compare against every token so timing says nothing about which role matched.
      const given = encoder.encode(token);
      let role: Role | null = null;
      for (const candidate of harnessKeys) {
        if (constantTimeEqual(candidate, given) && role === null) role = "harness";
      }
      for (const candidate of agentKeys) {
        if (constantTimeEqual(candidate, given) && role === null) role = "agent";
      }
      if (role !== null) c.set("role", role);
      return role !== null;
    },
    noAuthenticationHeader: { message: (c) => errorResponse(c, "UNAUTHENTICATED") },
    invalidAuthenticationHeader: { message: (c) => errorResponse(c, "UNAUTHENTICATED") },
    invalidToken: { message: (c) => errorResponse(c, "UNAUTHENTICATED") },
  });
  const harnessOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (c.get("role") !== "harness") return errorResponse(c, "FORBIDDEN");
    await next();
  };
  const jsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
    // Without this, Hono's validator would read a non-JSON body as `{}`.
    const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
    if (!/^application\/([\w.-]+\+)?json$/.test(type)) {
      return errorResponse(c, "UNSUPPORTED_MEDIA_TYPE");
    }
    await next();
  };
  const limit = (maxSize: number, toolCall: boolean) =>
    bodyLimit({
      maxSize,
      onError: (c) =>
        toolCall
          ? c.json(callError(null, "REQUEST_TOO_LARGE"), 413)
          : errorResponse(c, "REQUEST_TOO_LARGE"),
    });
  const safePath =
    (...names: ("runId" | "toolCallId")[]): MiddlewareHandler<AppEnv> => async (c, next) => {
      for (const name of names) {
        const value = c.req.param(name);
        const safe = name === "runId" ? isSafeRunId(value) : isSafeToolCallId(value);
        if (!safe) {
          return errorResponse(c, name === "runId" ? "INVALID_RUN_ID" : "INVALID_TOOL_CALL_ID");
        }
      }
      await next();
    };
  app.post(
    "/v1/runs",
    authenticate,
    harnessOnly,
    jsonBody,
    limit(CONTROL_BODY_BYTES, false),
    jsonBodyOf(StartRunBody, (c, issues) => {
      if (issues === null) return errorResponse(c, "INVALID_REQUEST");
      return topKey(issues) === "runId"
        ? errorResponse(c, "INVALID_RUN_ID")
        : errorResponse(c, "INVALID_REQUEST", toInputIssues(issues));
    }),
    async (c) => {
      const { data: body, sent } = c.req.valid("json");
      const budget = perToolOf(sent);
      if ("issues" in budget) return errorResponse(c, "INVALID_REQUEST", budget.issues);
      const run = await boundary.startRun({
        ...(body.runId === undefined ? {} : { runId: body.runId }),
        ...(body.deadline === undefined ? {} : {
          deadline: typeof body.deadline === "number" ? body.deadline : Date.parse(body.deadline),
        }),
        ...(body.ttlMs === undefined ? {} : { ttlMs: body.ttlMs }),
        ...(body.budget === undefined ? {} : {
          budget: {
            calls: body.budget.calls,
            ...(budget.perTool === undefined ? {} : { perTool: budget.perTool }),
          },
        }),
      });
      runs.set(run);
      return c.json(run, 201);
    },
  );

  app.post(
    "/v1/runs/:runId/tool-calls",
    authenticate,
    safePath("runId"),
    jsonBody,
    limit(toolCallBytes, true),
    jsonBodyOf(ToolCallBody, (c, issues, sent) => {
      if (issues === null) return errorResponse(c, "INVALID_REQUEST");
      // The codes the boundary itself gives for the same faults, in its preflight order.
      const keys = new Set(issues.map((issue) => topKey([issue])));
      const id = isSafeToolCallId(sent?.toolCallId) ? sent.toolCallId : null;
      for (const [key, code] of CALL_FIELD_CODES) {
        if (keys.has(key)) return c.json(callError(id, code), HTTP_STATUS_BY_CODE[code]);
      }
      return errorResponse(c, "INVALID_REQUEST");
    }),
    async (c) => {
      const runId = c.req.param("runId") ?? "";
      const { data: body, sent } = c.req.valid("json");
      const run = await runs.get(runId, boundary);
      if (run === null) return c.json(callError(body.toolCallId, "RUN_NOT_FOUND"), 404);
      const result = await boundary.invoke(run, {
        toolCallId: body.toolCallId,
        runId: body.runId ?? runId,
        toolName: body.toolName,
        // The input exactly as sent: the schema only checked its type, and the record must
        // hold the request as the agent made it.
        input: sent.input,
      });
      return c.json(result, result.status === "READY" ? 200 : HTTP_STATUS_BY_CODE[result.code]);
    },
  );

  app.get(
    "/v1/runs/:runId/tool-calls/:toolCallId",
    authenticate,
    harnessOnly,
    safePath("runId", "toolCallId"),
    async (c) => {
      const record = await boundary.inspect(c.req.param("runId"), c.req.param("toolCallId"));
      return record === null ? errorResponse(c, "NOT_FOUND") : c.json(record, 200);
    },
  );

  app.post(
    "/v1/runs/:runId/end",
    authenticate,
    harnessOnly,
    safePath("runId"),
    async (c) => {
      const runId = c.req.param("runId");
      // The body is ignored and never read.
      const report = await boundary.endRunReport(runs.take(runId) ?? runId);
      return c.json(report, 200);
    },
  );

  app.get("/v1/tools", authenticate, harnessOnly, (c) => c.json(tools, 200));
  app.get("/healthz", (c) => c.json({ status: "ok" }, 200));
  app.get("/openapi.json", (c) => c.json(openapi, 200));

  const methodsByPath = new Map<string, string[]>();
  for (const route of ROUTES) {
    const path = route.path.replace(/\{(\w+)\}/g, ":$1");
    const methods = methodsByPath.get(path) ?? [];
    methods.push(route.method.toUpperCase(), ...(route.method === "get" ? ["HEAD"] : []));
    methodsByPath.set(path, methods);
  }
  // Registered after the routes, so they only answer methods no route took.
  for (const [path, methods] of methodsByPath) {
    app.all(path, (c) => {
      c.header("Allow", methods.join(", "));
      return errorResponse(c, "METHOD_NOT_ALLOWED");
    });
  }

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

/** An error body with the fixed message and the status from the table. */
function errorResponse(c: Context, code: AnyErrorCode, issues?: InputIssue[]): Response {
  return c.json(
    {
      status: "ERROR",
      code,
      message: messageFor(code),
      ...(issues === undefined ? {} : { issues }),
    },
    HTTP_STATUS_BY_CODE[code],
  );
}

/** A tool-call refusal in the BoundaryResult shape the agent gets from the boundary. */
function callError(toolCallId: string | null, code: ErrorCode): BoundaryResult {
  return { status: "ERROR", toolCallId, code, message: messageFor(code) };
}

const CALL_FIELD_CODES = [
  ["toolCallId", "INVALID_TOOL_CALL_ID"],
  ["runId", "RUN_MISMATCH"],
  ["toolName", "UNKNOWN_TOOL"],
  ["input", "INVALID_INPUT"],
] as const;

/**
 * A JSON body checked with a valibot schema through Hono's validator middleware, parsed once.
 * The handler gets the schema's output and the body exactly as sent. `onInvalid` answers a body
 * that is not a JSON object (`issues` null: valibot's object schema would admit an array) or
 * fails the schema.
 */
function jsonBodyOf<S extends v.GenericSchema>(
  schema: S,
  onInvalid: (
    c: Context<AppEnv>,
    issues: readonly v.BaseIssue<unknown>[] | null,
    sent: Record<string, unknown> | null,
  ) => Response,
) {
  return validator("json", (value: unknown, c: Context<AppEnv>) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return onInvalid(c, null, null);
    }
    const sent = value as Record<string, unknown>;
    const checked = v.safeParse(schema, sent);
    if (!checked.success) return onInvalid(c, checked.issues, sent);
    return { data: checked.output as v.InferOutput<S>, sent };
  });
}

function topKey(issues: readonly v.BaseIssue<unknown>[]): string | null {
  const key = (issues[0]?.path?.[0] as { key?: unknown } | undefined)?.key;
  return typeof key === "string" ? key : null;
}

const encoder = new TextEncoder();

/**
 * Compares a presented token with a configured one in time that depends only on the configured
 * token's length (a server secret's length, not the guess), so timing reveals nothing about how
 * much of a guess was right. Synchronous: hashing both sides with WebCrypto on every request cost
 * about 75 µs per comparison.
 */
function constantTimeEqual(expected: Uint8Array, given: Uint8Array): boolean {
  let diff = expected.length ^ given.length;
  for (let i = 0; i < expected.length; i++) {
    diff |= expected[i]! ^ (given[i] ?? 0);
  }
  return diff === 0;
}

function tokenList(name: string, value: string | readonly string[] | undefined): string[] {
  const list = typeof value === "string" ? [value] : Array.isArray(value) ? [...value] : [];
  if (list.length === 0) {
    throw new TypeError(`Cannot create app: options.${name} is required`);
  }
  for (const token of list) {
    if (
      typeof token !== "string" || token.length < MIN_TOKEN_LENGTH || !TOKEN_PATTERN.test(token)
    ) {
      throw new TypeError(
        `Cannot create app: options.${name} must be a bearer token of at least ${MIN_TOKEN_LENGTH} characters`,
      );
    }
  }
  return list;
}

/**
 * Run contexts by ID, least recently used first out. Contexts are immutable, and the store
 * still checks the run's status and deadline at every begin, so a cached context can only save a
 * read, never admit a call the store would refuse.
 */
class RunCache {
  readonly #max: number;
  readonly #runs = new Map<string, RunContext>();

  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError("Invalid runCacheSize: expected a non-negative integer");
    }
    this.#max = max;
  }

  set(run: RunContext): void {
    if (this.#max === 0) return;
    this.#runs.delete(run.runId);
    this.#runs.set(run.runId, run);
    if (this.#runs.size > this.#max) {
      this.#runs.delete(this.#runs.keys().next().value!);
    }
  }

  async get(runId: string, boundary: ToolBoundary): Promise<RunContext | null> {
    const cached = this.#runs.get(runId);
    if (cached !== undefined) {
      this.set(cached);
      return cached;
    }
    const run = await boundary.getRun(runId);
    if (run !== null) this.set(run);
    return run;
  }

  take(runId: string): RunContext | undefined {
    const run = this.#runs.get(runId);
    this.#runs.delete(runId);
    return run;
  }
}
