/**
 * The examples/, each built and run the way its README says, in its runtime: the Cloudflare
 * Worker in workerd (over HTTP and, with SERVER_SECRET, over MCP with a run token), the Deno
 * Deploy app under `deno serve`, the Bun script under Bun. Each
 * imports the package by its name; examples/deno.json maps the name to this repository's source.
 * The Cloudflare Agent example is built as its README deploys it (`wrangler deploy --dry-run`).
 * The edge entries import the workspace's packages by name too, and the root tests share no
 * fixture with a package's tests.
 */
import assert from "node:assert/strict";
import { AGENT_TOKEN, exampleRun, HARNESS_TOKEN, over } from "./flow.ts";
import { mcpConnect, SERVER_SECRET, startMcpRun } from "./mcp_flow.ts";
import { ROOT, run, start } from "./process.ts";
import { bundle, npmBin, serveWorker } from "./setup.ts";

const CONFIG = "examples/deno.json";
const NO_UPSTASH = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };

Deno.test("examples/cloudflare: the Worker serves a run in workerd over HTTP and MCP, and a JSON 500 without tokens", async () => {
  const entry = "examples/cloudflare/src/worker.ts";
  await serveWorker(entry, { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET }, async (base) => {
    const { steps } = await exampleRun(over(base), {
      name: "service_status",
      found: { service: "api" },
      missing: { service: "search" },
    });
    console.log(`examples/cloudflare: ${steps.join("; ")}`);
    // SERVER_SECRET from .dev.vars.example reaches createApp: a run token and the MCP route.
    const { runId, agentToken } = await startMcpRun(base, HARNESS_TOKEN);
    const { client } = await mcpConnect(base, runId, agentToken);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name), ["service_status"]);
      const found = await client.callTool({
        name: "service_status",
        arguments: { service: "api" },
      });
      assert.deepEqual(found.structuredContent, {
        evidence: "EVIDENCE_FOUND",
        scope: 'status page entry of "api"',
        content: "degraded: p99 latency above 2 s since 09:40 UTC",
      });
    } finally {
      await client.close();
    }
  }, CONFIG);
  await serveWorker(entry, { HARNESS_TOKEN }, async (base) => {
    const res = await fetch(`${base}/v1/runs`, { method: "POST" });
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), {
      status: "ERROR",
      code: "INTERNAL_ERROR",
      message: "Not configured: set AGENT_TOKEN and HARNESS_TOKEN (see .dev.vars.example).",
    });
  }, CONFIG);
});

Deno.test("examples/cloudflare-agent: wrangler deploy --dry-run builds the Agent Worker with its bindings", async () => {
  const dir = `${ROOT}examples/cloudflare-agent`;
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir });
  const out = await Deno.makeTempDir({ prefix: "tb-example-agent-" });
  try {
    // Wrangler needs Node.js 22 or later; its build step bundles with deno bundle.
    const output = await run("npx", [
      "-y",
      "node@22",
      "node_modules/wrangler/bin/wrangler.js",
      "deploy",
      "--dry-run",
      "--outdir",
      out,
    ], { cwd: dir, env: { WRANGLER_SEND_METRICS: "false" } });
    assert.match(output, /env\.SupportAgent \(SupportAgent\)\s+Durable Object/);
    assert.match(output, /env\.AI\s+AI/);
    assert.match(output, /--dry-run: exiting now/);
    const worker = await Deno.readTextFile(`${out}/worker.js`);
    // The Agent class is exported and the ledger's store bundled; the runtime's modules are not.
    assert.match(worker, /export \{[^}]*\bSupportAgent\b/);
    assert.match(worker, /runs_by_start/);
    assert.match(worker, /from "cloudflare:workers"/);
    console.log(`examples/cloudflare-agent: ${(worker.length / 1024).toFixed(0)} KiB built`);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("examples/deno-deploy: deno serve answers a run, and refuses to start without tokens", async () => {
  const args = [
    "serve",
    "--config",
    CONFIG,
    "--allow-net",
    "--allow-env",
    "--host",
    "127.0.0.1",
  ];
  const entry = "examples/deno-deploy/main.ts";
  const refused = start(Deno.execPath(), [...args, "--port", "0", entry], {
    cwd: ROOT,
    env: { AGENT_TOKEN, HARNESS_TOKEN: "", ...NO_UPSTASH },
  });
  assert.notEqual((await refused.status).code, 0);
  assert.match(
    refused.output(),
    /Refusing to start: AGENT_TOKEN and HARNESS_TOKEN/,
  );
  const child = start(Deno.execPath(), [...args, "--port", "0", entry], {
    cwd: ROOT,
    env: { AGENT_TOKEN, HARNESS_TOKEN, ...NO_UPSTASH },
  });
  try {
    const [, base] = await child.waitFor(
      /Listening on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    const { steps } = await exampleRun(over(base!), {
      name: "search_releases",
      found: { word: "deadlock" },
      missing: { word: "kerberos" },
    });
    console.log(`examples/deno-deploy: ${steps.join("; ")}`);
  } finally {
    await child.stop();
  }
});

Deno.test("examples/bun: the script runs under Bun and prints each outcome, raw data only in the record", async () => {
  const bin = await npmBin();
  const dir = await Deno.makeTempDir({ prefix: "tb-example-bun-" });
  try {
    const script = await bundle("examples/bun/script.ts", dir, CONFIG);
    const output = await run(`${bin}/bun`, [script]);
    const steps = Object.fromEntries(
      output.trim().split("\n").map((line) => {
        const { step, value } = JSON.parse(line);
        return [step, value];
      }),
    );
    assert.deepEqual(steps.found, {
      status: "READY",
      toolCallId: "call_1",
      evidence: "EVIDENCE_FOUND",
      scope: "inventory of sku-1001",
      content: 12,
    });
    assert.deepEqual([steps.missing.status, steps.missing.evidence], [
      "READY",
      "NO_EVIDENCE",
    ]);
    assert.deepEqual([steps.duplicate.status, steps.duplicate.code], [
      "ERROR",
      "DUPLICATE_TOOL_CALL",
    ]);
    assert.deepEqual(steps.record, {
      sku: "sku-1001",
      units: 12,
      warehouse: "internal-db-7",
    });
    assert.deepEqual(
      steps.facts.map((
        f: { toolCallId: string; kind: string },
      ) => [f.toolCallId, f.kind]),
      [["call_1", "EVIDENCE"], ["call_2", "NEGATIVE_OBSERVATION"]],
    );
    for (const step of ["found", "missing", "duplicate", "facts"]) {
      assert.doesNotMatch(JSON.stringify(steps[step]), /internal-db-7/, step);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Every `.ts` file under `dir` (from the repository root), node_modules left out. */
async function sourcesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (at: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${at}`)) {
      const path = `${at}/${entry.name}`;
      if (entry.isDirectory && entry.name !== "node_modules") await walk(path);
      else if (entry.isFile && path.endsWith(".ts")) files.push(path);
    }
  };
  await walk(dir);
  return files;
}

Deno.test("examples import the package by its name, and pin one wrangler version", async () => {
  const sources = await sourcesUnder("examples");
  assert.ok(sources.length >= 3, sources.join(", "));
  for (const path of sources) {
    const text = await Deno.readTextFile(`${ROOT}${path}`);
    assert.match(text, /from "@tool-boundary\/core"/, path);
    assert.doesNotMatch(text, /from "\.\.?\//, `${path} imports by path`);
  }
  const pinned = JSON.parse(
    await Deno.readTextFile(`${ROOT}examples/cloudflare/package.json`),
  ).devDependencies.wrangler;
  assert.match(pinned, /^\d+\.\d+\.\d+$/);
  for (
    const path of [
      "README.md",
      "wrangler.toml",
      "examples/README.md",
      "docs/http.md",
    ]
  ) {
    const text = await Deno.readTextFile(`${ROOT}${path}`);
    for (const [, version] of text.matchAll(/wrangler@([\w.^~-]+)/g)) {
      assert.equal(version, pinned, `${path} runs wrangler@${version}`);
    }
    assert.doesNotMatch(
      text,
      /npx wrangler /,
      `${path} runs an unpinned wrangler`,
    );
  }
});

Deno.test("edge entries import the packages by name: no path out of edge/", async () => {
  const sources = await sourcesUnder("edge");
  assert.ok(sources.length >= 10, sources.join(", "));
  const edge = new URL("edge/", `file://${ROOT}`).href;
  const named = new Set<string>();
  for (const path of sources) {
    const text = await Deno.readTextFile(`${ROOT}${path}`);
    // Static imports and exports, and dynamic imports and resolves of a literal.
    const specifiers = [
      ...text.matchAll(/(?:\bfrom|^import|\bimport\(|\bresolve\()\s*"([^"]+)"/gm),
    ].map((match) => match[1]!);
    assert.ok(specifiers.length > 0, `${path} imports nothing`);
    for (const specifier of specifiers) {
      if (specifier.startsWith(".")) {
        const target = new URL(specifier, `file://${ROOT}${path}`).href;
        assert.ok(target.startsWith(edge), `${path} imports ${specifier} by path`);
      } else if (specifier.startsWith("@tool-boundary/")) {
        named.add(specifier);
      }
    }
  }
  // The gateway entries, and dev.ts only when MCP_UPSTREAMS is set, use the mcp package's.
  for (const specifier of ["@tool-boundary/mcp/gateway", "@tool-boundary/mcp/stdio"]) {
    assert.ok(named.has(specifier), [...named].join(", "));
  }
});

Deno.test("root tests import nothing from a package's tests/", async () => {
  const sources = await sourcesUnder("tests");
  for (const path of sources) {
    const text = await Deno.readTextFile(`${ROOT}${path}`);
    assert.doesNotMatch(text, /"[^"\n]*packages\/[^"\n]+\/tests\/[^"\n]*"/, path);
  }
});
