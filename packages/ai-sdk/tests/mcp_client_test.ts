/**
 * The AI SDK's own MCP client (`createMCPClient` of `@ai-sdk/mcp`) drives a whole `generateText`
 * tool loop, with the `ai` package's mock model, through `POST /v1/runs/{runId}/mcp` of the app
 * served over real HTTP: its protocol negotiation (`server/discover` at 2026-07-28, answered, so
 * no `initialize` and no session; with discovery off, `initialize` at 2025-11-25), what the model
 * receives as tool results, and the records the harness reads afterwards.
 */
import assert from "node:assert/strict";
import { createMCPClient } from "@ai-sdk/mcp";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ERROR_MESSAGES, ToolBoundary } from "@tool-boundary/core";
import { createApp } from "@tool-boundary/core/hono";
import { mcpRoute } from "@tool-boundary/core/mcp";
import { MemoryStore } from "@tool-boundary/core/memory";
import { CANARY_SECRET } from "@tool-boundary/core/testing";
import { callStep, testTools, textStep, toolCall } from "./support.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const SECRET = "server-secret-0123456789abcdef-0123";

/** One request of the MCP route as the server received it, and its answer. */
interface Seen {
  method: string;
  version: string | null;
  session: string | null;
  /** The JSON-RPC message of a POST. */
  rpc: { method?: string; id?: number; params?: Record<string, unknown> } | null;
  status: number;
  /** The `Mcp-Session-Id` the answer issued. */
  issued: string | null;
  /** The JSON body of the answer, when it has one. */
  answer: unknown;
}

/** The app on a loopback port, with every request to the MCP route logged as it was answered. */
function serve() {
  const boundary = new ToolBoundary({ store: new MemoryStore(), tools: testTools() });
  const app = createApp({
    boundary,
    agentToken: AGENT,
    harnessToken: HARNESS,
    secret: SECRET,
    mcp: mcpRoute(),
  });
  const seen: Seen[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    if (!new URL(req.url).pathname.endsWith("/mcp")) return app.fetch(req);
    const body = req.method === "POST" ? await req.clone().text() : "";
    const res = await app.fetch(req);
    const text = await res.clone().text();
    seen.push({
      method: req.method,
      version: req.headers.get("mcp-protocol-version"),
      session: req.headers.get("mcp-session-id"),
      rpc: body === "" ? null : JSON.parse(body),
      status: res.status,
      issued: res.headers.get("mcp-session-id"),
      answer: text === "" ? null : JSON.parse(text),
    });
    return res;
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  const harness = async (path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${HARNESS}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    assert.ok(res.ok, `${path}: HTTP ${res.status}`);
    return await res.json();
  };
  return { base, seen, harness, stop: () => server.shutdown() };
}

const SERVER_INFO = { name: "tool-boundary", version: "0.1.0" };
/** The `initialize` result of the route, as the client keeps it. */
const initialized = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: {} },
  serverInfo: SERVER_INFO,
};

/** A value as JSON carries it (the SDK's messages hold `providerOptions: undefined`). */
function plain(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

Deno.test("@ai-sdk/mcp: a generateText tool loop through the MCP route at 2026-07-28, without falling back", async () => {
  const { base, seen, harness, stop } = serve();
  try {
    const { runId, agentToken } = await harness("/v1/runs", { ttlMs: 60_000 });
    assert.match(agentToken, /^tbr\./); // a run token, valid on this run only
    const mcp = await createMCPClient({
      transport: {
        type: "http",
        url: `${base}/v1/runs/${runId}/mcp`,
        headers: { authorization: `Bearer ${agentToken}` },
      },
    });
    let model: MockLanguageModelV4;
    let text: string;
    try {
      // What the client keeps from `server/discover` (no `initialize` was sent).
      assert.deepEqual(plain(mcp.initializeResult), {
        protocolVersion: "2026-07-28",
        capabilities: { tools: {} },
        serverInfo: SERVER_INFO,
      });
      // The route lists the read-only tools only. A client that knows a writable tool's name
      // anyway (a stale config, a model told to try it) can still build and call it: the
      // boundary, not the listing, is what refuses it.
      const tools = {
        ...await mcp.tools(),
        ...mcp.toolsFromDefinitions({
          tools: [{ name: "restart_service", inputSchema: { type: "object" } }],
        }),
      };
      model = new MockLanguageModelV4({
        doGenerate: [
          callStep(
            toolCall("call_read", "search_logs", '{"query":"timeout"}'),
            toolCall("call_write", "restart_service", '{"service":"api"}'),
            toolCall("call_bad", "search_logs", '{"query":42}'),
            toolCall("call_crash", "crash", "{}"),
          ),
          textStep("done"),
        ],
      });
      const result = await generateText({
        model,
        tools,
        prompt: "Why is the api down?",
        stopWhen: isStepCount(3),
      });
      text = result.text;
    } finally {
      await mcp.close();
    }
    assert.equal(text, "done");
    assert.equal(model.doGenerateCalls.length, 2);
    assert.deepEqual(
      model.doGenerateCalls[0]!.tools?.map((tool) => tool.name),
      ["search_logs", "crash", "wait_for_abort", "restart_service"],
    );

    // The SDK's MCP tools hand the model the text content item, which is the result's JSON; an
    // `isError` result reaches it the same way (as content, not as a tool error).
    const asText = (value: unknown) => ({
      type: "content",
      value: [{ type: "text", text: JSON.stringify(value) }],
    });
    const ready = {
      evidence: "EVIDENCE_FOUND",
      scope: 'logs, query "timeout"',
      content: ["12:01 timeout"],
    };
    const refused = (code: "NOT_READ_ONLY" | "EXECUTION_FAILED") => ({
      code,
      message: ERROR_MESSAGES[code],
    });
    const invalid = {
      code: "INVALID_INPUT",
      message: ERROR_MESSAGES.INVALID_INPUT,
      issues: [{ path: "query", expected: "string" }],
    };
    const part = (toolCallId: string, toolName: string, value: unknown) => ({
      type: "tool-result",
      toolCallId,
      toolName,
      output: asText(value),
    });
    const received = plain(model.doGenerateCalls[1]!.prompt.at(-1));
    assert.deepEqual(received, {
      role: "tool",
      content: [
        part("call_read", "search_logs", ready),
        part("call_write", "restart_service", refused("NOT_READ_ONLY")),
        part("call_bad", "search_logs", invalid),
        part("call_crash", "crash", refused("EXECUTION_FAILED")),
      ],
    });
    assert.ok(!JSON.stringify(plain(model.doGenerateCalls)).includes(CANARY_SECRET));

    // What the server received, in order: `server/discover`, `tools/list`, then the step's four
    // calls, every one a POST at 2026-07-28 with its `_meta` envelope, none with a session;
    // nothing else (no `initialize`, no GET for a stream, no DELETE on close).
    assert.ok(seen.every((request) => request.method === "POST"));
    assert.ok(seen.every((request) => request.session === null && request.issued === null));
    assert.ok(seen.every((request) => request.version === "2026-07-28" && request.status === 200));
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "ai-sdk-mcp-client", version: "1.0.0" },
    };
    assert.deepEqual(seen[0]!.rpc, {
      jsonrpc: "2.0",
      id: 0,
      method: "server/discover",
      params: { _meta: envelope },
    });
    assert.deepEqual(seen[0]!.answer, {
      jsonrpc: "2.0",
      id: 0,
      result: {
        resultType: "complete",
        supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
        capabilities: { tools: {} },
        ttlMs: 0,
        cacheScope: "private",
        _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO },
      },
    });
    assert.deepEqual(seen.map((request) => request.rpc?.method), [
      "server/discover",
      "tools/list",
      "tools/call",
      "tools/call",
      "tools/call",
      "tools/call",
    ]);
    // The step's calls run concurrently; the client numbers them in the step's order.
    const calls = seen.slice(2).map((request) => request.rpc!).sort((a, b) => a.id! - b.id!);
    assert.deepEqual(calls.map((rpc) => [rpc.id, rpc.params]), [
      [2, { name: "search_logs", arguments: { query: "timeout" }, _meta: envelope }],
      [3, { name: "restart_service", arguments: { service: "api" }, _meta: envelope }],
      [4, { name: "search_logs", arguments: { query: 42 }, _meta: envelope }],
      [5, { name: "crash", arguments: {}, _meta: envelope }],
    ]);

    // The harness's view: the client sends no `_meta` tool call ID and there is no session, so
    // each call got a fresh ID, which its result names in `_meta`. The writable and invalid
    // calls were refused before any record.
    const idOf = (request: Seen) =>
      (request.answer as { result: { _meta: Record<string, string> } }).result
        ._meta["io.tool-boundary/toolCallId"]!;
    const byName = new Map(
      seen.slice(2).map((request) => [
        `${request.rpc!.params!.name}:${JSON.stringify(request.rpc!.params!.arguments)}`,
        idOf(request),
      ]),
    );
    for (const id of byName.values()) assert.match(id, /^mcp-[A-Za-z0-9_-]{22}$/);
    assert.equal(new Set(byName.values()).size, 4);
    const { run, calls: recorded } = await harness(`/v1/runs/${runId}`);
    assert.deepEqual(run.used, { calls: 2, perTool: { search_logs: 1, crash: 1 } });
    const read = byName.get('search_logs:{"query":"timeout"}')!;
    const crashed = byName.get("crash:{}")!;
    assert.deepEqual(
      (recorded as Record<string, unknown>[])
        .map((call) => [call.toolCallId, call.toolName, call.status, call.evidence, call.errorCode])
        .sort((a, b) => String(a[1]) < String(b[1]) ? -1 : 1),
      [
        [crashed, "crash", "ERROR", "ERROR", "EXECUTION_FAILED"],
        [read, "search_logs", "READY", "EVIDENCE_FOUND", null],
      ],
    );
    const record = await harness(`/v1/runs/${runId}/tool-calls/${read}`);
    assert.deepEqual([record.status, record.request], ["READY", { query: "timeout" }]);
  } finally {
    await stop();
  }
});

Deno.test("@ai-sdk/mcp: with protocolVersionDiscovery off, the client initializes at once", async () => {
  const { base, seen, harness, stop } = serve();
  try {
    const { runId, agentToken } = await harness("/v1/runs", { ttlMs: 60_000 });
    const mcp = await createMCPClient({
      transport: {
        type: "http",
        url: `${base}/v1/runs/${runId}/mcp`,
        headers: { authorization: `Bearer ${agentToken}` },
      },
      protocolVersionDiscovery: false,
    });
    try {
      assert.deepEqual(mcp.initializeResult, initialized);
      assert.deepEqual(Object.keys(await mcp.tools()), ["search_logs", "crash", "wait_for_abort"]);
    } finally {
      await mcp.close();
    }
    const posts = seen.filter((request) => request.method === "POST");
    assert.deepEqual(
      posts.map((request) => [request.rpc?.method, request.version, request.status]),
      [
        ["initialize", "2025-11-25", 200],
        ["notifications/initialized", "2025-11-25", 202],
        ["tools/list", "2025-11-25", 200],
      ],
    );
  } finally {
    await stop();
  }
});
