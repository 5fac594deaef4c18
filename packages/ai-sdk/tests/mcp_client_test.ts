/**
 * The AI SDK's own MCP client (`createMCPClient` of `@ai-sdk/mcp`) drives a whole `generateText`
 * tool loop, with the `ai` package's mock model, through `POST /v1/runs/{runId}/mcp` of the app
 * served over real HTTP: its protocol negotiation (a `server/discover` probe at 2026-07-28, then
 * `initialize` at 2025-11-25), what the model receives as tool results, and the records the
 * harness reads afterwards, keyed `<Mcp-Session-Id>:<JSON-RPC id>`.
 */
import assert from "node:assert/strict";
import { createMCPClient } from "@ai-sdk/mcp";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ERROR_MESSAGES, ToolBoundary } from "@tool-boundary/core";
import { createApp } from "@tool-boundary/core/hono";
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
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS, secret: SECRET });
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

/** The `initialize` result of the route, as the client keeps it. */
const initialized = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: {} },
  serverInfo: { name: "tool-boundary", version: "0.1.0" },
};

/** A value as JSON carries it (the SDK's messages hold `providerOptions: undefined`). */
function plain(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

Deno.test("@ai-sdk/mcp: a generateText tool loop through the MCP route, after the 2026-07-28 probe", async () => {
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
      assert.deepEqual(mcp.initializeResult, initialized);
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

    // What the server received, in order. The probe: `server/discover` at 2026-07-28, answered
    // 400 with JSON-RPC -32600 and id null. The client reads a JSON-RPC error that is not one of
    // the 2026-07-28 codes (-32020..-32022) as "not a 2026-07-28 server" and initializes.
    const posts = seen.filter((request) => request.method === "POST");
    assert.deepEqual(posts[0], {
      method: "POST",
      version: "2026-07-28",
      session: null,
      issued: null,
      rpc: {
        jsonrpc: "2.0",
        id: 0,
        method: "server/discover",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { name: "ai-sdk-mcp-client", version: "1.0.0" },
          },
        },
      },
      status: 400,
      answer: {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "Unsupported MCP-Protocol-Version." },
      },
    });
    const init = posts[1]!;
    assert.deepEqual([init.version, init.session, init.rpc, init.status, init.answer], [
      "2025-11-25",
      null,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "ai-sdk-mcp-client", version: "1.0.0" },
        },
      },
      200,
      { jsonrpc: "2.0", id: 1, result: initialized },
    ]);
    const session = init.issued!;
    assert.match(session, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    // Everything after initialize speaks 2025-11-25 in the session it issued.
    assert.deepEqual(
      posts.slice(2).map((request) => [request.rpc?.method, request.version, request.session]),
      [
        ["notifications/initialized", "2025-11-25", session],
        ["tools/list", "2025-11-25", session],
        ...posts.slice(4).map(() => ["tools/call", "2025-11-25", session]),
      ],
    );
    assert.deepEqual(posts.slice(2).map((request) => request.status), [
      202,
      200,
      200,
      200,
      200,
      200,
    ]);
    // The step's calls run concurrently; the client numbers them in the step's order.
    const calls = posts.slice(4).map((request) => request.rpc!).sort((a, b) => a.id! - b.id!);
    assert.deepEqual(calls.map((rpc) => [rpc.id, rpc.method, rpc.params]), [
      [3, "tools/call", { name: "search_logs", arguments: { query: "timeout" } }],
      [4, "tools/call", { name: "restart_service", arguments: { service: "api" } }],
      [5, "tools/call", { name: "search_logs", arguments: { query: 42 } }],
      [6, "tools/call", { name: "crash", arguments: {} }],
    ]);
    // Besides the POSTs: a GET for an SSE stream whenever the transport has none (once the
    // revision is set to 2025-11-25, after initialize, after the 202) and a DELETE on close;
    // the route answers all 405, which the client accepts.
    assert.deepEqual(
      seen.filter((request) => request.method !== "POST")
        .map((request) =>
          JSON.stringify([
            request.method,
            request.version,
            request.session === null ? "no session" : request.session === session ? "session" : "?",
            request.status,
          ])
        ).sort(),
      [
        ["DELETE", "2025-11-25", "session", 405],
        ["GET", "2025-11-25", "no session", 405],
        ["GET", "2025-11-25", "session", 405],
        ["GET", "2025-11-25", "session", 405],
      ].map((request) => JSON.stringify(request)),
    );

    // The harness's view: the client sends no `_meta` ID, so a call is keyed by the session and
    // its JSON-RPC id. The writable and invalid calls were refused before any record. (Sorted:
    // the two calls began concurrently.)
    const { run, calls: recorded } = await harness(`/v1/runs/${runId}`);
    assert.deepEqual(run.used, { calls: 2, perTool: { search_logs: 1, crash: 1 } });
    assert.deepEqual(
      (recorded as Record<string, unknown>[])
        .map((call) => [call.toolCallId, call.toolName, call.status, call.evidence, call.errorCode])
        .sort((a, b) => String(a[0]) < String(b[0]) ? -1 : 1),
      [
        [`${session}:3`, "search_logs", "READY", "EVIDENCE_FOUND", null],
        [`${session}:6`, "crash", "ERROR", "ERROR", "EXECUTION_FAILED"],
      ],
    );
    const record = await harness(`/v1/runs/${runId}/tool-calls/${session}:3`);
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
      assert.equal(mcp.initializeResult.protocolVersion, "2025-11-25");
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
