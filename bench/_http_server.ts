/**
 * The HTTP server under test for figure 5, run in its own process by `http.ts`:
 * `deno run --config deno.dev.json -A bench/_http_server.ts <bare|memory|upstash> <port>`.
 *
 * - `memory`, `upstash`: `createApp` over a `ToolBoundary` on that store (Upstash through
 *   UPSTASH_REDIS_REST_URL / UPSTASH_REDIS_REST_TOKEN, the benchmark's fixture).
 * - `bare`: one Hono route that does the same JSON work without the boundary: parse the body,
 *   serialize the input, call the tool and the projector, serialize the raw response and the
 *   agent result, answer the projection. No auth, no store.
 *
 * Prints `ready` once it listens. The load generator (wrk_tool_call.lua) posts its calls to runs
 * of 100 calls (the default budget) named `bench-<tag>-<n>`: the n-th hundred calls of its
 * round `<tag>`. The server starts each run through the app as a harness would, two runs ahead
 * of the calls (a call waits only if its run is still starting), each expiring after RUN_TTL_MS,
 * and records expire after RECORD_TTL_MS. So the stores hold a few seconds of calls, as a live
 * service would, and a round does not slow down because all the rounds before it are still held
 * (with one run and 600 s records, every call of the benchmark was). The bare route reads the run
 * ID from the path the same way and starts nothing.
 *
 * @module
 */
import { Hono } from "hono";
import { Redis } from "@upstash/redis";
import { defineTool, type ProjectorOutput, ToolBoundary } from "../src/mod.ts";
import { createApp } from "../src/hono/mod.ts";
import { MemoryStore } from "../src/memory/mod.ts";
import { UpstashStore } from "../src/upstash/mod.ts";
import { AGENT_TOKEN, type LogRaw, logRaw } from "./_common.ts";

const HARNESS_TOKEN = "bench-harness-token-0123456789";
/** Calls per run: the default budget. */
const CALLS_PER_RUN = 100;
/** A run expires this long after it started; it is used up in well under a second. */
const RUN_TTL_MS = 10_000;
/** A record expires this long after its call began. */
const RECORD_TTL_MS = 5_000;

const [mode, port] = [Deno.args[0], Number(Deno.args[1])];
const raw = logRaw(1024);
const project = (raw: LogRaw): ProjectorOutput => ({
  evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
  scope: `logs of ${raw.service} matching "${raw.query}", last 24 hours`,
  content: raw.hits.slice(0, 5).map((hit) => `${hit.ts} ${hit.level} ${hit.line}`),
});
const tool = defineTool({ name: "search_logs", readOnly: true, execute: () => raw, project });

let fetchHandler: (request: Request) => Response | Promise<Response>;
/** Starts the run (memory and upstash modes); resolves once it exists. */
let startRun: (runId: string) => Promise<void> = () => Promise.resolve();
if (mode === "bare") {
  const app = new Hono();
  let sink = 0;
  const signal = new AbortController().signal;
  app.post("/v1/runs/:runId/tool-calls", async (c) => {
    const body = await c.req.json<{ toolCallId: string; input: unknown }>();
    const input = typeof body.input === "string" ? JSON.parse(body.input) : body.input;
    const requestJson = JSON.stringify(input);
    const result = await tool.execute(input, {
      signal,
      run: undefined!,
      toolCallId: body.toolCallId,
      settle: () => {},
    }) as LogRaw;
    const rawJson = JSON.stringify(result);
    const projection = await tool.project(result, {
      run: undefined!,
      toolCallId: body.toolCallId,
      input,
    });
    const agentJson = JSON.stringify(projection);
    sink += requestJson.length + rawJson.length + agentJson.length;
    return c.json({ status: "READY", toolCallId: body.toolCallId, ...projection }, 200);
  });
  fetchHandler = app.fetch;
} else {
  const store = mode === "upstash"
    ? new UpstashStore({ redis: Redis.fromEnv({ enableTelemetry: false }), prefix: "http" })
    : new MemoryStore({ maxRecords: 1_000_000 });
  const boundary = new ToolBoundary({ store, tools: [tool], recordTtlMs: RECORD_TTL_MS });
  const app = createApp({ boundary, agentToken: AGENT_TOKEN, harnessToken: HARNESS_TOKEN });
  startRun = async (runId) => {
    const started = await app.request("/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${HARNESS_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ runId, ttlMs: RUN_TTL_MS, budget: { calls: CALLS_PER_RUN } }),
    });
    if (started.status !== 201) {
      throw new Error(`startRun: ${started.status} ${await started.text()}`);
    }
  };
  fetchHandler = app.fetch;
}

const RUNS = "/v1/runs/";
/** Runs being started, by ID; dropped once they are started. */
const starting = new Map<string, Promise<void>>();
/** Runs started, by ID (the last few of each series). */
const started = new Set<string>();
const ensureRun = (runId: string): Promise<void> | undefined => {
  if (started.has(runId)) return undefined;
  let start = starting.get(runId);
  if (start === undefined) {
    // A start that fails leaves its calls to the app's answer, which wrk counts as errors.
    start = startRun(runId).catch((error) => console.error(error)).then(() => {
      starting.delete(runId);
      started.add(runId);
    });
    starting.set(runId, start);
  }
  return start;
};
const serve = fetchHandler;

Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.log("ready") },
  (request) => {
    // `bench-<tag>-<n>` from `http://host/v1/runs/bench-<tag>-<n>/tool-calls`.
    const url = request.url;
    const from = url.indexOf(RUNS) + RUNS.length;
    const runId = url.slice(from, url.indexOf("/", from));
    const dash = runId.lastIndexOf("-");
    const series = runId.slice(0, dash + 1);
    const n = Number(runId.slice(dash + 1));
    if (mode === "bare") return serve(request);
    // The two runs after this one start now; the one three back is used up.
    void ensureRun(`${series}${n + 1}`);
    void ensureRun(`${series}${n + 2}`);
    started.delete(`${series}${n - 3}`);
    const waiting = ensureRun(runId);
    return waiting === undefined ? serve(request) : waiting.then(() => serve(request));
  },
);
