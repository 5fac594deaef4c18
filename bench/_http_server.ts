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
 * Prints `ready <runId>` once it listens; a run with a budget no benchmark reaches is started
 * through the app itself.
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

const [mode, port] = [Deno.args[0], Number(Deno.args[1])];
const raw = logRaw(1024);
const project = (raw: LogRaw): ProjectorOutput => ({
  evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
  scope: `logs of ${raw.service} matching "${raw.query}", last 24 hours`,
  content: raw.hits.slice(0, 5).map((hit) => `${hit.ts} ${hit.level} ${hit.line}`),
});
const tool = defineTool({ name: "search_logs", readOnly: true, execute: () => raw, project });

let fetchHandler: (request: Request) => Response | Promise<Response>;
let runId = "bare";
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
  const boundary = new ToolBoundary({ store, tools: [tool], recordTtlMs: 600_000 });
  const app = createApp({ boundary, agentToken: AGENT_TOKEN, harnessToken: HARNESS_TOKEN });
  const started = await app.request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${HARNESS_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ ttlMs: 3_600_000, budget: { calls: 100_000_000 } }),
  });
  if (started.status !== 201) {
    throw new Error(`startRun: ${started.status} ${await started.text()}`);
  }
  runId = (await started.json()).runId;
  fetchHandler = app.fetch;
}

Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.log(`ready ${runId}`) },
  fetchHandler,
);
