/**
 * The MCP route over real HTTP, driven by the official MCP SDK client: `deno serve edge/deno.ts`
 * (what Deno Deploy runs) with SERVER_SECRET, and the dev server with a generated secret; then an
 * app on `Deno.serve` in this process, for what a dropped connection and a cancel do to a call.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { mcpRoute } from "../../src/mcp/mod.ts";
import { TOOL_CALL_ID_META } from "../../src/harness/mod.ts";
import { STORES } from "../support/stores.ts";
import { AGENT_TOKEN, HARNESS_TOKEN } from "../runtime/flow.ts";
import { mcpRun, SERVER_SECRET } from "../runtime/mcp_flow.ts";
import { ROOT, serveDeno, start } from "../runtime/process.ts";
import { startHttpRun } from "../support/runs.ts";

const DENO = Deno.execPath();
const NO_UPSTASH = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };

Deno.test("deno serve edge/deno.ts with SERVER_SECRET serves MCP to the official client with a run token", async () => {
  const [child, base] = await serveDeno("edge/deno.ts", {
    AGENT_TOKEN,
    HARNESS_TOKEN,
    SERVER_SECRET,
    ...NO_UPSTASH,
  });
  try {
    console.log(`deno serve MCP: ${(await mcpRun(base, HARNESS_TOKEN)).join("; ")}`);
  } finally {
    await child.stop();
  }
});

Deno.test("the dev server generates a server secret, never prints it, and serves MCP", async () => {
  const child = start(
    DENO,
    ["run", "--allow-net", "--allow-env", "--allow-read", "edge/dev.ts"],
    {
      cwd: ROOT,
      env: { PORT: "0", AGENT_TOKEN: "", HARNESS_TOKEN: "", SERVER_SECRET: "", ...NO_UPSTASH },
    },
  );
  try {
    const [, base] = await child.waitFor(
      /dev server on (http:\/\/127\.0\.0\.1:\d+) \(loopback only\)/,
    );
    const [, harness] = await child.waitFor(/harness token \(generated for this process\): (\S+)/);
    await child.waitFor(/server secret \(generated for this process, not shown\)/);
    await mcpRun(base!, harness!);
    assert.doesNotMatch(child.output(), /dev-[0-9a-f]{32}dev-[0-9a-f]{32}/);
  } finally {
    await child.stop();
  }
});

/** A tool that runs until the test lets it end, or its signal aborts it. */
function gatedTool() {
  const gate = Promise.withResolvers<void>();
  const began = Promise.withResolvers<void>();
  const seen = { runs: 0, aborted: false };
  const tool = defineTool({
    name: "slow",
    readOnly: true,
    input: v.object({}),
    execute: async (_input, { signal }) => {
      seen.runs++;
      began.resolve();
      signal.addEventListener("abort", () => {
        seen.aborted = true;
        gate.resolve();
      });
      await gate.promise;
      return { done: true };
    },
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: "the slow tool", content: "done" }),
  });
  return { tool, seen, began: began.promise, finish: () => gate.resolve() };
}

/** The app on a loopback port, its boundary running one gated tool. */
function serveGated(options: { store?: Store; onDuplicate?: "refuse" | "replay" } = {}) {
  const gated = gatedTool();
  const boundary = new ToolBoundary({ tools: [gated.tool], ...options });
  const app = createApp({
    boundary,
    agentToken: AGENT_TOKEN,
    harnessToken: HARNESS_TOKEN,
    secret: SERVER_SECRET,
    mcp: mcpRoute(),
  });
  // Set when a client went away while its request was still being answered (Deno aborts
  // the request's signal then; after an answer, it aborts it too, which is not counted).
  let wentAway = false;
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    async (req) => {
      let answered = false;
      req.signal.addEventListener("abort", () => wentAway ||= !answered);
      const res = await app.fetch(req);
      answered = true;
      return res;
    },
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  const startRun = async () =>
    (await startHttpRun(fetch, base, HARNESS_TOKEN, { ttlMs: 60_000 })).runId as string;
  const connect = async (runId: string) => {
    const client = new Client({ name: "cancel-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/runs/${runId}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${AGENT_TOKEN}` } },
    });
    await client.connect(transport);
    return { client, transport };
  };
  /** One raw JSON-RPC POST to a run's MCP route. */
  const post = (runId: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/v1/runs/${runId}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${AGENT_TOKEN}`,
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
        ...headers,
      },
      body: JSON.stringify(body),
    });
  /** A new session on a run (an `initialize` by hand). */
  const sessionOf = async (runId: string) => {
    const res = await post(runId, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    });
    await res.body?.cancel();
    return res.headers.get("mcp-session-id")!;
  };
  /** One JSON-RPC POST written on a TCP connection of its own, left open for the caller. */
  const rawPost = async (runId: string, body: unknown, headers: Record<string, string>) => {
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    const head = [
      `POST /v1/runs/${runId}/mcp HTTP/1.1`,
      `host: 127.0.0.1:${server.addr.port}`,
      `authorization: Bearer ${AGENT_TOKEN}`,
      "content-type: application/json",
      `content-length: ${bytes.byteLength}`,
      ...Object.entries({ "mcp-protocol-version": "2025-11-25", ...headers })
        .map(([name, value]) => `${name}: ${value}`),
    ].join("\r\n");
    const socket = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    await socket.write(new TextEncoder().encode(`${head}\r\n\r\n`));
    await socket.write(bytes);
    return socket;
  };
  /** The record's status and error code once it is no longer running. */
  const settled = async (runId: string, toolCallId: string) => {
    for (let i = 0; i < 500; i++) {
      const record = await boundary.inspect(runId, toolCallId);
      if (record !== null && record.status !== "PROJECTING") {
        return [record.status, record.errorCode ?? null];
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`${toolCallId} never settled`);
  };
  return {
    ...gated,
    boundary,
    startRun,
    connect,
    post,
    sessionOf,
    rawPost,
    settled,
    /** Waits (up to 5 s) until the server saw a client go away mid-request. */
    dropped: async () => {
      for (let i = 0; i < 500 && !wentAway; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.ok(wentAway, "the server never saw the connection drop");
    },
    stop: () => server.shutdown(),
  };
}

const callId = (id: string) => ({ [TOOL_CALL_ID_META]: id });

for (const { name, open } of STORES) {
  for (const onDuplicate of ["replay", "refuse"] as const) {
    Deno.test(`${name}, ${onDuplicate}: a client that disconnects mid-call does not cancel it; the record ends READY and a retry by the same ID gets ${onDuplicate === "replay" ? "the recorded result" : "DUPLICATE_TOOL_CALL"}`, async () => {
      const opened = await open();
      const served = serveGated({ store: opened.store, onDuplicate });
      try {
        const runId = await served.startRun();
        const session = await served.sessionOf(runId);
        // The call on its own TCP connection, closed while the tool runs: a client that goes
        // away (fetch's abort on a pooled connection is not always seen by the server at once).
        const socket = await served.rawPost(runId, {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "slow", arguments: {}, _meta: callId("call_drop") },
        }, { "mcp-session-id": session });
        await served.began;
        socket.close();
        await served.dropped(); // the server saw the connection go while the tool ran
        served.finish();
        assert.deepEqual(await served.settled(runId, "call_drop"), ["READY", null]);
        assert.equal(served.seen.aborted, false);

        const retry = await served.connect(runId);
        try {
          const again = await retry.client.callTool({
            name: "slow",
            arguments: {},
            _meta: callId("call_drop"),
          });
          if (onDuplicate === "replay") {
            assert.equal(again.isError, undefined);
            assert.deepEqual(again.structuredContent, {
              evidence: "EVIDENCE_FOUND",
              scope: "the slow tool",
              content: "done",
            });
          } else {
            assert.equal(again.isError, true);
            assert.equal((again.structuredContent as { code: string }).code, "DUPLICATE_TOOL_CALL");
          }
        } finally {
          await retry.client.close();
        }
        assert.equal(served.seen.runs, 1); // the retry ran nothing
      } finally {
        await served.stop();
        await opened.close();
      }
    });
  }
}

for (const { name, open } of STORES) {
  Deno.test(`${name}: at 2026-07-28 a client that disconnects mid-call cancels it, that revision's cancel; the record ends ERROR CANCELLED`, async () => {
    const opened = await open();
    const served = serveGated({ store: opened.store });
    try {
      const runId = await served.startRun();
      const socket = await served.rawPost(runId, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "slow",
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            ...callId("call_gone"),
          },
        },
      }, { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "slow" });
      await served.began;
      socket.close();
      await served.dropped();
      assert.deepEqual(await served.settled(runId, "call_gone"), ["ERROR", "CANCELLED"]);
      assert.equal(served.seen.aborted, true, "the tool's signal fired");
      assert.equal(served.seen.runs, 1);
    } finally {
      served.finish();
      await served.stop();
      await opened.close();
    }
  });
}

Deno.test("the SDK client's own cancel (notifications/cancelled) fires the tool's signal and the record ends ERROR CANCELLED", async () => {
  const served = serveGated();
  try {
    const runId = await served.startRun();
    const { client } = await served.connect(runId);
    try {
      const stop = new AbortController();
      const pending = client.callTool(
        { name: "slow", arguments: {}, _meta: callId("call_cancel") },
        undefined,
        { signal: stop.signal },
      ).then(() => "answered", () => "cancelled");
      await served.began;
      stop.abort("the user pressed stop");
      assert.equal(await pending, "cancelled");
      assert.deepEqual(await served.settled(runId, "call_cancel"), ["ERROR", "CANCELLED"]);
      assert.equal(served.seen.aborted, true);
    } finally {
      await client.close();
    }
  } finally {
    await served.stop();
  }
});

Deno.test("a cancel for another session's, another run's, or an unknown request id does nothing", async () => {
  const served = serveGated();
  try {
    const runId = await served.startRun();
    const otherRun = await served.startRun();
    const { client, transport } = await served.connect(runId);
    try {
      // initialize was JSON-RPC id 0; this call is id 1.
      const pending = client.callTool({ name: "slow", arguments: {}, _meta: callId("call_kept") });
      await served.began;
      const cancel = (requestId: unknown) => ({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId, reason: "not yours" },
      });
      const statuses = [];
      for (
        const [run, headers, requestId] of [
          [runId, { "mcp-session-id": await served.sessionOf(runId) }, 1], // another session, same id
          [otherRun, { "mcp-session-id": await served.sessionOf(otherRun) }, 1], // another run
          [runId, {}, 1], // no session
          [runId, { "mcp-session-id": transport.sessionId! }, "1"], // "1" is not 1
          [runId, { "mcp-session-id": transport.sessionId! }, 99], // unknown id
          [runId, { "mcp-session-id": transport.sessionId! }, null], // not an id
        ] as [string, Record<string, string>, unknown][]
      ) {
        const res = await served.post(run, cancel(requestId), headers);
        statuses.push(res.status);
        await res.body?.cancel();
      }
      assert.deepEqual(statuses, [202, 202, 202, 202, 202, 202]);
      served.finish();
      const result = await pending;
      assert.equal(result.isError, undefined);
      assert.deepEqual(await served.settled(runId, "call_kept"), ["READY", null]);
      assert.equal(served.seen.aborted, false);
      // After the call ended, its own cancel finds nothing.
      const late = await served.post(runId, cancel(1), { "mcp-session-id": transport.sessionId! });
      assert.equal(late.status, 202);
      await late.body?.cancel();
      assert.deepEqual(await served.settled(runId, "call_kept"), ["READY", null]);
    } finally {
      await client.close();
    }
  } finally {
    await served.stop();
  }
});
