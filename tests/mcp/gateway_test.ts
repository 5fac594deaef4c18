/**
 * The deployable MCP gateway: `deno serve edge/gateway_deno.ts` and `deno task dev:gateway`, configured
 * by MCP_UPSTREAMS, in front of real upstreams over Streamable HTTP: the everything server from
 * npm, and another tool-boundary app's own MCP route (so the tool call ID is seen arriving on the
 * far side). Any MCP client reaches the upstream tools through the gateway's MCP route, and every
 * call has its record in the gateway. What MCP_UPSTREAMS refuses; stdio upstreams are in
 * gateway_stdio_test.ts.
 */
import assert from "node:assert/strict";
import { TOOL_CALL_ID_META } from "../../src/harness/mod.ts";
import { startEverything } from "../support/mcp_upstreams.ts";
import { type HttpUpstream, type StdioUpstream, upstreamsOf } from "@tool-boundary/mcp/gateway";
import { AGENT_TOKEN, HARNESS_TOKEN } from "../runtime/flow.ts";
import {
  EVERYTHING_UPSTREAM,
  gatewayRun,
  harnessRecord,
  mcpConnect,
  SERVER_SECRET,
  startMcpRun,
} from "../runtime/mcp_flow.ts";
import { freePort, ROOT, serveDeno, start, WORKSPACE_CONFIG } from "../runtime/process.ts";

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

Deno.test("deno task dev:gateway with MCP_UPSTREAMS is the gateway", async () => {
  const upstream = await startEverything();
  try {
    const child = start(Deno.execPath(), ["task", "dev:gateway"], {
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

Deno.test("deno run edge/gateway_deno.ts refuses an unreachable upstream in one line naming its origin, never its query string or user", async () => {
  const port = freePort(); // nothing listens there: connection refused
  const child = start(Deno.execPath(), [
    "run",
    ...WORKSPACE_CONFIG,
    "--allow-net",
    "--allow-env",
    "edge/gateway_deno.ts",
  ], {
    cwd: ROOT,
    env: {
      ...ENV,
      MCP_UPSTREAMS: JSON.stringify([{
        url: `http://user:pa55word@127.0.0.1:${port}/mcp/secret-path?key=s3cret-key&x=1#frag`,
      }]),
    },
  });
  const status = await child.status;
  const output = child.output();
  assert.equal(status.code, 2, output);
  const lines = output.trim().split("\n");
  assert.equal(lines.length, 1, output);
  assert.match(
    lines[0]!,
    new RegExp(
      `^Refusing to start: MCP_UPSTREAMS names an upstream that did not connect .*: ` +
        `Error: http://127\\.0\\.0\\.1:${port}: `,
    ),
  );
  for (const secret of ["s3cret-key", "key=", "pa55word", "user", "secret-path", "frag"]) {
    assert.ok(!output.includes(secret), `${secret} in: ${output}`);
  }
});

Deno.test("MCP_UPSTREAMS refuses a url that is not one without quoting it", () => {
  assert.throws(
    () => upstreamsOf('[{"url":"not a url?key=s3cret-key"}]'),
    (error: Error) =>
      error.message === "MCP_UPSTREAMS is not valid at 0.url: url must be an absolute URL",
  );
});

Deno.test("deno task dev with MCP_UPSTREAMS stops and names task dev:gateway", async () => {
  // task dev keeps to the core's deno.json, which does not know packages/mcp.
  const child = start(Deno.execPath(), ["task", "dev"], {
    cwd: ROOT,
    env: { ...ENV, PORT: "0", MCP_UPSTREAMS: EVERYTHING_UPSTREAM("http://127.0.0.1:9/mcp") },
  });
  const status = await child.status;
  assert.equal(status.code, 2);
  assert.match(child.output(), /MCP_UPSTREAMS needs the MCP gateway .*task dev:gateway/);
  assert.doesNotMatch(child.output(), /dev server on/);
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
      ["{", /: MCP_UPSTREAMS is not valid JSON: a JSON array of upstream objects is expected$/],
      ['{"url":"https://a.example"}', /not valid at the top/],
      ['[{"url":"ftp://a.example"}]', /at 0\.url: url must be http or https/],
      ['[{"url":"https://a.example","trusted":"yes"}]', /at 0\.trusted/],
      ['[{"url":"https://a.example","readonly":{}}]', /at 0\.readonly: an upstream with a url/],
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

/** MCP_UPSTREAMS with one entry. */
const one = (entry: Record<string, unknown>) => JSON.stringify([entry]);
const URL_ENTRY = { url: "https://a.example/mcp" };
const COMMAND_ENTRY = { command: "node", args: ["server.js"] };

Deno.test("MCP_UPSTREAMS refuses what the gateway cannot honour, naming the entry and field", () => {
  const limit = 2 ** 31 - 1 - 1_000;
  for (
    const [text, message] of [
      // Exactly one of url and command.
      [one({ ...URL_ENTRY, ...COMMAND_ENTRY }), /at 0: an upstream has exactly one of url and/],
      [one({ trusted: true }), /at 0: an upstream has exactly one of url and command/],
      ["[{}]", /at 0: an upstream has exactly one/],
      ['[{"url":null,"command":"node"}]', /at 0: an upstream has exactly one/],
      ["[1]", /at 0: an upstream object is expected/],
      [`[${JSON.stringify(URL_ENTRY)},null]`, /at 1: an upstream object is expected/],
      // The command, its arguments, environment and folder.
      [one({ command: "" }), /at 0\.command: command must name a program/],
      [one({ command: "  " }), /at 0\.command: command must name a program/],
      [one({ command: 7 }), /at 0\.command/],
      [one({ command: "node\u0000x" }), /at 0\.command: command must not hold a NUL/],
      [one({ ...COMMAND_ENTRY, args: "server.js" }), /at 0\.args: args must be an array/],
      [one({ ...COMMAND_ENTRY, args: ["server.js", 1] }), /at 0\.args\.1: args must be strings/],
      [one({ ...COMMAND_ENTRY, env: { PORT: 8080 } }), /at 0\.env: env must map variable names/],
      [one({ ...COMMAND_ENTRY, env: ["A=1"] }), /at 0\.env: env must map/],
      [one({ ...COMMAND_ENTRY, env: { "A=B": "1" } }), /at 0\.env: env must map/],
      [one({ ...COMMAND_ENTRY, env: { "": "1" } }), /at 0\.env: env must map/],
      [one({ ...COMMAND_ENTRY, env: { A: "x\u0000y" } }), /at 0\.env: env must map/],
      [one({ ...COMMAND_ENTRY, cwd: "" }), /at 0\.cwd: cwd must name a folder/],
      // Each kind's fields only: no headers for a command, no args for a url.
      [one({ ...COMMAND_ENTRY, headers: {} }), /at 0\.headers: an upstream with a command has/],
      [one({ ...URL_ENTRY, args: [] }), /at 0\.args: an upstream with a url has only url,/],
      [one({ ...URL_ENTRY, env: {} }), /at 0\.env/],
      // A time limit a timer can hold, after the client's extra second.
      [one({ ...URL_ENTRY, timeoutMs: 0 }), /at 0\.timeoutMs: timeoutMs must be at least 1/],
      [one({ ...COMMAND_ENTRY, timeoutMs: -5 }), /at 0\.timeoutMs: timeoutMs must be at least/],
      [one({ ...URL_ENTRY, timeoutMs: 1.5 }), /at 0\.timeoutMs: timeoutMs must be a whole/],
      [one({ ...URL_ENTRY, timeoutMs: "30000" }), /at 0\.timeoutMs/],
      [one({ ...URL_ENTRY, timeoutMs: limit + 1 }), /at 0\.timeoutMs: timeoutMs must be at most/],
      ['[{"url":"https://a.example/mcp","timeoutMs":1e400}]', /at 0\.timeoutMs/],
      // Record values under keys named like Object.prototype's are checked, not skipped.
      ['[{"url":"https://a.example","readOnly":{"__proto__":"no"}}]', /readOnly must map/],
      ['[{"url":"https://a.example","headers":{"toString":2}}]', /headers must map/],
      ['[{"command":"node","env":{"constructor":1}}]', /at 0\.env: env must map/],
      ['[{"command":"node","env":{"__proto__":1}}]', /at 0\.env: env must map/],
    ] as const
  ) {
    assert.throws(() => upstreamsOf(text), message, text);
  }
  assert.deepEqual(upstreamsOf(one({ ...URL_ENTRY, timeoutMs: limit })), [
    { ...URL_ENTRY, timeoutMs: limit },
  ]);
  const full = {
    command: "node",
    args: ["server.js", ""],
    env: { MEMORY_FILE_PATH: "/tmp/memory.jsonl" },
    cwd: "/srv",
    trusted: false,
    readOnly: { read_graph: true },
    prefix: "memory_",
    timeoutMs: 5_000,
  };
  assert.deepEqual(upstreamsOf(one(full)), [full]);
  // A variable or header named like a prototype key is kept as given.
  const [stdio] = upstreamsOf('[{"command":"node","env":{"__proto__":"x","constructor":"y"}}]');
  assert.deepEqual(Object.entries((stdio as StdioUpstream).env!), [
    ["__proto__", "x"],
    ["constructor", "y"],
  ]);
  const [http] = upstreamsOf('[{"url":"https://a.example","headers":{"__proto__":"x"}}]');
  assert.deepEqual(Object.entries((http as HttpUpstream).headers!), [["__proto__", "x"]]);
  // Where commands cannot run, one is refused with the reason given.
  assert.throws(
    () => upstreamsOf(one(COMMAND_ENTRY), { noStdio: "no processes here" }),
    /MCP_UPSTREAMS is not valid at 0\.command: no processes here/,
  );
  assert.deepEqual(upstreamsOf(one(URL_ENTRY), { noStdio: "no processes here" }), [URL_ENTRY]);
});

Deno.test("the Workers gateway refuses a stdio upstream at configuration, before any connection", async () => {
  const { default: worker } = await import("../../edge/gateway_cloudflare.ts");
  const logged: unknown[] = [];
  const error = console.error;
  console.error = (...args: unknown[]) => logged.push(...args);
  let res: Response;
  try {
    res = await worker.fetch(new Request("http://gateway.test/healthz"), {
      AGENT_TOKEN,
      HARNESS_TOKEN,
      SERVER_SECRET,
      MCP_UPSTREAMS: JSON.stringify([URL_ENTRY, COMMAND_ENTRY]),
    }, {});
  } finally {
    console.error = error;
  }
  assert.equal(res.status, 500);
  assert.equal((await res.json()).code, "INTERNAL_ERROR");
  assert.deepEqual(logged, [
    "MCP_UPSTREAMS is not valid at 1.command: a Worker cannot run a command (Workers have no " +
    "processes): run this MCP server behind Streamable HTTP and give its url, or use the Deno or " +
    "Bun gateway",
  ]);
});
