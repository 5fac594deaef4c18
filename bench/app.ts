/**
 * Figure 13: what the HTTP app costs per call in process, side by side in one run: the same
 * `ToolBoundary.invoke` (MemoryStore, 1 KiB raw) called directly, behind a bare Hono route (the
 * body read by Hono, the invoke, the result as JSON), and through `createApp` with the static
 * agent token, with a run token, and as an MCP `tools/call` (a session of 2025-11-25 with the
 * static token and with a run token, and 2026-07-28 with a run token). Every request goes
 * through `app.fetch` (built before the batch's clock starts), so each row pays for reading its
 * `Request` (which carries the `Content-Length` a client's `fetch` sends) and making its `Response`.
 *
 * Rows alternate, batch by batch (each row first in turn); every batch is 100 calls on a run of
 * its own (started, with its run token and MCP session, before the clock starts), and a new app
 * and store are made every 10 rounds. The figure is the median of the per-call batch means.
 *
 * With `BENCH_BEFORE=<path of another checkout>`, the createApp rows run on that checkout's `src/`
 * as well, interleaved with the others: before and after, side by side. (A checkout without
 * `src/mcp/` serves MCP from its `secret` alone.)
 *
 * Run: `deno task bench:app` (`BENCH_ROUNDS=<batches per row>`, default 400, after 40 warm-up
 * rounds).
 *
 * @module
 */
import { Hono } from "hono";
import * as current from "../src/mod.ts";
import { createApp } from "../src/hono/mod.ts";
import { MemoryStore } from "../src/memory/mod.ts";
import { mcpRoute } from "../src/mcp/mod.ts";
import { AGENT_TOKEN, FIGURE3_INPUT, logRaw, printTable, projectLogs, SMOKE } from "./_common.ts";

const ROUNDS = SMOKE ? 3 : Number(Deno.env.get("BENCH_ROUNDS") ?? 400);
const WARMUP = SMOKE ? 1 : 40;
const CALLS = 100; // per batch and per run
const FRESH_EVERY = 10; // rounds per app and store

const HARNESS_TOKEN = "bench-harness-token-0123456789";
const SECRET = "bench-server-secret-0123456789-0123456789";
const BASE = "http://bench.test";
const raw = logRaw(1024);
const INPUT = JSON.parse(FIGURE3_INPUT);

type App = { fetch(request: Request): Response | Promise<Response> };

/** A tree of `src/`: what the rows need of it. */
interface Tree {
  name: string;
  make(): { boundary: current.ToolBoundary; app: App };
}

function treeOf(name: string, mod: {
  defineTool: typeof current.defineTool;
  ToolBoundary: typeof current.ToolBoundary;
  MemoryStore: typeof MemoryStore;
  createApp: typeof createApp;
  mcpRoute?: typeof mcpRoute;
}): Tree {
  const tool = mod.defineTool({
    name: "search_logs",
    readOnly: true,
    execute: () => raw,
    project: (r: typeof raw) => projectLogs(r),
  });
  return {
    name,
    make() {
      const boundary = new mod.ToolBoundary({ store: new mod.MemoryStore(), tools: [tool] });
      const app = mod.createApp({
        boundary,
        agentToken: AGENT_TOKEN,
        harnessToken: HARNESS_TOKEN,
        secret: SECRET,
        ...(mod.mcpRoute === undefined ? {} : { mcp: mod.mcpRoute() }),
      });
      return { boundary: boundary as current.ToolBoundary, app };
    },
  };
}

const trees: Tree[] = [treeOf("", { ...current, MemoryStore, createApp, mcpRoute })];
const before = Deno.env.get("BENCH_BEFORE");
if (before !== undefined) {
  const src = new URL(`file://${before.replace(/\/?$/, "/")}src/`);
  const load = (path: string) => import(new URL(path, src).href);
  const mcp = await load("mcp/mod.ts").catch(() => ({}));
  trees.push(treeOf(`before (${before}): `, {
    ...await load("mod.ts"),
    MemoryStore: (await load("memory/mod.ts")).MemoryStore,
    createApp: (await load("hono/mod.ts")).createApp,
    mcpRoute: mcp.mcpRoute,
  }));
}

/** The bare route over a boundary: Hono reads and parses the body, the invoke, the JSON. */
function bareApp(boundary: current.ToolBoundary): App {
  const bare = new Hono();
  bare.post("/v1/runs/:runId/tool-calls", async (c) => {
    const body = await c.req.json();
    const result = await boundary.invoke({ runId: c.req.param("runId") }, {
      toolCallId: body.toolCallId,
      runId: c.req.param("runId"),
      toolName: body.toolName,
      input: body.input,
    });
    return c.json(result, result.status === "READY" ? 200 : 400);
  });
  return bare;
}

/** One run of a batch: what its requests need. */
interface Batch {
  boundary: current.ToolBoundary;
  app: App;
  runId: string;
  runToken: string;
  session: string;
}

const made = new Map<Tree, ReturnType<Tree["make"]>>();

async function startBatch(tree: Tree): Promise<Batch> {
  const { app, boundary } = made.get(tree)!;
  const started = await app.fetch(
    new Request(`${BASE}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${HARNESS_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ ttlMs: 600_000, budget: { calls: CALLS } }),
    }),
  );
  if (started.status !== 201) throw new Error(`startRun: ${await started.text()}`);
  const run = await started.json() as { runId: string; agentToken: string };
  const initialized = await app.fetch(
    new Request(`${BASE}/v1/runs/${run.runId}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${run.agentToken}`,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "bench", version: "1" },
        },
      }),
    }),
  );
  const session = initialized.headers.get("mcp-session-id");
  if (session === null) throw new Error(`initialize: ${await initialized.text()}`);
  await initialized.body?.cancel();
  return { boundary, app, runId: run.runId, runToken: run.agentToken, session };
}

const encoder = new TextEncoder();
/** A POST of JSON as a client's `fetch` sends it: with its `Content-Length`. */
const post = (url: string, headers: Record<string, string>, body: string) => {
  const bytes = encoder.encode(body);
  return new Request(url, {
    method: "POST",
    headers: { ...headers, "content-length": String(bytes.byteLength) },
    body: bytes,
  });
};

const toolCall = (token: string) => (batch: Batch, i: number) =>
  post(
    `${BASE}/v1/runs/${batch.runId}/tool-calls`,
    { authorization: `Bearer ${token || batch.runToken}`, "content-type": "application/json" },
    `{"toolCallId":"call_${i}","toolName":"search_logs","input":${FIGURE3_INPUT}}`,
  );

const mcpCall =
  (token: string, version: "2025-11-25" | "2026-07-28") => (batch: Batch, i: number) =>
    post(
      `${BASE}/v1/runs/${batch.runId}/mcp`,
      {
        authorization: `Bearer ${token || batch.runToken}`,
        "content-type": "application/json",
        accept: "application/json",
        "mcp-protocol-version": version,
        ...(version === "2025-11-25"
          ? { "mcp-session-id": batch.session }
          : { "mcp-method": "tools/call", "mcp-name": "search_logs" }),
      },
      JSON.stringify({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: {
          name: "search_logs",
          arguments: INPUT,
          _meta: {
            "io.tool-boundary/toolCallId": `call_${i}`,
            ...(version === "2026-07-28"
              ? {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {},
              }
              : {}),
          },
        },
      }),
    );

interface Row {
  name: string;
  tree: Tree;
  /** `invoke`: the boundary directly; `bare`: the bare route; `app`: the app. */
  via: "invoke" | "bare" | "app";
  request?: (batch: Batch, i: number) => Request;
  means: number[];
}

const appRows = (tree: Tree): Row[] =>
  ([
    ["createApp tool call, static token", toolCall(AGENT_TOKEN)],
    ["createApp tool call, run token", toolCall("")],
    ["createApp MCP tools/call, static token, session", mcpCall(AGENT_TOKEN, "2025-11-25")],
    ["createApp MCP tools/call, run token, session", mcpCall("", "2025-11-25")],
    ["createApp MCP tools/call, run token, 2026-07-28", mcpCall("", "2026-07-28")],
  ] as const).map(([name, request]) => ({
    name: `${tree.name}${name}`,
    tree,
    via: "app",
    request,
    means: [],
  }));

const ROWS: Row[] = [
  { name: "ToolBoundary.invoke, no HTTP", tree: trees[0]!, via: "invoke", means: [] },
  {
    name: "bare Hono route + invoke",
    tree: trees[0]!,
    via: "bare",
    request: toolCall(AGENT_TOKEN),
    means: [],
  },
  ...trees.flatMap(appRows),
];

/** Runs one batch of a row; returns µs per call. */
async function runBatch(row: Row): Promise<number> {
  const batch = await startBatch(row.tree);
  const target = row.via === "bare" ? bareApp(batch.boundary) : batch.app;
  const requests = row.request === undefined
    ? []
    : Array.from({ length: CALLS }, (_, i) => row.request!(batch, i));
  let ready = 0;
  const started = performance.now();
  if (row.via === "invoke") {
    for (let i = 0; i < CALLS; i++) {
      const result = await batch.boundary.invoke({ runId: batch.runId }, {
        toolCallId: `call_${i}`,
        runId: batch.runId,
        toolName: "search_logs",
        input: FIGURE3_INPUT,
      });
      if (result.status === "READY") ready++;
    }
  } else {
    for (const request of requests) {
      const response = await target.fetch(request);
      const text = await response.text();
      if (response.status === 200 && !text.includes('"status":"ERROR"')) ready++;
    }
  }
  const elapsed = performance.now() - started;
  if (ready !== CALLS) throw new Error(`${row.name}: ${CALLS - ready} calls were not READY`);
  return (elapsed * 1000) / CALLS;
}

for (let round = 0; round < WARMUP + ROUNDS; round++) {
  if (round % FRESH_EVERY === 0) { for (const tree of trees) made.set(tree, tree.make()); }
  for (let k = 0; k < ROWS.length; k++) {
    const row = ROWS[(k + round) % ROWS.length]!; // each row first in turn
    const mean = await runBatch(row);
    if (round >= WARMUP) row.means.push(mean);
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const [invoke, bare, staticRoute] = ROWS.slice(0, 3).map((row) => median(row.means)) as [
  number,
  number,
  number,
];
console.log(
  `\n${ROUNDS} batches of ${CALLS} calls per row (after ${WARMUP} warm-up rounds), rows ` +
    "alternating, 1 KiB raw, MemoryStore, app.fetch; median of the per-call batch means.\n",
);
printTable(
  ["row", "us per call", "over invoke, us", "/ bare route", "/ static-token route"],
  ROWS.map((row) => {
    const m = median(row.means);
    return [
      row.name,
      m.toFixed(1),
      row.via === "invoke" ? "-" : (m - invoke).toFixed(1),
      `${(m / bare).toFixed(2)}x`,
      `${(m / staticRoute).toFixed(2)}x`,
    ];
  }),
);
console.log(
  `\ncreateApp's static-token route / the bare route: ${(staticRoute / bare).toFixed(2)}x ` +
    "(target <= 1.5x); their overheads over the invoke: " +
    `${(staticRoute - invoke).toFixed(1)} us / ${(bare - invoke).toFixed(1)} us = ` +
    `${((staticRoute - invoke) / (bare - invoke)).toFixed(2)}x`,
);
const worst = Math.max(...ROWS.slice(3, 7).map((row) => median(row.means)));
console.log(
  `run-token and MCP rows / the static-token route: at most ${(worst / staticRoute).toFixed(2)}x ` +
    "(target <= 1.3x)",
);
