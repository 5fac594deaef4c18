/**
 * The deployable MCP gateway: `deno serve edge/gateway_deno.ts` and `deno task dev`, configured
 * by MCP_UPSTREAMS, in front of real upstreams over Streamable HTTP: the everything server from
 * npm, and another tool-boundary app's own MCP route (so the tool call ID is seen arriving on the
 * far side). Any MCP client reaches the upstream tools through the gateway's MCP route, and every
 * call has its record in the gateway.
 */
import assert from "node:assert/strict";
import { TOOL_CALL_ID_META } from "../src/mod.ts";
import { startEverything } from "../packages/mcp/tests/upstreams.ts";
import { upstreamsOf } from "../edge/gateway.ts";
import { AGENT_TOKEN, HARNESS_TOKEN } from "./runtime/flow.ts";
import { mcpConnect, SERVER_SECRET, startMcpRun } from "./runtime/mcp_flow.ts";
import { type Child, ROOT, start } from "./runtime/process.ts";

const DENO = Deno.execPath();
const NO_UPSTASH = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };
const ENV = { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET, ...NO_UPSTASH };

/** `deno serve` of an entry (or `deno run` of the gateway) on a free port, and its base URL. */
async function serve(entry: string, env: Record<string, string>): Promise<[Child, string]> {
  const args = entry === "edge/gateway_deno.ts"
    ? ["run", "--allow-net", "--allow-env", entry]
    : ["serve", "--allow-net", "--allow-env", "--host", "127.0.0.1", "--port", "0", entry];
  const child = start(DENO, args, {
    cwd: ROOT,
    env: { ...env, HOST: "127.0.0.1", PORT: "0" },
  });
  try {
    const [, base] = await child.waitFor(/Listening on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
    return [child, base!];
  } catch (error) {
    await child.stop();
    throw error;
  }
}

async function record(base: string, runId: string, toolCallId: string) {
  const res = await fetch(`${base}/v1/runs/${runId}/tool-calls/${toolCallId}`, {
    headers: { authorization: `Bearer ${HARNESS_TOKEN}` },
  });
  return await res.json();
}

/** Drives the everything server's tools through a gateway at `base`, over its MCP route. */
async function throughGateway(base: string): Promise<void> {
  const { runId, agentToken } = await startMcpRun(base, HARNESS_TOKEN);
  const { client } = await mcpConnect(base, runId, agentToken);
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    // Trusted read-only tools are listed; get-env (vetoed) and writable ones are not.
    assert.ok(names.includes("everything_echo") && names.includes("everything_get-sum"));
    assert.ok(!names.includes("everything_get-env"));
    assert.ok(!names.includes("everything_gzip-file-as-resource"));
    const echoed = await client.callTool({
      name: "everything_echo",
      arguments: { message: "through the gateway" },
      _meta: { [TOOL_CALL_ID_META]: "call_echo" },
    });
    assert.deepEqual(echoed.structuredContent, {
      evidence: "EVIDENCE_FOUND",
      scope: 'tool "echo" of MCP server "mcp-servers/everything"',
      content: ["Echo: through the gateway"],
    });
    const vetoed = await client.callTool({ name: "everything_get-env", arguments: {} });
    assert.equal((vetoed.structuredContent as { code: string }).code, "NOT_READ_ONLY");
    const held = await record(base, runId, "call_echo");
    assert.equal(held.status, "READY");
    assert.deepEqual(held.raw.content, [{ type: "text", text: "Echo: through the gateway" }]);
    // A tool with an outputSchema: the gateway's client checks its result with the validator.
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
  } finally {
    await client.close();
  }
}

const EVERYTHING = (url: string) =>
  JSON.stringify([{ url, trusted: true, readOnly: { "get-env": false }, prefix: "everything_" }]);

Deno.test("deno run edge/gateway_deno.ts serves an upstream's tools over its MCP route", async () => {
  const upstream = await startEverything();
  try {
    const [child, base] = await serve("edge/gateway_deno.ts", {
      ...ENV,
      MCP_UPSTREAMS: EVERYTHING(upstream.url),
    });
    try {
      await child.waitFor(/everything_echo, .*everything_get-env \(refused\)/);
      await throughGateway(base);
    } finally {
      await child.stop();
    }
  } finally {
    await upstream.stop();
  }
});

Deno.test("deno task dev with MCP_UPSTREAMS is the gateway", async () => {
  const upstream = await startEverything();
  try {
    const child = start(DENO, ["task", "dev"], {
      cwd: ROOT,
      env: { ...ENV, PORT: "0", MCP_UPSTREAMS: EVERYTHING(upstream.url) },
    });
    try {
      const [, base] = await child.waitFor(/dev server on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
      await child.waitFor(/MCP gateway \(MCP_UPSTREAMS\):/);
      await throughGateway(base!);
    } finally {
      await child.stop();
    }
  } finally {
    await upstream.stop();
  }
});

Deno.test("a gateway in front of another boundary's MCP route: one ID in both ledgers", async () => {
  const [far, farBase] = await serve("edge/deno.ts", ENV);
  try {
    // The far side's run, reached with its run token, as any upstream with credentials.
    const farRun = await startMcpRun(farBase, HARNESS_TOKEN);
    const [near, nearBase] = await serve("edge/gateway_deno.ts", {
      ...ENV,
      MCP_UPSTREAMS: JSON.stringify([{
        url: `${farBase}/v1/runs/${farRun.runId}/mcp`,
        headers: { authorization: `Bearer ${farRun.agentToken}` },
        readOnly: { search_runbook: true },
      }]),
    });
    try {
      const { runId, agentToken } = await startMcpRun(nearBase, HARNESS_TOKEN);
      const { client } = await mcpConnect(nearBase, runId, agentToken);
      let farText = "";
      try {
        // Untrusted: only the tool readOnly names is listed.
        const listed = (await client.listTools()).tools.map((tool) => tool.name);
        assert.deepEqual(listed, ["search_runbook"]);
        const found = await client.callTool({
          name: "search_runbook",
          arguments: { query: "disk full" },
          _meta: { [TOOL_CALL_ID_META]: "call_chain" },
        });
        assert.equal(found.isError, undefined);
        // The far route declares no outputSchema: the default projector passed its text on.
        const near = found.structuredContent as { evidence: string; content: string[] };
        assert.equal(near.evidence, "EVIDENCE_FOUND");
        farText = near.content[0]!;
      } finally {
        await client.close();
      }
      const nearRecord = await record(nearBase, runId, "call_chain");
      const farRecord = await record(farBase, farRun.runId, "call_chain");
      assert.equal(nearRecord.status, "READY");
      assert.equal(farRecord.status, "READY", "the far side recorded the same tool call ID");
      assert.deepEqual(farRecord.request, { query: "disk full" });
      // What the far side showed its agent is what the near side got and recorded as raw.
      assert.deepEqual(nearRecord.raw.structuredContent, JSON.parse(farText));
      const { evidence, scope, content } = farRecord.agentResult;
      assert.deepEqual(JSON.parse(farText), { evidence, scope, content });
    } finally {
      await near.stop();
    }
  } finally {
    await far.stop();
  }
});

Deno.test("MCP_UPSTREAMS is checked before anything connects", () => {
  assert.deepEqual(upstreamsOf(undefined), []);
  assert.deepEqual(upstreamsOf(" "), []);
  assert.deepEqual(upstreamsOf('[{"url":"https://mcp.example.com/mcp","trusted":true}]'), [
    { url: "https://mcp.example.com/mcp", trusted: true },
  ]);
  for (
    const [text, message] of [
      ["{", /must be a JSON array/],
      ['{"url":"https://a.example"}', /not valid at the top/],
      ['[{"url":"ftp://a.example"}]', /at 0\.url: url must be http or https/],
      ['[{"url":"https://a.example","trusted":"yes"}]', /at 0\.trusted/],
      ['[{"url":"https://a.example","readonly":{}}]', /at 0/],
      // A veto on a tool named like an Object.prototype key must not be dropped.
      ['[{"url":"https://a.example","readOnly":{"constructor":"no"}}]', /readOnly must map/],
    ] as const
  ) {
    assert.throws(() => upstreamsOf(text), message, text);
  }
  const [kept] = upstreamsOf('[{"url":"https://a.example","readOnly":{"constructor":false}}]');
  assert.equal(Object.hasOwn(kept!.readOnly!, "constructor"), true);
  assert.equal(kept!.readOnly!.constructor, false);
});
