/**
 * The route table: every route the app serves, once. `createApp` registers each entry behind the
 * guards its access, path parameters and body call for; the OpenAPI document is built from the
 * same entries; and the 405s come from what was registered (Hono's method-not-allowed
 * middleware). Adding a route is adding an entry to {@linkcode ROUTES}: a new path parameter
 * also needs its check in `PATH_PARAMS`, a new body or response shape its schema in
 * `schemas.ts` (listed in `COMPONENTS` there).
 *
 * @module
 */
import type { Context } from "hono";
import type * as v from "valibot";
import type { ToolBoundary } from "../core/boundary.ts";
import { requireCapability } from "../core/capabilities.ts";
import { BoundaryError } from "../core/errors.ts";
import { isSafeRunId, isSafeToolCallId } from "../core/ids.ts";
import { toInputIssues } from "../core/issues.ts";
import { MAX_LIST_RUNS } from "../core/limits.ts";
import type { RunsPage } from "../core/store.ts";
import type { BoundaryResult, RunRef, ToolCallEnvelope } from "../core/types.ts";
import { type AppEnv, type Guard, runOf } from "./auth.ts";
import { bodyOf, type JsonBody, type JsonBodySpec } from "./body.ts";
import type { McpHandlers } from "../mcp/types.ts";
import { type RunVerdict, verifyBundle } from "../verify/verify.ts";
import type { RunBundle } from "../core/ledger.ts";
import { unreadableCallOf } from "../core/run/inspect.ts";
import type { RouteDoc } from "./openapi.ts";
import { type Signer, signRunToken } from "./run_token.ts";
import type {
  Citations,
  Health,
  Index,
  LedgerKey,
  RunCalls,
  StartedRun,
  ToolList,
  Verdict,
} from "./responses.ts";
import {
  citationsBody,
  perToolOf,
  startRunBody,
  toolCallBody,
  type ToolCallBodySchema,
} from "./schemas.ts";
import { type AnyErrorCode, callError, errorResponse, HTTP_STATUS_BY_CODE } from "./status.ts";

/**
 * What the handlers work with, made once per app. The bodies of the documents (the tool list, the
 * OpenAPI document, the index) are made on their first request, not when the app is made: their
 * JSON Schemas cost time that a cold start of a Worker should not pay for a tool call.
 */
export interface RouteDeps {
  /** The boundary served. */
  boundary: ToolBoundary;
  /** The body of `GET /v1/tools`. */
  tools: () => ToolList;
  /** The body of `GET /openapi.json`, built on the first request for it. */
  openapi: () => Promise<Record<string, unknown>>;
  /** Signs run tokens and MCP sessions; `null` without a server secret. */
  signer: Signer | null;
  /** The MCP route's handlers; `null` when it is not served (then it is not registered). */
  mcp: McpHandlers | null;
  /** The body of `GET /`. */
  index: () => Index;
  /** Where `GET /` sends a browser: the run inspector's page when it is served, else nowhere. */
  home: string | null;
}

type Reply = Response | Promise<Response>;

/** One entry of the table: its document, its body (when it takes one) and its handler. */
export interface Route extends RouteDoc {
  /** The JSON body; the guards admit it before the handler runs. */
  body?: JsonBodySpec<v.GenericSchema>;
  /** Answers a request that passed every guard. */
  handle: (c: Context<AppEnv>, deps: RouteDeps) => Reply;
  /**
   * The MCP endpoint: served only with `createApp`'s `mcp` option, whose handlers check the
   * request before its token (`Origin`), answer its 401 (no OAuth challenge) and the request.
   */
  mcp?: true;
}

/** A route with a JSON body: its handler gets the body the guards admitted. */
function route<S extends v.GenericSchema>(
  spec: Omit<RouteDoc, "body"> & {
    body: JsonBodySpec<S>;
    handle: (c: Context<AppEnv>, deps: RouteDeps, body: JsonBody<S>) => Reply;
  },
): Route;
/** A route without a body (one sent is never read). */
function route(
  spec: RouteDoc & { body?: undefined; handle: Route["handle"]; mcp?: true },
): Route;
function route(
  spec: Omit<RouteDoc, "body"> & {
    body?: JsonBodySpec<v.GenericSchema>;
    handle: (c: Context<AppEnv>, deps: RouteDeps, body: JsonBody<never>) => Reply;
    mcp?: true;
  },
): Route {
  const { body, handle, ...doc } = spec;
  return body === undefined
    ? { ...doc, handle: handle as Route["handle"] }
    : { ...doc, body, handle: (c, deps) => handle(c, deps, bodyOf(c)) };
}

/** Path parameters a route may have, each with its check and the code that refuses it. */
const PATH_PARAMS: Readonly<Record<string, [(value: unknown) => boolean, AnyErrorCode]>> = {
  runId: [isSafeRunId, "INVALID_RUN_ID"],
  toolCallId: [isSafeToolCallId, "INVALID_TOOL_CALL_ID"],
};

/**
 * The guard that refuses unsafe path parameters before anything else reads them.
 *
 * @param path A route's path in Hono form.
 * @returns The guard, or none when the path has no parameters.
 * @throws {TypeError} When a parameter has no check in `PATH_PARAMS`.
 */
export function pathGuards(path: string): Guard[] {
  const names = [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
  if (names.length === 0) return [];
  const checks = names.map((name) => {
    const check = Object.hasOwn(PATH_PARAMS, name) ? PATH_PARAMS[name] : undefined;
    if (check === undefined) {
      throw new TypeError(`Cannot create app: no check for the path parameter :${name}`);
    }
    return [name, ...check] as const;
  });
  return [(c) => {
    for (const [name, isSafe, code] of checks) {
      if (!isSafe(c.req.param(name))) return errorResponse(c, code);
    }
    return undefined;
  }];
}

/**
 * The tool listing of a boundary: names, descriptions, read-only flags, input JSON Schemas.
 *
 * @param boundary The boundary.
 * @returns The body of `GET /v1/tools`.
 */
export function toolList(boundary: ToolBoundary): ToolList {
  return {
    tools: boundary.describeTools().map((tool) => ({
      name: tool.name,
      description: tool.description ?? null,
      readOnly: tool.readOnly,
      inputSchema: tool.inputSchema,
    })),
  };
}

// The codes the boundary itself gives for faults of these fields, in its preflight order.
const CALL_FIELD_CODES = [
  ["toolCallId", "INVALID_TOOL_CALL_ID"],
  ["runId", "RUN_MISMATCH"],
  ["toolName", "UNKNOWN_TOOL"],
  ["input", "INVALID_INPUT"],
] as const;

const statusesOf = (codes: readonly (keyof typeof HTTP_STATUS_BY_CODE)[]): number[] => [
  ...new Set(codes.map((code) => HTTP_STATUS_BY_CODE[code])),
];

/** Runs per page of `GET /v1/runs` when the query names no `limit`. */
const RUNS_PAGE = 20;

/** The OpenAPI responses of a route that answers a `BoundaryResult` with these codes' statuses. */
const resultResponses = (codes: readonly (keyof typeof HTTP_STATUS_BY_CODE)[]) =>
  Object.fromEntries(statusesOf(codes).map((status) => [status, "BoundaryResult" as const]));

function topKey(issues: readonly v.BaseIssue<unknown>[]): string | null {
  const key = (issues[0]?.path?.[0] as { key?: unknown } | undefined)?.key;
  return typeof key === "string" ? key : null;
}

/** A tool call's body (submitted or recalled): faults answer as the boundary's preflight does. */
const TOOL_CALL_BODY: JsonBodySpec<ToolCallBodySchema> = {
  schema: toolCallBody,
  size: "toolCall",
  onInvalid: (c, issues, sent) => {
    if (issues === null) return errorResponse(c, "INVALID_REQUEST");
    const keys = new Set(issues.map((issue) => topKey([issue])));
    const id = isSafeToolCallId(sent?.toolCallId) ? sent.toolCallId : null;
    for (const [key, code] of CALL_FIELD_CODES) {
      if (keys.has(key)) return c.json(callError(id, code), HTTP_STATUS_BY_CODE[code]);
    }
    return errorResponse(c, "INVALID_REQUEST");
  },
  onTooLarge: (c) => c.json(callError(null, "REQUEST_TOO_LARGE"), 413),
};

/**
 * Answers a tool-call body with the boundary's result for it: 200 for READY (and the tool-side
 * codes), else the status of the result's code.
 */
async function answerCall(
  c: Context<AppEnv>,
  { boundary }: RouteDeps,
  { data: body, sent }: JsonBody<ToolCallBodySchema>,
  answer: (
    boundary: ToolBoundary,
    run: RunRef,
    envelope: ToolCallEnvelope,
  ) => Promise<BoundaryResult>,
): Promise<Response> {
  const run = runOf(c);
  const runId = run.runId;
  const result = await answer(boundary, run, {
    toolCallId: body.toolCallId,
    runId: body.runId ?? runId,
    toolName: body.toolName,
    // The input exactly as sent: the schema only checked its type, and the record must hold
    // the request as the agent made it.
    input: sent.input,
  });
  return c.json(result, result.status === "READY" ? 200 : HTTP_STATUS_BY_CODE[result.code]);
}

/** Every route the app serves, in the order the document lists them. */
export const ROUTES: readonly Route[] = [
  route({
    method: "post",
    path: "/v1/runs",
    operationId: "startRun",
    summary: "Start a run.",
    access: "harness",
    body: {
      schema: startRunBody,
      size: "control",
      onInvalid: (c, issues) => {
        if (issues === null) return errorResponse(c, "INVALID_REQUEST");
        return topKey(issues) === "runId"
          ? errorResponse(c, "INVALID_RUN_ID")
          : errorResponse(c, "INVALID_REQUEST", toInputIssues(issues));
      },
    },
    headers: [{
      name: "Idempotency-Key",
      description: "Makes the start safe to send again: a repeat with the same key and body " +
        "answers 201 with the run (and agent token) the first started; the key with another " +
        "body is 409. 1 to 255 visible ASCII characters. Without `runId`, the run ID is " +
        "derived from the key.",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
    }],
    responses: { 201: "StartedRun", 400: "Error", 409: "Error", 410: "Error", 413: "Error" },
    handle: async (c, { boundary, signer }, { data: body, sent }) => {
      const budget = perToolOf(sent);
      if ("issues" in budget) return errorResponse(c, "INVALID_REQUEST", budget.issues);
      const key = c.req.header("idempotency-key");
      const run = await boundary.startRun({
        ...(key === undefined ? {} : { idempotencyKey: key }),
        ...(body.runId === undefined ? {} : { runId: body.runId }),
        ...(body.deadline === undefined ? {} : {
          deadline: typeof body.deadline === "number" ? body.deadline : Date.parse(body.deadline),
        }),
        ...(body.ttlMs === undefined ? {} : { ttlMs: body.ttlMs }),
        ...(body.budget === undefined ? {} : {
          budget: {
            calls: body.budget.calls,
            ...(budget.perTool === undefined ? {} : { perTool: budget.perTool }),
            ...(body.budget.cost === undefined ? {} : { cost: body.budget.cost }),
          },
        }),
      });
      if (signer === null) return c.json(run satisfies StartedRun, 201);
      const agentToken = await signRunToken(signer, {
        runId: run.runId,
        startedAt: run.startedAt,
        exp: run.deadline,
      });
      return c.json({ ...run, agentToken } satisfies StartedRun, 201);
    },
  }),
  route({
    method: "get",
    path: "/v1/runs",
    operationId: "listRuns",
    summary: "List the recent runs, newest first, a page at a time (harness only).",
    access: "harness",
    query: [
      {
        name: "limit",
        description: `Runs per page, 1 to ${MAX_LIST_RUNS}.`,
        schema: { type: "integer", minimum: 1, maximum: MAX_LIST_RUNS, default: RUNS_PAGE },
      },
      {
        name: "cursor",
        description: "The `next` of the page before; absent for the first page.",
        schema: { type: "string" },
      },
    ],
    responses: { 200: "RunsPage", 400: "Error", 503: "Error" },
    needs: "RunIndex",
    handle: async (c, { boundary }) => {
      const limits = c.req.queries("limit") ?? [];
      const cursors = c.req.queries("cursor") ?? [];
      // Each at most once; a limit in plain decimal digits (no sign, exponent or padding).
      if (limits.length > 1 || cursors.length > 1) return errorResponse(c, "INVALID_REQUEST");
      const limit = limits.length === 0
        ? RUNS_PAGE
        : /^[1-9][0-9]{0,2}$/.test(limits[0]!)
        ? Number(limits[0])
        : 0;
      try {
        const page = await boundary.listRuns({ limit, cursor: cursors[0] ?? null });
        return c.json(page satisfies RunsPage, 200);
      } catch (error) {
        if (error instanceof RangeError) return errorResponse(c, "INVALID_REQUEST");
        throw error;
      }
    },
  }),
  route({
    method: "post",
    path: "/v1/runs/:runId/tool-calls",
    operationId: "submitToolCall",
    summary: "Submit one tool call; returns the bounded result or a safe error.",
    access: "agent",
    body: TOOL_CALL_BODY,
    responses: resultResponses([
      "EXECUTION_FAILED",
      "INVALID_INPUT",
      "REQUEST_TOO_LARGE",
      "UNAUTHORIZED",
      "RUN_NOT_FOUND",
      "DUPLICATE_TOOL_CALL",
      "DEADLINE_EXCEEDED",
      "RUN_BUDGET_EXHAUSTED",
      "BUDGET_EXHAUSTED",
      "INVALID_COST",
      "STORE_UNAVAILABLE",
    ]),
    // The request's signal is not passed on: a client that disconnects (a dropped connection,
    // a proxy's timeout) has not asked to stop the tool. The call finishes and is recorded, so a
    // retry under the same ID gets the real outcome (replay, recall) instead of CANCELLED.
    handle: (c, deps, body) =>
      answerCall(c, deps, body, (boundary, run, envelope) => boundary.invoke(run, envelope)),
  }),
  route({
    method: "post",
    path: "/v1/runs/:runId/recall",
    operationId: "recallToolCall",
    summary:
      "Get the recorded result of a tool call again (harness only; never executes anything).",
    access: "harness",
    needs: "CallIndex",
    body: TOOL_CALL_BODY,
    responses: resultResponses([
      "EXECUTION_FAILED",
      "INVALID_INPUT",
      "REQUEST_TOO_LARGE",
      "RUN_NOT_FOUND",
      "TOOL_CALL_CONFLICT",
      "RECORD_EXPIRED",
      "STORE_UNAVAILABLE",
    ]),
    handle: (c, deps, body) =>
      answerCall(c, deps, body, (boundary, run, envelope) => boundary.recall(run, envelope)),
  }),
  route({
    method: "get",
    path: "/v1/runs/:runId",
    operationId: "getRun",
    summary: "Read a run's state and every call it began, without payloads (harness only).",
    access: "harness",
    responses: { 200: "RunCalls", 400: "Error", 404: "Error", 503: "Error" },
    needs: "CallIndex",
    handle: async (c, { boundary }) => {
      const store = requireCapability(boundary.store, "CallIndex", "read a run's calls");
      let listed;
      try {
        listed = await store.listCalls(c.req.param("runId")!);
      } catch (error) {
        throw new BoundaryError("STORE_UNAVAILABLE", { cause: error });
      }
      if (listed === null) return errorResponse(c, "RUN_NOT_FOUND");
      const { run, calls } = listed;
      const body: RunCalls = {
        run: {
          runId: run.runId,
          status: run.status,
          deadline: run.deadline,
          startedAt: run.startedAt,
          endedAt: run.endedAt,
          budget: run.budget,
          used: run.used,
          ...(run.cost === undefined ? {} : { cost: run.cost }),
        },
        calls,
      };
      return c.json(body, 200);
    },
  }),
  route({
    method: "post",
    path: "/v1/runs/:runId/citations",
    operationId: "checkCitations",
    summary: "Tell which cited tool calls the run's records back as evidence (harness only).",
    access: "harness",
    body: {
      schema: citationsBody,
      size: "citations",
      onInvalid: (c, issues) =>
        errorResponse(c, "INVALID_REQUEST", issues === null ? undefined : toInputIssues(issues)),
    },
    responses: { 200: "Citations", 400: "Error", 413: "Error", 503: "Error" },
    handle: async (c, { boundary }, { data: body }) => {
      const citations = await boundary.checkCitations(c.req.param("runId")!, body.toolCallIds);
      return c.json({ citations } satisfies Citations, 200);
    },
  }),
  route({
    method: "post",
    path: "/v1/runs/:runId/mcp",
    operationId: "mcp",
    summary: "MCP (Streamable HTTP, JSON responses) for this run's tools; see docs/mcp.md.",
    access: "agent",
    mcp: true,
    // The route reads its own JSON-RPC body (a batch is an array), within the tool-call limit.
    responses: {},
    handle: (c, { mcp }) => mcp === null ? errorResponse(c, "NOT_FOUND") : mcp.handle(c),
  }),
  route({
    method: "get",
    path: "/v1/runs/:runId/tool-calls/:toolCallId",
    operationId: "getRecord",
    summary: "Read the canonical record of a tool call (harness only; includes the raw response).",
    access: "harness",
    responses: { 200: "CanonicalRecord", 400: "Error", 404: "Error" },
    handle: async (c, { boundary }) => {
      const record = await boundary.inspect(c.req.param("runId")!, c.req.param("toolCallId")!);
      return record === null ? errorResponse(c, "NOT_FOUND") : c.json(record, 200);
    },
  }),
  route({
    method: "post",
    path: "/v1/runs/:runId/end",
    operationId: "endRun",
    summary: "End a run and get its observed facts.",
    access: "harness",
    // 503: the store, the timestamp authority or the archive did not answer (a repeat is safe).
    responses: { 200: "RunEnd", 400: "Error", 404: "Error", 503: "Error" },
    handle: async (c, { boundary }) => {
      const report = await boundary.endRunReport(c.req.param("runId")!);
      return c.json(report, 200);
    },
  }),
  route({
    method: "get",
    path: "/v1/runs/:runId/export",
    operationId: "exportRun",
    summary:
      "Export a run for offline verification: its records (raw included), facts and receipt (harness only).",
    access: "harness",
    responses: { 200: "RunBundle", 400: "Error", 404: "Error", 503: "Error" },
    needs: "RunSeal",
    handle: async (c, { boundary }) => c.json(await boundary.exportRun(c.req.param("runId")!), 200),
  }),
  route({
    method: "get",
    path: "/v1/runs/:runId/verdict",
    operationId: "verifyRun",
    summary:
      "Verify the run's export as the store holds it now, with the ledger's public key (harness only; null without a key).",
    access: "harness",
    responses: { 200: "Verdict", 400: "Error", 404: "Error", 503: "Error" },
    needs: "RunSeal",
    handle: async (c, { boundary }) => {
      let bundle: RunBundle | null = null;
      let unreadable: string | null = null;
      try {
        bundle = await boundary.exportRun(c.req.param("runId")!);
      } catch (error) {
        // A record the store holds but cannot give back as data: the boundary never writes
        // one, so it was altered there. Anything else is the export's own failure.
        unreadable = unreadableCallOf(error);
        if (unreadable === null) throw error;
      }
      const key = await boundary.ledgerPublicKey();
      // The key is the boundary's, never the store's: an edit in the store cannot pass.
      const verdict: RunVerdict | null = key === null
        ? null
        : bundle === null
        ? { ok: false, toolCallId: unreadable, reason: "ALTERED" }
        : await verifyBundle(bundle, key.publicKey, { keyId: key.keyId });
      return c.json({ verdict } satisfies Verdict, 200);
    },
  }),
  route({
    method: "get",
    path: "/v1/ledger-key",
    operationId: "getLedgerKey",
    summary: "The ledger's public key and key ID, for verifying exported runs (404 without one).",
    access: "public",
    responses: { 200: "LedgerKey", 404: "Error" },
    handle: async (c, { boundary }) => {
      const key = await boundary.ledgerPublicKey();
      if (key === null) return errorResponse(c, "NOT_FOUND");
      const { kty, crv, x } = key.publicKey as LedgerKey["publicKey"];
      return c.json({ keyId: key.keyId, publicKey: { kty, crv, x } } satisfies LedgerKey, 200);
    },
  }),
  route({
    method: "get",
    path: "/v1/tools",
    operationId: "listTools",
    summary: "List the tools with their read-only flags and input JSON Schemas.",
    access: "harness",
    responses: { 200: "Tools" },
    handle: (c, { tools }) => c.json(tools(), 200),
  }),
  route({
    method: "get",
    path: "/",
    operationId: "index",
    summary:
      "What this app serves: its routes (a browser is sent to the run inspector when it is on).",
    access: "public",
    responses: { 200: "Index" },
    handle: (c, { index, home }) => {
      // A browser asks for HTML first; a client that asks for JSON gets the route list.
      const wantsPage = /text\/html/i.test(c.req.header("accept") ?? "");
      return home !== null && wantsPage ? c.redirect(home, 302) : c.json(index(), 200);
    },
  }),
  route({
    method: "get",
    path: "/healthz",
    operationId: "health",
    summary: "Liveness.",
    access: "public",
    responses: { 200: "Health" },
    handle: (c) => c.json({ status: "ok" } satisfies Health, 200),
  }),
  route({
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    summary: "This document.",
    access: "public",
    responses: {},
    handle: async (c, { openapi }) => c.json(await openapi(), 200),
  }),
];
