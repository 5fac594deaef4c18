import assert from "node:assert/strict";
import * as v from "valibot";
import { defineTool, ERROR_CODES, ToolBoundary, type ToolBoundaryOptions } from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import {
  createApp,
  type CreateAppOptions,
  HTTP_ERROR_CODES,
  HTTP_STATUS_BY_CODE,
} from "../../src/hono/mod.ts";
import { mcpRoute } from "../../src/mcp/mod.ts";
import { toolCallBodyLimit } from "../../src/hono/body.ts";
import {
  BoundaryResultSchema,
  CanonicalRecordSchema,
  ErrorBodySchema,
  RunContextSchema,
  RunEndSchema,
  ToolsSchema,
} from "../../src/hono/responses.ts";
import { DEMO_TOOLS } from "../../edge/demo/tools.ts";
import { startHttpRun } from "../support/runs.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const SECRET = "demo-secret-7f3a";

/** A MemoryStore that counts each method call, to prove what never reached the store. */
function countingStore(inner: Store = new MemoryStore()): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return value.apply(target, args);
      };
    },
  });
  return { store, calls };
}

function setup(
  boundaryOptions: Partial<ToolBoundaryOptions> = {},
  appOptions: Partial<CreateAppOptions> = {},
) {
  const counted = countingStore(boundaryOptions.store);
  const boundary = new ToolBoundary({
    tools: DEMO_TOOLS,
    ...boundaryOptions,
    store: counted.store,
  });
  const errors: unknown[] = [];
  const app = createApp({
    boundary,
    agentToken: AGENT,
    harnessToken: HARNESS,
    onError: (error) => errors.push(error),
    ...appOptions,
  });
  const call = (
    method: string,
    path: string,
    options: { token?: string | null; body?: unknown; raw?: BodyInit; headers?: HeadersInit } = {},
  ) => {
    const headers = new Headers(options.headers);
    const token = options.token === undefined ? HARNESS : options.token;
    if (token !== null) headers.set("authorization", `Bearer ${token}`);
    if (options.body !== undefined && !headers.has("content-type")) {
      headers.set("content-type", "application/json");
    }
    return app.request(path, {
      method,
      headers,
      ...(options.raw !== undefined
        ? { body: options.raw }
        : options.body !== undefined
        ? { body: JSON.stringify(options.body) }
        : {}),
    });
  };
  const startRun = async (body: unknown = { ttlMs: 60_000, budget: { calls: 20 } }) =>
    v.parse(RunContextSchema, await startHttpRun(app.request, "", HARNESS, body));
  const submit = (runId: string, body: unknown, token: string = AGENT) =>
    call("POST", `/v1/runs/${runId}/tool-calls`, { token, body });
  return { app, boundary, calls: counted.calls, errors, call, startRun, submit };
}

async function json(res: Response): Promise<Record<string, unknown>> {
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  return await res.json();
}

async function assertError(res: Response, status: number, code: string) {
  const body = await json(res);
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.code, code);
  assert.equal(body.status, "ERROR");
  v.parse(ErrorBodySchema, body);
  return body;
}

Deno.test("the status table covers every boundary and HTTP code and nothing else", () => {
  assert.deepEqual(
    Object.keys(HTTP_STATUS_BY_CODE).sort(),
    [...ERROR_CODES, ...HTTP_ERROR_CODES].sort(),
  );
  assert.equal(HTTP_STATUS_BY_CODE.REQUEST_TOO_LARGE, 413);
  assert.equal(HTTP_STATUS_BY_CODE.EXECUTION_FAILED, 200);
  assert.equal(HTTP_STATUS_BY_CODE.STORE_UNAVAILABLE, 503);
});

Deno.test("createApp() refuses missing, short, malformed and shared tokens", () => {
  const boundary = new ToolBoundary({ tools: [] });
  const bad: Partial<CreateAppOptions>[] = [
    { agentToken: "" },
    { agentToken: [] },
    { harnessToken: "short" },
    { harnessToken: "has spaces in the token" },
    { agentToken: HARNESS },
  ];
  for (const options of bad) {
    assert.throws(
      () => createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS, ...options }),
      TypeError,
    );
  }
  assert.throws(() => createApp({ boundary } as CreateAppOptions), TypeError);
});

Deno.test("a whole run over HTTP: start, calls, record, end", async () => {
  const { call, startRun, submit } = setup();
  const run = await startRun({ runId: "run-http-1", ttlMs: 60_000, budget: { calls: 5 } });
  assert.equal(run.runId, "run-http-1");
  assert.equal(run.budget.calls, 5);

  const found = await submit(run.runId, {
    toolCallId: "call_1",
    toolName: "search_runbook",
    input: { query: "disk full" },
  });
  assert.equal(found.status, 200);
  const foundBody = v.parse(BoundaryResultSchema, await json(found));
  assert.equal(foundBody.status, "READY");
  assert.equal(foundBody.status === "READY" && foundBody.evidence, "EVIDENCE_FOUND");

  // Arguments as JSON text, as OpenAI-style APIs deliver them; the body repeats the run ID.
  const none = await submit(run.runId, {
    toolCallId: "toolu_2",
    runId: run.runId,
    toolName: "search_logs",
    input: '{"service":"worker","query":"timeout"}',
  });
  const noneBody = v.parse(BoundaryResultSchema, await json(none));
  assert.equal(none.status, 200);
  assert.deepEqual(noneBody.status === "READY" && [noneBody.evidence, noneBody.content], [
    "NO_EVIDENCE",
    [],
  ]);
  assert.match(noneBody.status === "READY" ? noneBody.scope : "", /worker logs/);

  const record = await call("GET", `/v1/runs/${run.runId}/tool-calls/toolu_2`);
  assert.equal(record.status, 200);
  const recordBody = v.parse(CanonicalRecordSchema, await json(record));
  assert.equal(recordBody.toolCallId, "toolu_2");
  assert.deepEqual(recordBody.request, { service: "worker", query: "timeout" });
  assert.equal((recordBody.raw as { window: string }).window.length > 0, true);

  const ended = await call("POST", `/v1/runs/${run.runId}/end`);
  assert.equal(ended.status, 200);
  const end = v.parse(RunEndSchema, await json(ended));
  assert.deepEqual(end.facts.map((fact) => [fact.toolCallId, fact.kind]), [
    ["call_1", "EVIDENCE"],
    ["toolu_2", "NEGATIVE_OBSERVATION"],
  ]);
  assert.equal(end.omitted, 0);

  const late = await submit(run.runId, {
    toolCallId: "call_3",
    toolName: "search_runbook",
    input: { query: "tls" },
  });
  assert.equal(late.status, 409);
  assert.equal((await json(late)).code, "RUN_INACTIVE");
});

Deno.test("every tool outcome maps to its documented status", async () => {
  const { submit, startRun, call } = setup();
  const run = await startRun();
  const cases: [string, unknown, number, string][] = [
    ["call_big", { service: "api" }, 200, "RESULT_TOO_LARGE"],
    ["call_write", { service: "api" }, 403, "NOT_READ_ONLY"],
    ["call_throw", { metric: "p99" }, 200, "EXECUTION_FAILED"],
    ["call_slow", { traceId: "t1" }, 200, "TOOL_TIMEOUT"],
    ["call_bad", { service: "db", query: 1 }, 400, "INVALID_INPUT"],
    ["call_none", {}, 404, "UNKNOWN_TOOL"],
  ];
  const tools = [
    "export_traces",
    "restart_service",
    "query_metrics",
    "trace_lookup",
    "search_logs",
    "no_such_tool",
  ];
  for (const [i, [id, input, status, code]] of cases.entries()) {
    const res = await submit(run.runId, { toolCallId: id, toolName: tools[i], input });
    const body = v.parse(BoundaryResultSchema, await json(res));
    assert.equal(res.status, status, `${id}: ${JSON.stringify(body)}`);
    assert.equal(body.status === "ERROR" && body.code, code);
    assert.equal(body.toolCallId, id);
    // Never the tool's error text, its "secret", or a stack.
    const text = JSON.stringify(body);
    assert.ok(!text.includes(SECRET) && !text.includes("ECONNREFUSED") && !text.includes(" at "));
  }
  const bad = await submit(run.runId, {
    toolCallId: "call_bad2",
    toolName: "search_logs",
    input: { service: "db", query: "x" },
  });
  assert.deepEqual((await json(bad)).issues, [{
    path: "service",
    expected: '("api" | "checkout" | "worker")',
  }]);
  // Tool-side failures are recorded; preflight refusals are not.
  const thrown = v.parse(
    CanonicalRecordSchema,
    await json(await call("GET", `/v1/runs/${run.runId}/tool-calls/call_throw`)),
  );
  assert.equal(thrown.errorCode, "EXECUTION_FAILED");
  const refused = await call("GET", `/v1/runs/${run.runId}/tool-calls/call_write`);
  await assertError(refused, 404, "NOT_FOUND");
});

Deno.test("duplicates (409 DUPLICATE_TOOL_CALL, TOOL_CALL_CONFLICT for another request), budgets, run mismatch and unknown runs", async () => {
  const { submit, startRun, call } = setup();
  const run = await startRun({ ttlMs: 60_000, budget: { calls: 2 } });
  const first = { toolCallId: "call_1", toolName: "search_runbook", input: { query: "disk" } };
  assert.equal((await submit(run.runId, first)).status, 200);
  const dup = await submit(run.runId, first);
  assert.equal(dup.status, 409);
  assert.equal((await json(dup)).code, "DUPLICATE_TOOL_CALL");
  const conflict = await submit(run.runId, { ...first, input: { query: "tls" } });
  assert.equal(conflict.status, 409);
  assert.equal((await json(conflict)).code, "TOOL_CALL_CONFLICT");
  const kept = await json(await call("GET", `/v1/runs/${run.runId}/tool-calls/call_1`));
  assert.deepEqual(kept.request, { query: "disk" });

  const mismatch = await submit(run.runId, { ...first, toolCallId: "call_2", runId: "other-run" });
  assert.equal(mismatch.status, 400);
  assert.equal((await json(mismatch)).code, "RUN_MISMATCH");
  const notString = await submit(run.runId, { ...first, toolCallId: "call_2", runId: 7 });
  assert.equal((await json(notString)).code, "RUN_MISMATCH");

  assert.equal((await submit(run.runId, { ...first, toolCallId: "call_2" })).status, 200);
  const over = await submit(run.runId, { ...first, toolCallId: "call_3" });
  assert.equal(over.status, 429);
  assert.equal((await json(over)).code, "RUN_BUDGET_EXHAUSTED");

  const missing = await submit("no-such-run", first);
  assert.equal(missing.status, 404);
  assert.deepEqual(await json(missing), {
    status: "ERROR",
    toolCallId: "call_1",
    code: "RUN_NOT_FOUND",
    message: "The run does not exist or has expired.",
  });
  await assertError(await call("POST", "/v1/runs/no-such-run/end"), 404, "RUN_NOT_FOUND");
});

Deno.test("deadline passed: 410 at start and for a call", async () => {
  let now = 1_700_000_000_000;
  const clock = () => now;
  const { submit, startRun, call } = setup({ clock, store: new MemoryStore({ clock }) });
  await assertError(
    await call("POST", "/v1/runs", { body: { deadline: now - 1 } }),
    410,
    "DEADLINE_EXCEEDED",
  );
  const run = await startRun({ deadline: new Date(now + 1_000).toISOString() });
  assert.equal(run.deadline, now + 1_000);
  now += 1_000;
  const res = await submit(run.runId, {
    toolCallId: "call_1",
    toolName: "search_runbook",
    input: { query: "disk" },
  });
  assert.equal(res.status, 410);
  assert.equal((await json(res)).code, "DEADLINE_EXCEEDED");
});

Deno.test("start run validates its body and names fields, never values", async () => {
  const { call, startRun, calls } = setup();
  await startRun({ runId: "run-a", ttlMs: 1_000 });
  await assertError(
    await call("POST", "/v1/runs", { body: { runId: "run-a" } }),
    409,
    "RUN_ALREADY_EXISTS",
  );
  await assertError(
    await call("POST", "/v1/runs", { body: { runId: "a/b" } }),
    400,
    "INVALID_RUN_ID",
  );
  const bad = await assertError(
    await call("POST", "/v1/runs", { body: { budget: { calls: 0 }, ttlMs: "soon-secret" } }),
    400,
    "INVALID_REQUEST",
  );
  assert.deepEqual((bad.issues as { path: string }[]).map((issue) => issue.path).sort(), [
    "budget.calls",
    "ttlMs",
  ]);
  assert.ok(!JSON.stringify(bad).includes("soon-secret"));
  await assertError(await call("POST", "/v1/runs", { body: [] }), 400, "INVALID_REQUEST");
  assert.deepEqual(calls, ["startRun", "startRun"]);
});

Deno.test("auth: 401 without or with a wrong token, 403 for the agent outside tool calls", async () => {
  const { call, startRun, submit } = setup();
  const run = await startRun();
  const body = { toolCallId: "call_1", toolName: "search_runbook", input: { query: "disk" } };
  for (
    const headers of [
      {},
      { authorization: "Bearer wrong-token-0123456789" },
      { authorization: "Basic YTpi" },
      { authorization: "Bearer" },
      // Near misses: a prefix, an extension, one byte off, the other role's token cut short.
      { authorization: `Bearer ${AGENT.slice(0, -1)}` },
      { authorization: `Bearer ${AGENT}0` },
      { authorization: `Bearer ${AGENT.slice(0, -1)}g` },
      { authorization: `Bearer ${HARNESS.slice(0, AGENT.length)}` },
    ]
  ) {
    const res = await call("POST", `/v1/runs/${run.runId}/tool-calls`, {
      token: null,
      headers,
      body,
    });
    await assertError(res, 401, "UNAUTHENTICATED");
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
  }
  const harnessRoutes: [string, string, unknown?][] = [
    ["POST", "/v1/runs", { ttlMs: 1000 }],
    ["GET", `/v1/runs/${run.runId}/tool-calls/call_1`],
    ["POST", `/v1/runs/${run.runId}/end`],
    ["GET", "/v1/tools"],
  ];
  for (const [method, path, payload] of harnessRoutes) {
    await assertError(await call(method, path, { token: AGENT, body: payload }), 403, "FORBIDDEN");
    await assertError(
      await call(method, path, { token: null, body: payload }),
      401,
      "UNAUTHENTICATED",
    );
  }
  // The agent may submit; so may the harness; the scheme is case-insensitive.
  assert.equal((await submit(run.runId, body)).status, 200);
  assert.equal((await submit(run.runId, { ...body, toolCallId: "call_2" }, HARNESS)).status, 200);
  const lower = await call("POST", `/v1/runs/${run.runId}/tool-calls`, {
    token: null,
    headers: { authorization: `bearer ${AGENT}` },
    body: { ...body, toolCallId: "call_3" },
  });
  assert.equal(lower.status, 200);
  // Public routes need no token.
  assert.equal((await call("GET", "/healthz", { token: null })).status, 200);
  assert.equal((await call("GET", "/openapi.json", { token: null })).status, 200);
});

Deno.test("the body limit refuses before parsing and stores nothing", async () => {
  const requestBytes = 1024;
  const { app, startRun, submit, calls } = setup({ limits: { requestBytes } });
  const limit = toolCallBodyLimit({ requestBytes });
  assert.equal(limit, 4 * 1024 + 8192);
  const run = await startRun();
  calls.length = 0;

  // A streamed body: the app stops reading soon after the limit.
  let pulled = 0;
  const chunk = new TextEncoder().encode(" ".repeat(1024));
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += chunk.length;
      if (pulled > 10 * limit) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const streamed = await app.request(`/v1/runs/${run.runId}/tool-calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
    body: stream,
  });
  assert.equal(streamed.status, 413);
  assert.deepEqual(await json(streamed), {
    status: "ERROR",
    toolCallId: null,
    code: "REQUEST_TOO_LARGE",
    message: "The tool input is larger than the request limit.",
  });
  assert.ok(pulled <= limit + 2 * chunk.length, `pulled ${pulled} bytes`);

  // A declared Content-Length over the limit is refused without reading the body at all.
  let touched = false;
  const declared = await app.request(`/v1/runs/${run.runId}/tool-calls`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${AGENT}`,
      "content-type": "application/json",
      "content-length": String(limit + 1),
    },
    // highWaterMark 0: nothing is pulled until someone reads.
    body: new ReadableStream({
      pull(controller) {
        touched = true;
        controller.close();
      },
    }, { highWaterMark: 0 }),
  });
  assert.equal(declared.status, 413);
  assert.equal(touched, false);
  assert.deepEqual(calls, []);

  // A declared length within the limit is read whole, and the bytes are still counted: a body
  // longer than it declares is refused all the same.
  const understated = await app.request(`/v1/runs/${run.runId}/tool-calls`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${AGENT}`,
      "content-type": "application/json",
      "content-length": "2",
    },
    body: JSON.stringify({
      toolCallId: "call_1",
      toolName: "echo",
      input: { q: "x".repeat(limit) },
    }),
  });
  assert.equal(understated.status, 413);
  assert.equal((await json(understated)).code, "REQUEST_TOO_LARGE");
  assert.deepEqual(calls, []);

  // Inside the allowance: the worst standard encoding of an input at the limit still gets in.
  const value = "😀".repeat(Math.floor((requestBytes - 20) / 4));
  const input = { q: value };
  assert.ok(new TextEncoder().encode(JSON.stringify(input)).length <= requestBytes);
  const asciiEscaped = JSON.stringify(input).replace(
    /[\u0080-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  const body = JSON.stringify({ toolCallId: "call_1", toolName: "echo", input: asciiEscaped })
    .replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
  assert.ok(body.length > 3 * requestBytes && body.length <= limit, `body ${body.length}`);
  const echo = defineTool({
    name: "echo",
    readOnly: true,
    execute: (inp) => inp,
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: "echo", content: null }),
  });
  const small = setup({ tools: [echo], limits: { requestBytes } });
  const smallRun = await small.startRun();
  const ok = await small.call("POST", `/v1/runs/${smallRun.runId}/tool-calls`, {
    token: AGENT,
    raw: body,
    headers: { "content-type": "application/json" },
  });
  assert.equal(ok.status, 200, JSON.stringify(await ok.clone().json()));
  const stored = await small.boundary.inspect(smallRun.runId, "call_1");
  assert.equal((stored?.request as { q: string }).q, value);

  // Within the body limit but over the request limit once stored: the boundary refuses it.
  const over = await small.submit(smallRun.runId, {
    toolCallId: "call_2",
    toolName: "echo",
    input: { q: "x".repeat(requestBytes) },
  });
  assert.equal(over.status, 413);
  assert.equal((await json(over)).code, "REQUEST_TOO_LARGE");
  assert.equal(await small.boundary.inspect(smallRun.runId, "call_2"), null);
  await submit(run.runId, {
    toolCallId: "call_ok",
    toolName: "search_runbook",
    input: { query: "x" },
  });
});

Deno.test("malformed JSON, wrong content type and unsafe IDs are refused with nothing stored", async () => {
  const { call, startRun, calls } = setup();
  const run = await startRun();
  calls.length = 0;
  const path = `/v1/runs/${run.runId}/tool-calls`;
  await assertError(
    await call("POST", path, {
      token: AGENT,
      raw: '{"toolCallId":',
      headers: { "content-type": "application/json" },
    }),
    400,
    "INVALID_REQUEST",
  );
  await assertError(
    await call("POST", path, {
      token: AGENT,
      raw: "toolCallId=call_1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    }),
    415,
    "UNSUPPORTED_MEDIA_TYPE",
  );
  await assertError(
    await call("POST", path, { token: AGENT, raw: "{}" }),
    415,
    "UNSUPPORTED_MEDIA_TYPE",
  );
  await assertError(
    await call("POST", path, { token: AGENT, body: [1, 2] }),
    400,
    "INVALID_REQUEST",
  );
  for (const toolCallId of [undefined, "", " call_1", "call/1", "call{1}", "x".repeat(257), 42]) {
    const res = await call("POST", path, {
      token: AGENT,
      body: { toolCallId, toolName: "search_runbook", input: { query: "disk" } },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(await json(res), {
      status: "ERROR",
      toolCallId: null,
      code: "INVALID_TOOL_CALL_ID",
      message: "The tool call ID is missing or not in the accepted format.",
    });
  }
  const noInput = await call("POST", path, {
    token: AGENT,
    body: { toolCallId: "call_1", toolName: "search_runbook", input: 5 },
  });
  assert.equal((await json(noInput)).code, "INVALID_INPUT");
  const noName = await call("POST", path, {
    token: AGENT,
    body: { toolCallId: "call_1", input: {} },
  });
  assert.equal((await json(noName)).code, "UNKNOWN_TOOL");
  for (const unsafe of ["run%7B1%7D", "run%201", "r%2Fx", "x".repeat(129)]) {
    await assertError(
      await call("POST", `/v1/runs/${unsafe}/tool-calls`, {
        token: AGENT,
        body: { toolCallId: "call_1", toolName: "search_runbook", input: {} },
      }),
      400,
      "INVALID_RUN_ID",
    );
    await assertError(await call("POST", `/v1/runs/${unsafe}/end`), 400, "INVALID_RUN_ID");
  }
  await assertError(
    await call("GET", `/v1/runs/${run.runId}/tool-calls/call%20x`),
    400,
    "INVALID_TOOL_CALL_ID",
  );
  assert.deepEqual(calls, []);
});

Deno.test("unknown routes are 404, wrong methods 405 with Allow, all JSON", async () => {
  const { call } = setup();
  await assertError(await call("GET", "/v2/anything"), 404, "NOT_FOUND");
  const cases: [string, string, string][] = [
    ["DELETE", "/v1/runs", "POST, GET, HEAD"],
    ["GET", "/v1/runs/r1/tool-calls", "POST"],
    ["PUT", "/v1/runs/r1/tool-calls/c1", "GET, HEAD"],
    ["GET", "/v1/runs/r1/end", "POST"],
    ["POST", "/healthz", "GET, HEAD"],
    ["PATCH", "/openapi.json", "GET, HEAD"],
  ];
  for (const [method, path, allow] of cases) {
    const res = await call(method, path, { token: null });
    await assertError(res, 405, "METHOD_NOT_ALLOWED");
    assert.equal(res.headers.get("allow"), allow);
  }
});

Deno.test("tool listing gives names, read-only flags and JSON Schemas from valibot", async () => {
  const { call } = setup();
  const tools = v.parse(ToolsSchema, await json(await call("GET", "/v1/tools"))).tools;
  assert.deepEqual(
    tools.map((tool) => [tool.name, tool.readOnly]),
    DEMO_TOOLS.map((tool) => [
      tool.name,
      tool.readOnly,
    ]),
  );
  const logs = tools.find((tool) => tool.name === "search_logs");
  assert.deepEqual(logs?.inputSchema, {
    type: "object",
    properties: {
      service: { type: "string", enum: ["api", "checkout", "worker"] },
      query: { type: "string", minLength: 1, maxLength: 200 },
      level: { type: "string", enum: ["INFO", "WARN", "ERROR"] },
    },
    required: ["service", "query"],
  });
  assert.equal(logs?.description, DEMO_TOOLS[1]?.description);
});

Deno.test("the OpenAPI document is 3.1, generated from the schemas, and matches the routes", async () => {
  // With a server secret and the MCP route, so that it is served too.
  const { app, call } = setup({}, {
    secret: "server-secret-0123456789abcdef-0123",
    mcp: mcpRoute(),
  });
  const doc = await json(await call("GET", "/openapi.json", { token: null }));
  assert.equal(doc.openapi, "3.1.0");
  const paths = doc.paths as Record<string, Record<string, { responses: object }>>;
  const documented = Object.entries(paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`)
  ).sort();
  const served = [
    ...new Set(
      app.routes.filter((route) => route.method !== "ALL").map((route) =>
        `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`
      ),
    ),
  ].sort();
  assert.deepEqual(documented, served);
  assert.equal(documented.length, 16);
  const schemas = (doc.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
  for (const [name, schema] of Object.entries(schemas)) {
    assert.ok(
      schema.type === "object" || Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf),
      name,
    );
    assert.equal(schema.$schema, undefined);
  }
  const toolCallProps = schemas.ToolCallBody?.properties as Record<string, { pattern?: string }>;
  assert.equal(toolCallProps.toolCallId?.pattern, "^(?!\\.+$)[A-Za-z0-9_.:-]{1,256}$");
  // Every $ref resolves.
  for (const ref of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)) {
    assert.ok(ref[1] !== undefined && ref[1] in schemas, ref[1]);
  }
  // Every documented operation answers (no 404 or 405) when called as documented.
  for (const path of Object.keys(paths)) {
    for (const method of Object.keys(paths[path] ?? {})) {
      const concrete = path.replace("{runId}", "run-x").replace("{toolCallId}", "call_x");
      const res = await call(method.toUpperCase(), concrete, method === "post" ? { body: {} } : {});
      assert.ok(
        res.status !== 405 &&
          !(res.status === 404 && (await res.json()).code === "NOT_FOUND" &&
            // A record not found is a 404 of its own; so is the ledger key of an app without one.
            !path.includes("{toolCallId}") && path !== "/v1/ledger-key"),
        `${method} ${path}: ${res.status}`,
      );
    }
  }
});

Deno.test("store failures are 503 and internal errors 500, without detail or stack", async () => {
  const broken = new MemoryStore();
  const failing = new Proxy(broken, {
    get(target, key) {
      if (key === "begin" || key === "startRun") {
        return () => Promise.reject(new Error(`redis://default:${SECRET}@db.internal refused`));
      }
      // A store answer of the wrong shape: the route fails on it, an internal error.
      if (key === "listCalls") return () => Promise.resolve({});
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const { call, submit, errors } = setup({ store: failing });
  const started = await assertError(
    await call("POST", "/v1/runs", { body: {} }),
    503,
    "STORE_UNAVAILABLE",
  );
  const call503 = await submit("r1", {
    toolCallId: "c1",
    toolName: "search_runbook",
    input: { query: "disk" },
  });
  const begun = await assertError(call503, 503, "STORE_UNAVAILABLE");
  const body = await assertError(await call("GET", "/v1/runs/r1"), 500, "INTERNAL_ERROR");
  for (const text of [JSON.stringify(started), JSON.stringify(begun), JSON.stringify(body)]) {
    assert.ok(!text.includes(SECRET) && !text.includes("redis://") && !text.includes(" at "));
  }
  assert.equal(errors.length, 2);
});

Deno.test("responses carry a request ID and are never cached", async () => {
  const { call } = setup();
  const res = await call("GET", "/healthz", { headers: { "x-request-id": "req-123" } });
  assert.equal(res.headers.get("x-request-id"), "req-123");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const denied = await call("GET", "/v1/tools", { token: null });
  assert.match(denied.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(denied.headers.get("cache-control"), "no-store");
});

Deno.test("a tool call reads no run first, on any app: one begin and one complete, and the store decides", async () => {
  const shared = new MemoryStore();
  const first = setup({ store: shared });
  const run = await first.startRun();
  const body = (id: string) => ({
    toolCallId: id,
    toolName: "search_runbook",
    input: { query: "disk" },
  });
  assert.equal((await first.submit(run.runId, body("call_1"))).status, 200);
  assert.deepEqual(first.calls, ["startRun", "begin", "complete"]);
  // An app that never saw the run: the same two operations, no read of the run before.
  const second = setup({ store: shared });
  assert.equal((await second.submit(run.runId, body("call_2"))).status, 200);
  assert.deepEqual(second.calls, ["begin", "complete"]);
  // Ended through one app, refused through the other: the store decides.
  assert.equal((await first.call("POST", `/v1/runs/${run.runId}/end`)).status, 200);
  const late = await second.submit(run.runId, body("call_3"));
  assert.equal(late.status, 409);
  assert.equal((await json(late)).code, "RUN_INACTIVE");
  assert.deepEqual(second.calls, ["begin", "complete", "begin"]);
});

Deno.test("docs/http.md lists exactly the exported status table", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/http.md", import.meta.url));
  const rows = [...doc.matchAll(/^\| `([A-Z_]+)` +\| (\d{3}) +\|$/gm)].map((
    m,
  ) => [m[1], Number(m[2])]);
  assert.deepEqual(rows, Object.entries(HTTP_STATUS_BY_CODE));
});
