/**
 * The MCP route over real HTTP, driven by the official MCP SDK client: `deno serve edge/deno.ts`
 * (what Deno Deploy runs) with SERVER_SECRET, and the dev server with a generated secret.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TOOL_CALL_ID_META } from "../src/http/mod.ts";
import { AGENT_TOKEN, HARNESS_TOKEN } from "./runtime/flow.ts";
import { ROOT, start } from "./runtime/process.ts";

const DENO = Deno.execPath();
const NO_UPSTASH = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };
const SERVER_SECRET = "server-secret-runtime-0123456789abcdef";

/** Starts a run, then lists and calls the demo tools over MCP with the run's own token. */
async function mcpRun(base: string, harness: string): Promise<string[]> {
  const started = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${harness}`, "content-type": "application/json" },
    body: JSON.stringify({ ttlMs: 60_000 }),
  });
  assert.equal(started.status, 201);
  const { runId, agentToken } = await started.json();
  assert.match(agentToken, /^tbr\./);
  const client = new Client({ name: "server-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/runs/${runId}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
  });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    assert.ok(names.includes("search_runbook") && !names.includes("restart_service"));
    const found = await client.callTool({
      name: "search_runbook",
      arguments: { query: "disk full" },
      _meta: { [TOOL_CALL_ID_META]: "call_1" },
    });
    assert.equal((found.structuredContent as { evidence: string }).evidence, "EVIDENCE_FOUND");
    const failed = await client.callTool({ name: "query_metrics", arguments: { metric: "cpu" } });
    assert.equal(failed.isError, true);
    const restart = await client.callTool({
      name: "restart_service",
      arguments: { service: "api" },
    });
    assert.equal((restart.structuredContent as { code: string }).code, "NOT_READ_ONLY");
    const record = await fetch(`${base}/v1/runs/${runId}/tool-calls/call_1`, {
      headers: { authorization: `Bearer ${harness}` },
    });
    assert.equal((await record.json()).status, "READY");
    return [`${transport.protocolVersion}`, `${names.length} tools`, "READY", "ERROR"];
  } finally {
    await client.close();
  }
}

Deno.test("deno serve edge/deno.ts with SERVER_SECRET serves MCP to the official client with a run token", async () => {
  const child = start(DENO, [
    "serve",
    "--allow-net",
    "--allow-env",
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "edge/deno.ts",
  ], { cwd: ROOT, env: { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET, ...NO_UPSTASH } });
  try {
    const [, base] = await child.waitFor(/Listening on (http:\/\/127\.0\.0\.1:\d+)/);
    console.log(`deno serve MCP: ${(await mcpRun(base!, HARNESS_TOKEN)).join("; ")}`);
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
