/**
 * The MCP gateway's Workers entry (edge/gateway_cloudflare.ts), bundled, running in workerd
 * (through miniflare, from Node) in front of the everything server from npm on loopback: the
 * official client reaches the upstream's tools through the gateway's MCP route, each call over a
 * connection of its own request; an upstream that cannot be reached, or missing bindings, answer
 * the JSON 500, and the next request builds again.
 */
import assert from "node:assert/strict";
import { TOOL_CALL_ID_META } from "../../src/mod.ts";
import { startEverything } from "../../packages/mcp/tests/upstreams.ts";
import { AGENT_TOKEN, HARNESS_TOKEN } from "./flow.ts";
import { mcpConnect, SERVER_SECRET, startMcpRun } from "./mcp_flow.ts";
import { freePort } from "./process.ts";
import { serveWorker } from "./setup.ts";

const ENTRY = "edge/gateway_cloudflare.ts";

const EVERYTHING = (url: string) =>
  JSON.stringify([{ url, trusted: true, readOnly: { "get-env": false }, prefix: "everything_" }]);

const bindings = (url: string) => ({
  AGENT_TOKEN,
  HARNESS_TOKEN,
  SERVER_SECRET,
  MCP_UPSTREAMS: EVERYTHING(url),
});

const refusal = (message: string) => ({ status: "ERROR", code: "INTERNAL_ERROR", message });

const UNREACHABLE = refusal(
  "The gateway could not reach the upstream MCP servers of MCP_UPSTREAMS: check their url and " +
    "headers; the next request tries again, and the Worker log says more.",
);

const NOT_CONFIGURED = refusal(
  "The gateway is not configured: set the AGENT_TOKEN, HARNESS_TOKEN and SERVER_SECRET secrets " +
    "and MCP_UPSTREAMS (for wrangler dev, in .dev.vars); the Worker log says more.",
);

async function record(base: string, runId: string, toolCallId: string) {
  const res = await fetch(`${base}/v1/runs/${runId}/tool-calls/${toolCallId}`, {
    headers: { authorization: `Bearer ${HARNESS_TOKEN}` },
  });
  assert.equal(res.status, 200);
  return await res.json();
}

/** Lists and calls the everything server's tools through the gateway at `base`. */
async function throughGateway(base: string): Promise<string[]> {
  const { runId, agentToken } = await startMcpRun(base, HARNESS_TOKEN);
  const { client, transport } = await mcpConnect(base, runId, agentToken);
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("everything_echo"), names.join(", "));
    assert.ok(!names.includes("everything_get-env"), "the vetoed tool is not listed");
    // Two calls, two HTTP requests to the gateway: each connects upstream on its own, since
    // workerd refuses a connection opened by another request.
    for (const [id, message] of [["call_echo", "first"], ["call_echo_2", "second"]] as const) {
      const echoed = await client.callTool({
        name: "everything_echo",
        arguments: { message: `${message} through the Workers gateway` },
        _meta: { [TOOL_CALL_ID_META]: id },
      });
      assert.equal(echoed.isError, undefined, JSON.stringify(echoed));
      assert.deepEqual(echoed.structuredContent, {
        evidence: "EVIDENCE_FOUND",
        scope: 'tool "echo" of MCP server "mcp-servers/everything"',
        content: [`Echo: ${message} through the Workers gateway`],
      });
      const held = await record(base, runId, id);
      assert.equal(held.status, "READY");
      assert.deepEqual(held.raw.content, [
        { type: "text", text: `Echo: ${message} through the Workers gateway` },
      ]);
    }
    const vetoed = await client.callTool({ name: "everything_get-env", arguments: {} });
    assert.equal((vetoed.structuredContent as { code: string }).code, "NOT_READ_ONLY");
    // A tool with an outputSchema: its result is checked against it without eval, which workerd
    // refuses.
    const weather = await client.callTool({
      name: "everything_get-structured-content",
      arguments: { location: "Chicago" },
      _meta: { [TOOL_CALL_ID_META]: "call_weather" },
    });
    assert.equal(weather.isError, undefined, JSON.stringify(weather));
    const checked = await record(base, runId, "call_weather");
    assert.equal(checked.status, "READY");
    assert.deepEqual(checked.raw.structuredContent, {
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
    return [
      `${transport.protocolVersion}`,
      `${names.length} tools`,
      "2 echoes READY",
      "structured content checked, READY",
    ];
  } finally {
    await client.close();
  }
}

Deno.test("workerd: the gateway worker serves an upstream's tools, connecting per request", async () => {
  const upstream = await startEverything();
  try {
    await serveWorker(ENTRY, bindings(upstream.url), async (base) => {
      // The first requests of the isolate, at once: both wait for the one build.
      const first = await Promise.all([1, 2, 3].map(() => fetch(`${base}/healthz`)));
      for (const res of first) assert.equal(res.status, 200, await res.text());
      console.log(`workerd gateway: ${(await throughGateway(base)).join("; ")}`);
    });
    // Every per-request connection ended its upstream session: none is left open there.
    const log = upstream.output();
    const opened = log.match(/Session initialized with ID: (\S+)/g)?.length ?? 0;
    const ended = log.match(/Received session termination request for session/g)?.length ?? 0;
    assert.ok(opened >= 4, log); // the listing, the two calls, the structured one at least
    assert.equal(ended, opened, "one DELETE per session");
  } finally {
    await upstream.stop();
  }
});

Deno.test("workerd: an unreachable upstream gets the JSON 500, and a later request builds again", async () => {
  const port = freePort();
  await serveWorker(ENTRY, bindings(`http://127.0.0.1:${port}/mcp`), async (base) => {
    // Nothing listens there: every request fails closed, and the worker keeps answering.
    for (const path of ["/healthz", "/v1/runs", "/healthz"]) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 500, path);
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.deepEqual(await res.json(), UNREACHABLE);
    }
    // The failure was not kept: once the upstream is up, the next request builds the gateway.
    const upstream = await startEverything(port);
    try {
      console.log(`workerd gateway, upstream back: ${(await throughGateway(base)).join("; ")}`);
    } finally {
      await upstream.stop();
    }
  });
});

Deno.test("workerd: the gateway worker without its bindings fails closed with a JSON 500", async () => {
  const cases: Record<string, string>[] = [
    // No upstreams: a gateway with no tools is a misconfiguration, not an empty gateway.
    { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET },
    { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET, MCP_UPSTREAMS: "[{}]" },
    // No harness token, and an upstream that would refuse: the bindings are checked first.
    { AGENT_TOKEN, SERVER_SECRET, MCP_UPSTREAMS: EVERYTHING(`http://127.0.0.1:${freePort()}/`) },
  ];
  for (const env of cases) {
    await serveWorker(ENTRY, env, async (base) => {
      for (const path of ["/healthz", "/v1/runs"]) {
        const res = await fetch(`${base}${path}`);
        assert.equal(res.status, 500, `${path} with ${Object.keys(env).join(", ")}`);
        assert.deepEqual(await res.json(), NOT_CONFIGURED);
      }
    });
  }
});
