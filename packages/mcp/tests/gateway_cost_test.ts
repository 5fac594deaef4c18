/**
 * Costs of the gateway's tools: `cost` and `toolCosts` of `MCP_UPSTREAMS`, checked before
 * anything connects, carried into the boundary as the tools' `cost`; a run started over HTTP with
 * `budget.cost` then refuses the calls it cannot cover with BUDGET_EXHAUSTED, and those never
 * reach the upstream server (a real one: the official SDK's server over Streamable HTTP).
 */
import assert from "node:assert/strict";
import { Server } from "@modelcontextprotocol/sdk/server";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ERROR_MESSAGES, ToolBoundary } from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import { createApp } from "@tool-boundary/core/hono";
import { mcpRoute } from "@tool-boundary/core/mcp";
import { TOOL_CALL_ID_META } from "@tool-boundary/core/harness";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connectGateway, upstreamsOf } from "../gateway.ts";
import { mcpTools } from "../mod.ts";
import { MAX_COST } from "../../../src/harness/mod.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";

/** A stateless upstream with three tools, counting the calls that reach it by name. */
function upstream() {
  const calls: Record<string, number> = {};
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const server = new Server({ name: "docs", version: "1.0.0" }, {
      capabilities: { tools: {} },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { name: "search", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
        { name: "lookup", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
        { name: "delete", inputSchema: { type: "object" } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const name = request.params.name;
      calls[name] = (calls[name] ?? 0) + 1;
      return { content: [{ type: "text", text: `${name} answered` }] };
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    return await transport.handleRequest(req);
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    calls,
    shutdown: () => http.shutdown(),
  };
}

Deno.test("MCP_UPSTREAMS takes cost and toolCosts, and refuses any that is not a cost before anything connects", () => {
  const url = "https://a.example/mcp";
  assert.deepEqual(
    upstreamsOf(JSON.stringify([{ url, cost: 2, toolCosts: { search: 5, lookup: 0 } }])),
    [{ url, cost: 2, toolCosts: { search: 5, lookup: 0 } }],
  );
  assert.deepEqual(
    upstreamsOf(JSON.stringify([{ command: "node", cost: MAX_COST, toolCosts: {} }])),
    [{ command: "node", cost: MAX_COST, toolCosts: {} }],
  );
  for (
    const [text, message] of [
      [`[{"url":"${url}","cost":-1}]`, /at 0\.cost: cost must be a whole number of cost units/],
      [`[{"url":"${url}","cost":1.5}]`, /at 0\.cost: cost must be a whole number/],
      [`[{"url":"${url}","cost":-0}]`, /at 0\.cost: cost must be a whole number/],
      [`[{"url":"${url}","cost":"5"}]`, /at 0\.cost: cost must be a whole number/],
      [`[{"url":"${url}","cost":null}]`, /at 0\.cost/],
      [`[{"url":"${url}","cost":1000000000001}]`, /at 0\.cost: .* from 0 to 1000000000000$/],
      [`[{"command":"node","cost":1e400}]`, /at 0\.cost: cost must be/],
      [`[{"url":"${url}","toolCosts":{"search":-5}}]`, /at 0\.toolCosts: toolCosts must map/],
      [`[{"url":"${url}","toolCosts":{"search":"5"}}]`, /at 0\.toolCosts: toolCosts must map/],
      [`[{"url":"${url}","toolCosts":[5]}]`, /at 0\.toolCosts: toolCosts must map tool names/],
      [`[{"url":"${url}","toolCosts":5}]`, /at 0\.toolCosts: toolCosts must map tool names/],
      // A value under a key named like an Object.prototype one is checked, not skipped.
      [`[{"url":"${url}","toolCosts":{"__proto__":-1}}]`, /at 0\.toolCosts: toolCosts must/],
      [`[{"url":"${url}","toolCosts":{"constructor":0.5}}]`, /at 0\.toolCosts: toolCosts must/],
      // Its own spelling only.
      [`[{"url":"${url}","costs":{"search":5}}]`, /at 0\.costs: an upstream with a url has only/],
    ] as const
  ) {
    assert.throws(() => upstreamsOf(text), message, text);
  }
  const [kept] = upstreamsOf(`[{"url":"${url}","toolCosts":{"constructor":3}}]`);
  assert.equal(Object.hasOwn(kept!.toolCosts!, "constructor"), true);
  assert.equal(kept!.toolCosts!.constructor, 3);
});

Deno.test("connectGateway refuses toolCosts that name no tool of the upstream, naming the upstream", async () => {
  const server = upstream();
  try {
    const config = JSON.stringify([{ url: server.url, trusted: true, toolCosts: { serach: 5 } }]);
    await assert.rejects(
      connectGateway(upstreamsOf(config), { log: () => {} }),
      (error: Error) => {
        assert.equal(
          error.message,
          `${new URL(server.url).origin}: Cannot wrap MCP tools: toolCosts names "serach", ` +
            "not a listed tool",
        );
        return true;
      },
    );
    assert.deepEqual(server.calls, {});
  } finally {
    await server.shutdown();
  }
});

Deno.test("mcpTools refuses a cost that is not one, before it lists the tools", async () => {
  let listed = 0;
  const client = {
    listTools: () => {
      listed++;
      return Promise.resolve({ tools: [] });
    },
    callTool: () => Promise.resolve({ content: [] }),
  };
  for (
    const [options, message] of [
      [{ cost: -1 }, /cost must be a whole number of cost units from 0 to 1000000000000/],
      [{ cost: MAX_COST + 1 }, /cost must be/],
      [{ toolCosts: { search: 2.5 } }, /toolCosts\["search"\] must be a whole number/],
    ] as const
  ) {
    await assert.rejects(mcpTools(client, options), message);
  }
  assert.equal(listed, 0);
});

for (const perRequest of [false, true]) {
  Deno.test(`connectGateway${perRequest ? " (perRequest)" : ""}: costed upstream tools, a run with budget.cost over HTTP, and the calls past it never reach the upstream`, async () => {
    const server = upstream();
    const gateway = await connectGateway(
      upstreamsOf(JSON.stringify([{
        url: server.url,
        trusted: true,
        prefix: "docs_",
        cost: 2,
        toolCosts: { search: 5 },
      }])),
      { perRequest, log: () => {} },
    );
    try {
      assert.deepEqual(
        gateway.tools.map((tool) => [tool.name, tool.readOnly, tool.cost]),
        [["docs_search", true, 5], ["docs_lookup", true, 2], ["docs_delete", false, 2]],
      );
      assert.deepEqual(gateway.summary, [
        `${new URL(server.url).origin}: docs_search (cost 5), docs_lookup (cost 2), ` +
        "docs_delete (refused)",
      ]);
      const boundary = new ToolBoundary({ store: new MemoryStore(), tools: gateway.tools });
      const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
      const send = async (path: string, body?: unknown, token = HARNESS) => {
        const res = await app.request(path, {
          method: body === undefined ? "GET" : "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: await res.json() };
      };
      const started = await send("/v1/runs", {
        runId: "run-gateway-cost",
        ttlMs: 60_000,
        budget: { calls: 10, cost: 9 },
      });
      assert.equal(started.status, 201);
      assert.equal(started.body.budget.cost, 9);
      const call = (toolCallId: string, toolName: string) =>
        send("/v1/runs/run-gateway-cost/tool-calls", { toolCallId, toolName, input: {} }, AGENT);

      const outcomes = [];
      for (
        const [id, tool] of [
          ["c1", "docs_search"], // 5 of 9
          ["c2", "docs_lookup"], // 7 of 9
          ["c3", "docs_search"], // 7 + 5 > 9: refused
          ["c4", "docs_lookup"], // 9 of 9
          ["c5", "docs_lookup"], // 9 + 2 > 9: refused
          ["c6", "docs_delete"], // not read-only: refused before its cost
        ] as const
      ) {
        const { status, body } = await call(id, tool);
        outcomes.push([id, status, body.status === "ERROR" ? body.code : body.content]);
        if (body.code === "BUDGET_EXHAUSTED") {
          assert.deepEqual(body, {
            status: "ERROR",
            toolCallId: id,
            code: "BUDGET_EXHAUSTED",
            message: ERROR_MESSAGES.BUDGET_EXHAUSTED,
          });
        }
      }
      assert.deepEqual(outcomes, [
        ["c1", 200, ["search answered"]],
        ["c2", 200, ["lookup answered"]],
        ["c3", 429, "BUDGET_EXHAUSTED"],
        ["c4", 200, ["lookup answered"]],
        ["c5", 429, "BUDGET_EXHAUSTED"],
        ["c6", 403, "NOT_READ_ONLY"],
      ]);
      // Only the calls the budget covered reached the upstream server.
      assert.deepEqual(server.calls, { search: 1, lookup: 2 });

      const read = await send("/v1/runs/run-gateway-cost");
      assert.deepEqual(read.body.run.budget.cost, 9);
      assert.deepEqual(read.body.run.cost, { reserved: 0, spent: 9 });
      assert.deepEqual(
        read.body.calls.map((c: { toolCallId: string }) => c.toolCallId),
        ["c1", "c2", "c4"],
      );
      const record = await send("/v1/runs/run-gateway-cost/tool-calls/c1");
      assert.deepEqual(record.body.cost, { reserved: 5, spent: 5 });
    } finally {
      await gateway.close();
      await server.shutdown();
    }
  });
}

Deno.test("through the gateway's MCP route, a call past the run's budget.cost is an error result and never reaches the upstream", async () => {
  const server = upstream();
  const gateway = await connectGateway(
    upstreamsOf(JSON.stringify([{ url: server.url, trusted: true, toolCosts: { search: 4 } }])),
    { log: () => {} },
  );
  const base = "http://gateway.test";
  try {
    const boundary = new ToolBoundary({ store: new MemoryStore(), tools: gateway.tools });
    const app = createApp({
      boundary,
      agentToken: AGENT,
      harnessToken: HARNESS,
      secret: "server-secret-0123456789abcdef-0123",
      mcp: mcpRoute(),
    });
    const fetchApp = (input: string | URL | Request, init?: RequestInit) =>
      Promise.resolve(app.fetch(new Request(input, init)));
    const started = await (await fetchApp(`${base}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${HARNESS}`, "content-type": "application/json" },
      body: JSON.stringify({ ttlMs: 60_000, budget: { calls: 10, cost: 6 } }),
    })).json();
    assert.equal(started.budget.cost, 6);
    // The agent's own client, with the run's token.
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/v1/runs/${started.runId}/mcp`), {
        fetch: fetchApp,
        requestInit: { headers: { authorization: `Bearer ${started.agentToken}` } },
      }),
    );
    try {
      const call = (id: string, name: string) =>
        client.callTool({ name, arguments: {}, _meta: { [TOOL_CALL_ID_META]: id } });
      const first = await call("m1", "search"); // 4 of 6
      assert.equal(first.isError, undefined);
      const second = await call("m2", "search"); // 4 + 4 > 6
      assert.equal(second.isError, true);
      // The model's view of the refusal: its code and fixed message.
      assert.deepEqual(second.structuredContent, {
        code: "BUDGET_EXHAUSTED",
        message: ERROR_MESSAGES.BUDGET_EXHAUSTED,
      });
      const uncosted = await call("m3", "lookup"); // not costed: never refused for it
      assert.equal(uncosted.isError, undefined);
      assert.deepEqual(server.calls, { search: 1, lookup: 1 });
    } finally {
      await client.close();
    }
    const run = await (await fetchApp(`${base}/v1/runs/${started.runId}`, {
      headers: { authorization: `Bearer ${HARNESS}` },
    })).json();
    assert.deepEqual(run.run.cost, { reserved: 0, spent: 4 });
  } finally {
    await gateway.close();
    await server.shutdown();
  }
});
