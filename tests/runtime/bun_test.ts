/**
 * The Bun entry, bundled, running under Bun (npm package `bun`): a whole run over HTTP, the
 * refusal to start without tokens, the MCP route's 404 without SERVER_SECRET, and with it the MCP
 * route to the official client with a run token (refused on another run); and the MCP gateway's
 * Bun bundle in front of the everything server from npm, and of the memory server it runs itself
 * over stdio.
 */
import assert from "node:assert/strict";
import { generateLedgerKeys } from "../../src/mod.ts";
import { AGENT_TOKEN, HARNESS_TOKEN, ledgerRun, over, wholeRun } from "./flow.ts";
import {
  EVERYTHING_UPSTREAM,
  gatewayRun,
  mcpOtherRun,
  mcpRun,
  mcpWithoutSecret,
  SERVER_SECRET,
} from "./mcp_flow.ts";
import { serverScript, startEverything } from "../support/mcp_upstreams.ts";
import { type Child, freePort, start, waitGone } from "./process.ts";
import { harnessRecord, mcpConnect, startMcpRun } from "./mcp_flow.ts";
import { bundle, npmBin } from "./setup.ts";

/** Bundles an entry (edge/bun.ts unless named), and calls `fn` with a starter of Bun on it. */
async function withBunBundle(
  fn: (bun: (env: Record<string, string>) => Child) => Promise<void>,
  source = "edge/bun.ts",
): Promise<void> {
  const bin = await npmBin();
  const dir = await Deno.makeTempDir({ prefix: "tb-bun-" });
  try {
    const entry = await bundle(source, dir);
    await fn((env) => start(`${bin}/bun`, [entry], { env }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Starts the bundle on a free loopback port and calls `fn` with its base URL. */
async function serving(
  bun: (env: Record<string, string>) => Child,
  env: Record<string, string>,
  fn: (base: string) => Promise<void>,
): Promise<void> {
  const port = freePort();
  const child = bun({ ...env, PORT: String(port), HOST: "127.0.0.1" });
  try {
    await child.waitFor(/memory store, listening on http:\/\/127\.0\.0\.1:\d+/);
    await fn(`http://127.0.0.1:${port}`);
  } finally {
    await child.stop();
  }
}

Deno.test("bun: the Bun bundle serves a whole run, and refuses to start without tokens", async () => {
  await withBunBundle(async (bun) => {
    const refused = bun({ AGENT_TOKEN, HARNESS_TOKEN: "" });
    const status = await refused.status;
    assert.notEqual(status.code, 0);
    assert.match(
      refused.output(),
      /Refusing to start: AGENT_TOKEN and HARNESS_TOKEN/,
    );

    await serving(bun, { AGENT_TOKEN, HARNESS_TOKEN }, async (base) => {
      const { steps } = await wholeRun(over(base));
      console.log(`bun: ${steps.join("; ")}`);
      await mcpWithoutSecret(base, AGENT_TOKEN, HARNESS_TOKEN);
    });
  });
});

Deno.test("bun: with LEDGER_KEY the Bun bundle signs every record and run, and its export verifies", async () => {
  const keys = await generateLedgerKeys();
  const LEDGER_KEY = JSON.stringify(keys.privateKey);
  await withBunBundle(async (bun) => {
    await serving(bun, { AGENT_TOKEN, HARNESS_TOKEN, LEDGER_KEY }, async (base) => {
      console.log(`bun ${await ledgerRun(over(base), keys.publicKey)}`);
    });
  });
});

Deno.test("bun: with SERVER_SECRET the Bun bundle serves MCP to the official client with a run token", async () => {
  await withBunBundle(async (bun) => {
    await serving(bun, { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET }, async (base) => {
      console.log(`bun MCP: ${(await mcpRun(base, HARNESS_TOKEN)).join("; ")}`);
      console.log(`bun MCP: ${await mcpOtherRun(base, HARNESS_TOKEN)}`);
    });
  });
});

Deno.test("bun: the gateway bundle serves an upstream's tools over its MCP route", async () => {
  const upstream = await startEverything();
  try {
    await withBunBundle(async (bun) => {
      const refused = bun({ AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET, MCP_UPSTREAMS: "" });
      assert.notEqual((await refused.status).code, 0);
      assert.match(refused.output(), /MCP_UPSTREAMS names no upstream MCP server/);
      await serving(
        bun,
        {
          AGENT_TOKEN,
          HARNESS_TOKEN,
          SERVER_SECRET,
          MCP_UPSTREAMS: EVERYTHING_UPSTREAM(upstream.url),
        },
        async (base) => {
          console.log(`bun gateway: ${(await gatewayRun(base, HARNESS_TOKEN)).join("; ")}`);
        },
      );
    }, "edge/gateway_bun.ts");
  } finally {
    await upstream.stop();
  }
});

Deno.test("bun: the gateway bundle runs a stdio upstream, restarts it, and stops it on SIGTERM", async () => {
  const memory = await serverScript("server-memory");
  const dir = await Deno.makeTempDir({ prefix: "tb-bun-stdio-" });
  try {
    const memoryFile = `${dir}/memory.jsonl`;
    const line = { type: "entity", name: "api", entityType: "service", observations: ["on disk"] };
    await Deno.writeTextFile(memoryFile, `${JSON.stringify(line)}\n`);
    const before = await Deno.readFile(memoryFile);
    await withBunBundle(async (bun) => {
      const port = freePort();
      const child = bun({
        AGENT_TOKEN,
        HARNESS_TOKEN,
        SERVER_SECRET,
        PORT: String(port),
        HOST: "127.0.0.1",
        MCP_UPSTREAMS: JSON.stringify([{
          command: "node",
          args: [memory],
          env: { MEMORY_FILE_PATH: memoryFile },
          readOnly: { read_graph: true },
        }]),
      });
      const pids: number[] = [];
      try {
        await child.waitFor(/memory store, listening on/);
        const started = /MCP upstream node \(stdio\) started \(pid (\d+)\)/;
        pids.push(Number((await child.waitFor(started))[1]));
        assert.ok(pids[0]! > 1, child.output());
        const base = `http://127.0.0.1:${port}`;
        const { runId, agentToken } = await startMcpRun(base, HARNESS_TOKEN);
        const { client } = await mcpConnect(base, runId, agentToken);
        try {
          const names = (await client.listTools()).tools.map((tool) => tool.name);
          assert.deepEqual(names, ["read_graph"]);
          const refused = await client.callTool({
            name: "create_entities",
            arguments: { entities: [{ name: "db", entityType: "service", observations: [] }] },
          });
          assert.equal((refused.structuredContent as { code: string }).code, "NOT_READ_ONLY");
          Deno.kill(pids[0]!, "SIGKILL");
          await child.waitFor(/ended; the next call starts it again/);
          const graph = await client.callTool({
            name: "read_graph",
            arguments: {},
            _meta: { "io.tool-boundary/toolCallId": "call_graph" },
          });
          assert.match(JSON.stringify(graph.structuredContent), /on disk/);
          const record = await harnessRecord(base, HARNESS_TOKEN, runId, "call_graph");
          assert.equal(record.status, "READY");
          const all = [...child.output().matchAll(new RegExp(started, "g"))].map((match) =>
            Number(match[1])
          );
          assert.equal(all.length, 2, child.output());
          pids.push(all[1]!);
        } finally {
          await client.close();
        }
      } finally {
        assert.equal((await child.stop()).code, 0, child.output());
      }
      for (const pid of pids) {
        await waitGone(pid);
      }
    }, "edge/gateway_bun.ts");
    assert.deepEqual(
      await Deno.readFile(memoryFile),
      before,
      "the refused write left it as it was",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
