/**
 * Figure 12: what the HTTP app costs per call in process, side by side in one run: the same
 * `ToolBoundary.invoke` (MemoryStore, 1 KiB raw) called directly, behind a bare Hono route, and
 * through `createApp` with the static agent token, with a run token, and as an MCP `tools/call`
 * (a session of 2025-11-25 with the static token and with a run token, and 2026-07-28 with a run
 * token). Every request is built and answered through `app.request`, so each row also pays for
 * its `Request` and `Response`.
 *
 * Rows alternate, batch by batch (each row first in turn); every batch is 100 calls on a run of
 * its own (started, with its run token and MCP session, untimed before it), and a new app and
 * store are made every 10 batches. The figure is the median of the per-call batch means.
 *
 * Run: `deno task bench:app` (`BENCH_ROUNDS=<batches per row>`, default 400, after 40 warm-up
 * batches).
 *
 * @module
 */
import { Hono } from "hono";
import { ToolBoundary } from "../src/mod.ts";
import { createApp } from "../src/hono/mod.ts";
import { MemoryStore } from "../src/memory/mod.ts";
import { mcpRoute } from "../src/mcp/mod.ts";
import {
  AGENT_TOKEN,
  FIGURE3_INPUT,
  logRaw,
  printTable,
  searchLogsTool,
  SMOKE,
} from "./_common.ts";

const ROUNDS = SMOKE ? 3 : Number(Deno.env.get("BENCH_ROUNDS") ?? 400);
const WARMUP = SMOKE ? 1 : 40;
const CALLS = 100; // per batch and per run
const FRESH_EVERY = 10; // batches per app and store

const HARNESS_TOKEN = "bench-harness-token-0123456789";
const SECRET = "bench-server-secret-0123456789-0123456789";
const BASE = "http://bench.test";
const tool = searchLogsTool(logRaw(1024));
const INPUT = JSON.parse(FIGURE3_INPUT);

/** One run of a batch: what its requests need. */
interface Batch {
  boundary: ToolBoundary;
  fetch: (request: Request) => Response | Promise<Response>;
  runId: string;
  runToken: string;
  session: string;
}

function freshApp() {
  const boundary = new ToolBoundary({ store: new MemoryStore(), tools: [tool] });
  const app = createApp({
    boundary,
    agentToken: AGENT_TOKEN,
    harnessToken: HARNESS_TOKEN,
    secret: SECRET,
    mcp: mcpRoute(),
  });
  // The bare route: the body read and parsed by Hono, the same invoke, the result as JSON.
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
  return { boundary, app, bare };
}

let made = freshApp();

async function startBatch(fetch: "app" | "bare"): Promise<Batch> {
  const { app, bare, boundary } = made;
  const started = await app.request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${HARNESS_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ ttlMs: 600_000, budget: { calls: CALLS } }),
  });
  if (started.status !== 201) throw new Error(`startRun: ${await started.text()}`);
  const run = await started.json() as { runId: string; agentToken: string };
  const initialized = await app.request(`/v1/runs/${run.runId}/mcp`, {
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
  });
  const session = initialized.headers.get("mcp-session-id");
  if (session === null) throw new Error(`initialize: ${await initialized.text()}`);
  await initialized.body?.cancel();
  const target = fetch === "app" ? app : bare;
  return {
    boundary,
    fetch: (request) => target.fetch(request),
    runId: run.runId,
    runToken: run.agentToken,
    session,
  };
}

const toolCall = (token: string) => (batch: Batch, i: number) =>
  new Request(`${BASE}/v1/runs/${batch.runId}/tool-calls`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token || batch.runToken}`,
      "content-type": "application/json",
    },
    body: `{"toolCallId":"call_${i}","toolName":"search_logs","input":${FIGURE3_INPUT}}`,
  });

const mcpCall =
  (token: string, version: "2025-11-25" | "2026-07-28") => (batch: Batch, i: number) =>
    new Request(`${BASE}/v1/runs/${batch.runId}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token || batch.runToken}`,
        "content-type": "application/json",
        accept: "application/json",
        "mcp-protocol-version": version,
        ...(version === "2025-11-25"
          ? { "mcp-session-id": batch.session }
          : { "mcp-method": "tools/call", "mcp-name": "search_logs" }),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: {
          name: "search_logs",
          arguments: INPUT,
          _meta: {
            "io.modelcontextprotocol/toolCallId": `call_${i}`,
            ...(version === "2026-07-28"
              ? {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {},
              }
              : {}),
          },
        },
      }),
    });

interface Row {
  name: string;
  fetch: "app" | "bare" | "invoke";
  request?: (batch: Batch, i: number) => Request;
  /** Checks one answer's body (the first of each batch): the call must have been READY. */
  means: number[];
}

const ROWS: Row[] = [
  { name: "ToolBoundary.invoke, no HTTP", fetch: "invoke", means: [] },
  { name: "bare Hono route + invoke", fetch: "bare", request: toolCall(AGENT_TOKEN), means: [] },
  {
    name: "createApp tool call, static token",
    fetch: "app",
    request: toolCall(AGENT_TOKEN),
    means: [],
  },
  { name: "createApp tool call, run token", fetch: "app", request: toolCall(""), means: [] },
  {
    name: "createApp MCP tools/call, static token, session",
    fetch: "app",
    request: mcpCall(AGENT_TOKEN, "2025-11-25"),
    means: [],
  },
  {
    name: "createApp MCP tools/call, run token, session",
    fetch: "app",
    request: mcpCall("", "2025-11-25"),
    means: [],
  },
  {
    name: "createApp MCP tools/call, run token, 2026-07-28",
    fetch: "app",
    request: mcpCall("", "2026-07-28"),
    means: [],
  },
];

/** Runs one batch of a row; returns µs per call. */
async function runBatch(row: Row): Promise<number> {
  const batch = await startBatch(row.fetch === "bare" ? "bare" : "app");
  const requests = row.request === undefined
    ? []
    : Array.from({ length: CALLS }, (_, i) => row.request!(batch, i));
  let ready = 0;
  const started = performance.now();
  if (row.fetch === "invoke") {
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
      const response = await batch.fetch(request);
      const text = await response.text();
      if (response.status === 200 && !text.includes('"status":"ERROR"')) ready++;
    }
  }
  const elapsed = performance.now() - started;
  if (ready !== CALLS) throw new Error(`${row.name}: ${CALLS - ready} calls were not READY`);
  return (elapsed * 1000) / CALLS;
}

for (let round = 0; round < WARMUP + ROUNDS; round++) {
  if (round % FRESH_EVERY === 0) made = freshApp();
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
  `\n${ROUNDS} batches of ${CALLS} calls per row (after ${WARMUP} warm-up batches), rows ` +
    "alternating, 1 KiB raw, MemoryStore, app.request; median of the per-call batch means.\n",
);
printTable(
  ["row", "us per call", "over invoke, us", "/ bare route", "/ static-token route"],
  ROWS.map((row) => {
    const m = median(row.means);
    return [
      row.name,
      m.toFixed(1),
      row.fetch === "invoke" ? "-" : (m - invoke).toFixed(1),
      `${(m / bare).toFixed(2)}x`,
      `${(m / staticRoute).toFixed(2)}x`,
    ];
  }),
);
console.log(
  `\nthe app's overhead over the bare route's (both over invoke): ` +
    `${((staticRoute - invoke) / (bare - invoke)).toFixed(2)}x (target <= 1.5x)`,
);
const worst = Math.max(...ROWS.slice(3).map((row) => median(row.means)));
console.log(
  `run-token and MCP rows / static-token route: at most ${(worst / staticRoute).toFixed(2)}x ` +
    "(target <= 1.3x)",
);
