/**
 * The MCP gateway's stdio upstreams: MCP_UPSTREAMS entries with a `command`, run by the gateway
 * itself, in front of the reference servers from npm (filesystem, memory, everything), reached by
 * the official client through the gateway's MCP route. Read-only tools run; writable ones are
 * refused and nothing on disk changes; a killed upstream is started again by the next call; the
 * gateway stops its upstream processes when it stops.
 */
import assert from "node:assert/strict";
import { TOOL_CALL_ID_META } from "../../src/harness/mod.ts";
import { serverScript } from "../support/mcp_upstreams.ts";
import { buildEdgeApp } from "../../edge/app.ts";
import { INSPECTOR_AND_MCP } from "../../edge/parts.ts";
import { connectGateway, type StdioUpstream } from "@tool-boundary/mcp/gateway";
import { stdioTransport } from "@tool-boundary/mcp/stdio";
import { AGENT_TOKEN, HARNESS_TOKEN } from "../runtime/flow.ts";
import { harnessRecord, mcpConnect, SERVER_SECRET, startMcpRun } from "../runtime/mcp_flow.ts";
import { alive, type Child, ROOT, start, waitGone, WORKSPACE_CONFIG } from "../runtime/process.ts";

const ENV = {
  AGENT_TOKEN,
  HARNESS_TOKEN,
  SERVER_SECRET,
  UPSTASH_REDIS_REST_URL: "",
  UPSTASH_REDIS_REST_TOKEN: "",
};

/** Every file under `dir`, by relative path, with the SHA-256 of its bytes. */
async function snapshot(dir: string, at = ""): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for await (const entry of Deno.readDir(`${dir}/${at}`)) {
    const path = `${at}${entry.name}`;
    if (entry.isDirectory) {
      files[`${path}/`] = "folder";
      Object.assign(files, await snapshot(dir, `${path}/`));
    } else {
      const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(`${dir}/${path}`));
      files[path] = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0"))
        .join("");
    }
  }
  return files;
}

/** The pids the gateway logged as started, in order (each a real one: never 0, the group). */
function startedPids(log: string): number[] {
  const pids = [...log.matchAll(/MCP upstream node \(stdio\) started \(pid (\d+)\)/g)]
    .map((match) => Number(match[1]));
  for (const pid of pids) assert.ok(Number.isSafeInteger(pid) && pid > 1, log);
  return pids;
}

/** Waits for the `count`-th start in a child's log and returns every pid so far. */
async function waitForStarts(child: Child, count: number): Promise<number[]> {
  await child.waitFor(new RegExp(`(started \\(pid \\d+\\)[^]*){${count}}`));
  return startedPids(child.output());
}

/** Calls a tool through the gateway's MCP route and returns the agent's structured result. */
async function call(
  client: Awaited<ReturnType<typeof mcpConnect>>["client"],
  name: string,
  args: Record<string, unknown>,
  id?: string,
): Promise<{ code?: string; evidence?: string; content?: unknown }> {
  const result = await client.callTool({
    name,
    arguments: args,
    ...(id === undefined ? {} : { _meta: { [TOOL_CALL_ID_META]: id } }),
  });
  return result.structuredContent as { code?: string; evidence?: string; content?: unknown };
}

/** Serves the app with `tools` in this process, on a loopback port, while `fn` runs. */
async function serveTools(
  tools: Awaited<ReturnType<typeof connectGateway>>["tools"],
  fn: (base: string) => Promise<void>,
): Promise<void> {
  const { app } = buildEdgeApp(ENV, { ...INSPECTOR_AND_MCP, tools });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
}

/** A memory file with one entity, in the server's JSON Lines format. */
const MEMORY = JSON.stringify({
  type: "entity",
  name: "api",
  entityType: "service",
  observations: ["restarts when the disk is full"],
}) + "\n";

Deno.test("deno run edge/gateway_deno.ts: stdio upstreams read, refuse writes, restart, and stop with it", async () => {
  const [filesystem, memory] = await Promise.all([
    serverScript("server-filesystem"),
    serverScript("server-memory"),
  ]);
  const dir = await Deno.makeTempDir({ prefix: "tb-stdio-" });
  try {
    const folder = `${dir}/files`;
    await Deno.mkdir(`${folder}/notes`, { recursive: true });
    await Deno.writeTextFile(`${folder}/notes/disk.md`, "disk full: rotate the logs\n");
    await Deno.writeTextFile(`${folder}/readme.txt`, "read me\n");
    const memoryFile = `${dir}/memory.jsonl`;
    await Deno.writeTextFile(memoryFile, MEMORY);
    const before = await snapshot(dir);
    const upstreams: StdioUpstream[] = [
      // Trusted: its read tools say readOnlyHint, its writing tools do not.
      { command: "node", args: [filesystem, folder], trusted: true, prefix: "fs_" },
      // Untrusted: only what readOnly names runs.
      {
        command: "node",
        args: [memory],
        env: { MEMORY_FILE_PATH: memoryFile },
        readOnly: { read_graph: true, search_nodes: true },
        prefix: "memory_",
        timeoutMs: 20_000,
      },
    ];
    const gateway = start(Deno.execPath(), [
      "run",
      ...WORKSPACE_CONFIG,
      "--allow-net",
      "--allow-env",
      "--allow-run",
      "--allow-read",
      "edge/gateway_deno.ts",
    ], {
      cwd: ROOT,
      env: { ...ENV, HOST: "127.0.0.1", PORT: "0", MCP_UPSTREAMS: JSON.stringify(upstreams) },
    });
    let pids: number[] = [];
    try {
      const [, base] = await gateway.waitFor(/Listening on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
      const [fsPid, memoryPid] = pids = await waitForStarts(gateway, 2);
      assert.match(gateway.output(), /node \(stdio\): fs_read_file, .*fs_write_file \(refused\)/);
      const { runId, agentToken } = await startMcpRun(base!, HARNESS_TOKEN);
      const { client } = await mcpConnect(base!, runId, agentToken);
      try {
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        for (const name of ["fs_read_text_file", "fs_list_directory", "memory_read_graph"]) {
          assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
        }
        for (const name of ["fs_write_file", "memory_create_entities", "memory_open_nodes"]) {
          assert.ok(!names.includes(name), `${name} is not listed`);
        }

        const read = await call(
          client,
          "fs_read_text_file",
          { path: `${folder}/notes/disk.md` },
          "call_read",
        );
        assert.deepEqual(read.content, { content: "disk full: rotate the logs\n" });
        const listed = await call(client, "fs_list_directory", { path: folder });
        assert.match(JSON.stringify(listed.content), /\[DIR\] notes.*\[FILE\] readme\.txt/);
        const graph = await call(client, "memory_read_graph", {}, "call_graph");
        assert.match(JSON.stringify(graph.content), /restarts when the disk is full/);
        assert.equal(
          (await harnessRecord(base!, HARNESS_TOKEN, runId, "call_read")).status,
          "READY",
        );

        // Every writing tool is refused by the boundary; none reaches its server.
        const writes: [string, Record<string, unknown>][] = [
          ["fs_write_file", { path: `${folder}/readme.txt`, content: "overwritten" }],
          ["fs_write_file", { path: `${folder}/new.txt`, content: "new" }],
          ["fs_edit_file", {
            path: `${folder}/readme.txt`,
            edits: [{ oldText: "read", newText: "edited" }],
          }],
          ["fs_create_directory", { path: `${folder}/made` }],
          ["fs_move_file", { source: `${folder}/readme.txt`, destination: `${folder}/moved.txt` }],
          ["memory_create_entities", {
            entities: [{ name: "db", entityType: "service", observations: ["new"] }],
          }],
          ["memory_add_observations", {
            observations: [{ entityName: "api", contents: ["changed"] }],
          }],
          ["memory_delete_entities", { entityNames: ["api"] }],
          // Listed read-only by its server, but untrusted and not named in readOnly.
          ["memory_open_nodes", { names: ["api"] }],
        ];
        for (const [index, [name, args]] of writes.entries()) {
          const refused = await call(client, name, args, `call_write_${index}`);
          assert.equal(refused.code, "NOT_READ_ONLY", name);
        }

        // The memory server dies mid-session; the next call to it starts it again.
        Deno.kill(memoryPid!, "SIGKILL");
        await gateway.waitFor(/MCP upstream node \(stdio\) ended; the next call starts it again/);
        const again = await call(client, "memory_search_nodes", { query: "disk" }, "call_again");
        assert.match(JSON.stringify(again.content), /restarts when the disk is full/);
        pids = await waitForStarts(gateway, 3);
        assert.notEqual(pids[2], memoryPid);
        assert.equal(await alive(pids[2]!), true);
        assert.equal(await alive(fsPid!), true, "the other upstream kept running");
        const record = await harnessRecord(base!, HARNESS_TOKEN, runId, "call_again");
        assert.equal(record.status, "READY");
      } finally {
        await client.close();
      }
    } finally {
      const status = await gateway.stop();
      assert.equal(status.code, 0, gateway.output());
    }
    // SIGTERM stopped every upstream process the gateway ran.
    assert.equal(pids.length, 3);
    for (const pid of pids) await waitGone(pid);
    // Refused writes left the folder and the memory file byte for byte as they were.
    assert.deepEqual(await snapshot(dir), before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("connectGateway: a call in flight when its upstream process dies fails EXECUTION_FAILED, the next one restarts it", async () => {
  const everything = await serverScript("server-everything");
  const log: string[] = [];
  const gateway = await connectGateway([{
    command: "node",
    args: [everything, "stdio"],
    trusted: true,
    prefix: "e_",
  }], { stdio: stdioTransport, log: (line) => log.push(line) });
  const pids = () => startedPids(log.join("\n"));
  try {
    await serveTools(gateway.tools, async (base) => {
      const { runId, agentToken } = await startMcpRun(base, HARNESS_TOKEN);
      const { client } = await mcpConnect(base, runId, agentToken);
      try {
        const [first] = pids();
        // A ten-second operation, and its process killed while it runs.
        const slow = call(client, "e_trigger-long-running-operation", {
          duration: 10,
          steps: 10,
        }, "call_slow");
        await new Promise((resolve) => setTimeout(resolve, 500));
        Deno.kill(first!, "SIGKILL");
        assert.equal((await slow).code, "EXECUTION_FAILED");
        const failed = await harnessRecord(base, HARNESS_TOKEN, runId, "call_slow");
        assert.equal(failed.status, "ERROR");
        assert.equal(failed.errorCode, "EXECUTION_FAILED");
        // The raw is what the SDK's client said: the connection closed under the request.
        assert.equal(failed.raw.error.code, -32000, JSON.stringify(failed.raw));
        assert.ok(
          log.some((line) => /ended; the next call starts it again/.test(line)),
          log.join(),
        );

        const echoed = await call(client, "e_echo", { message: "back" }, "call_back");
        assert.deepEqual(echoed.content, ["Echo: back"]);
        assert.equal(pids().length, 2);
        // After a restart the tool's outputSchema is still checked: the result passes it.
        const weather = await call(client, "e_get-structured-content", { location: "Chicago" });
        assert.equal(weather.evidence, "EVIDENCE_FOUND");
      } finally {
        await client.close();
      }
    });
  } finally {
    await gateway.close();
  }
  // close() stopped the process that was up, and started no other.
  const started = pids();
  assert.equal(started.length, 2);
  for (const pid of started) await waitGone(pid);
});

Deno.test("connectGateway: an upstream command that cannot start refuses the gateway, and the others are stopped", async () => {
  const memory = await serverScript("server-memory");
  const dir = await Deno.makeTempDir({ prefix: "tb-stdio-" });
  const log: string[] = [];
  try {
    await assert.rejects(
      connectGateway([
        { command: "node", args: [memory], env: { MEMORY_FILE_PATH: `${dir}/memory.jsonl` } },
        { command: `${dir}/no-such-server` },
      ], { stdio: stdioTransport, log: (line) => log.push(line) }),
      /ENOENT/,
    );
    const [pid] = startedPids(log.join("\n"));
    assert.ok(pid !== undefined, log.join());
    await waitGone(pid);
    // Without a stdio transport (as on Workers) a command is refused before anything starts.
    await assert.rejects(
      connectGateway([{ command: "node", args: [memory] }]),
      /node \(stdio\): this gateway cannot run a command; give the upstream a url/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task dev:gateway runs a stdio upstream and stops it on SIGTERM", async () => {
  const memory = await serverScript("server-memory");
  const dir = await Deno.makeTempDir({ prefix: "tb-stdio-" });
  try {
    const memoryFile = `${dir}/memory.jsonl`;
    await Deno.writeTextFile(memoryFile, MEMORY);
    const before = await snapshot(dir);
    const child = start(Deno.execPath(), ["task", "dev:gateway"], {
      cwd: ROOT,
      env: {
        ...ENV,
        PORT: "0",
        MCP_UPSTREAMS: JSON.stringify([{
          command: "node",
          args: [memory],
          env: { MEMORY_FILE_PATH: memoryFile },
          trusted: true,
        }]),
      },
    });
    let pid: number | undefined;
    try {
      const [, base] = await child.waitFor(/dev server on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
      await child.waitFor(/node \(stdio\): create_entities \(refused\).*read_graph/);
      [pid] = await waitForStarts(child, 1);
      const { runId, agentToken } = await startMcpRun(base!, HARNESS_TOKEN);
      const { client } = await mcpConnect(base!, runId, agentToken);
      try {
        const graph = await call(client, "read_graph", {});
        assert.match(JSON.stringify(graph.content), /restarts when the disk is full/);
        const refused = await call(client, "create_entities", {
          entities: [{ name: "db", entityType: "service", observations: [] }],
        });
        assert.equal(refused.code, "NOT_READ_ONLY");
      } finally {
        await client.close();
      }
    } finally {
      assert.equal((await child.stop()).code, 0, child.output());
    }
    await waitGone(pid!);
    assert.deepEqual(await snapshot(dir), before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("connectGateway: an upstream that keeps failing to start is started again less and less often", async () => {
  const memory = await serverScript("server-memory");
  const dir = await Deno.makeTempDir({ prefix: "tb-stdio-" });
  try {
    // Runs the memory server, unless the BROKEN file exists; writes down each of its starts.
    const wrapper = `${dir}/flaky.mjs`;
    await Deno.writeTextFile(
      wrapper,
      `import { appendFileSync, existsSync } from "node:fs";
appendFileSync(process.env.STARTS, "start\\n");
if (existsSync(process.env.BROKEN)) process.exit(3);
await import(${JSON.stringify(`file://${memory}`)});
`,
    );
    const starts = `${dir}/starts.txt`;
    const broken = `${dir}/broken`;
    const countStarts = async () => (await Deno.readTextFile(starts)).split("\n").length - 1;
    await Deno.writeTextFile(`${dir}/memory.jsonl`, MEMORY);
    const log: string[] = [];
    const gateway = await connectGateway([{
      command: "node",
      args: [wrapper],
      env: { STARTS: starts, BROKEN: broken, MEMORY_FILE_PATH: `${dir}/memory.jsonl` },
      readOnly: { read_graph: true },
    }], { stdio: stdioTransport, log: (line) => log.push(line) });
    try {
      await serveTools(gateway.tools, async (base) => {
        const { runId, agentToken } = await startMcpRun(base, HARNESS_TOKEN);
        const { client } = await mcpConnect(base, runId, agentToken);
        try {
          const [pid] = startedPids(log.join("\n"));
          await Deno.writeTextFile(broken, "");
          Deno.kill(pid!, "SIGKILL");
          await waitGone(pid!);
          // Twenty calls in a row while it cannot start: each fails, few start a process.
          for (let index = 0; index < 20; index++) {
            const failed = await call(client, "read_graph", {});
            assert.equal(failed.code, "EXECUTION_FAILED");
          }
          const tries = (await countStarts()) - 1;
          assert.ok(tries >= 1 && tries <= 6, `${tries} starts for 20 calls`);
          // Once it can start again, a later call gets it back.
          await Deno.remove(broken);
          const until = Date.now() + 40_000;
          let graph = await call(client, "read_graph", {});
          while (graph.code === "EXECUTION_FAILED" && Date.now() < until) {
            await new Promise((resolve) => setTimeout(resolve, 200));
            graph = await call(client, "read_graph", {});
          }
          assert.match(JSON.stringify(graph.content), /restarts when the disk is full/);
        } finally {
          await client.close();
        }
      });
    } finally {
      await gateway.close();
    }
    for (const pid of startedPids(log.join("\n"))) await waitGone(pid);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
