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
import {
  EVERYTHING_UPSTREAM,
  gatewayRun,
  harnessRecord,
  mcpConnect,
  SERVER_SECRET,
  startMcpRun,
} from "./runtime/mcp_flow.ts";
import { ROOT, serveDeno, start } from "./runtime/process.ts";

const NO_UPSTASH = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };
const ENV = { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET, ...NO_UPSTASH };

Deno.test("deno run edge/gateway_deno.ts serves an upstream's tools over its MCP route", async () => {
  const upstream = await startEverything();
  try {
    const [child, base] = await serveDeno("edge/gateway_deno.ts", {
      ...ENV,
      MCP_UPSTREAMS: EVERYTHING_UPSTREAM(upstream.url),
    }, "run");
    try {
      await child.waitFor(/everything_echo, .*everything_get-env \(refused\)/);
      await gatewayRun(base, HARNESS_TOKEN);
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
    const child = start(Deno.execPath(), ["task", "dev"], {
      cwd: ROOT,
      env: { ...ENV, PORT: "0", MCP_UPSTREAMS: EVERYTHING_UPSTREAM(upstream.url) },
    });
    try {
      const [, base] = await child.waitFor(/dev server on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
      await child.waitFor(/MCP gateway \(MCP_UPSTREAMS\):/);
      await gatewayRun(base!, HARNESS_TOKEN);
    } finally {
      await child.stop();
    }
  } finally {
    await upstream.stop();
  }
});

Deno.test("a gateway in front of another boundary's MCP route: one ID in both ledgers", async () => {
  const [far, farBase] = await serveDeno("edge/deno.ts", ENV);
  try {
    // The far side's run, reached with its run token, as any upstream with credentials.
    const farRun = await startMcpRun(farBase, HARNESS_TOKEN);
    const [near, nearBase] = await serveDeno("edge/gateway_deno.ts", {
      ...ENV,
      MCP_UPSTREAMS: JSON.stringify([{
        url: `${farBase}/v1/runs/${farRun.runId}/mcp`,
        headers: { authorization: `Bearer ${farRun.agentToken}` },
        readOnly: { search_runbook: true },
      }]),
    }, "run");
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
      const nearRecord = await harnessRecord(nearBase, HARNESS_TOKEN, runId, "call_chain");
      const farRecord = await harnessRecord(farBase, HARNESS_TOKEN, farRun.runId, "call_chain");
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
