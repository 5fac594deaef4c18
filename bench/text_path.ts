/**
 * Figure 13: the text path (`rawJson(text)`, a `Response`) against the JSON work it cannot
 * avoid, side by side in one process.
 *
 * A. 64 KiB raw in process, MemoryStore: batches of 100 calls per row, rows alternating, the
 *    median of the per-call batch means (as `memory_ratio.ts`). Rows: figure 3's direct path (an
 *    object tool: JSON.parse of the arguments + tool + projector + 3x JSON.stringify); the direct
 *    path of a text tool (the same, but the raw text is parsed for the projector and kept as it
 *    is); `invoke` of the object tool (the copy walk); `invoke` of a text tool as one was written
 *    before the text path (`JSON.parse(text)` in `execute`, then the copy walk); `invoke` of
 *    `rawJson(text)`; `invoke` of a `Response` of the text.
 * B. 1 MiB raw through UpstashStore (redis-server and the REST endpoint in a child process): the
 *    client's CPU time per call (`process.cpuUsage()` of this process, user + system, around
 *    each call; the endpoint's work is in the other process), rows interleaved call by call.
 *    Rows: the JSON work (JSON.parse + JSON.stringify of the same text); `invoke` of
 *    `rawJson(text)`, of the object tool and of the text tool as written before, on UpstashStore;
 *    `invoke` of `rawJson(text)` on MemoryStore (the boundary's own work, no client); the floor of
 *    any store on Upstash (JSON.parse for the projector and one SET of the text through
 *    `@upstash/redis`: its JSON body and its fetch); and, alone, the one `JSON.stringify` the
 *    Redis client makes of a complete's command (the stored text escaped again inside its JSON
 *    body), part of each UpstashStore invoke's figure.
 *
 * Run: `deno task bench:text` (`BENCH_ROUNDS=<batches per row>` for A, default 600;
 * `BENCH_N=<calls per row>` for B, default 60).
 *
 * @module
 */
import process from "node:process";
import {
  type AnyToolDefinition,
  defineTool,
  rawJson,
  type RunContext,
  ToolBoundary,
} from "../src/mod.ts";
import type { Store } from "../src/store/mod.ts";
import { MemoryStore } from "../src/memory/mod.ts";
import { UpstashStore } from "../src/upstash/mod.ts";
import {
  directCalls,
  FIGURE3_INPUT,
  type LogRaw,
  logRaw,
  printTable,
  projectLogs,
  SMOKE,
} from "./_common.ts";
import { startBenchFixture } from "./_fixture.ts";

const ROUNDS = SMOKE ? 3 : Number(Deno.env.get("BENCH_ROUNDS") ?? 600);
const WARMUP = SMOKE ? 1 : 50;
const CALLS = 100; // per batch: the default run budget
const N = SMOKE ? 3 : Number(Deno.env.get("BENCH_N") ?? 60);
const UPSTASH_WARMUP = SMOKE ? 1 : 10;

let sink = 0;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const JSON_HEADERS = { "content-type": "application/json" };

/** The log tool of the figure, its raw response given as `raw` makes it. */
function tool(name: string, raw: () => unknown): AnyToolDefinition {
  return defineTool({
    name,
    readOnly: true,
    execute: raw as () => LogRaw,
    project: (r: LogRaw) => projectLogs(r),
  });
}

const directSignal = new AbortController().signal;

/**
 * The direct path of a tool whose result is JSON text: what a caller must do anyway (parse the
 * arguments and the raw text, call the projector, serialize the request and the projection; the
 * raw text is kept as it is).
 */
async function directTextCalls(text: string, calls: number): Promise<number> {
  const textTool = tool("search_logs_text", () => text);
  let length = 0;
  for (let i = 0; i < calls; i++) {
    const input = JSON.parse(FIGURE3_INPUT);
    const requestJson = JSON.stringify(input);
    const rawText = await textTool.execute(input, {
      signal: directSignal,
      run: undefined!,
      toolCallId: "call_1",
      settle: () => {},
    }) as string;
    const projection = await textTool.project(JSON.parse(rawText), {
      run: undefined!,
      toolCallId: "call_1",
      input,
    });
    length += requestJson.length + rawText.length + JSON.stringify(projection).length;
  }
  return length;
}

interface Row {
  name: string;
  batch: () => Promise<void>;
  prepare?: () => Promise<void>;
  means: number[];
}

/** Invokes of `toolDef` on a MemoryStore, a fresh run per batch (untimed). */
async function invokeRow(name: string, toolDef: AnyToolDefinition): Promise<Row> {
  let boundary = new ToolBoundary({ store: new MemoryStore(), tools: [toolDef] });
  let run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: CALLS } });
  let batches = 0;
  let seq = 0;
  return {
    name,
    batch: async () => {
      for (let i = 0; i < CALLS; i++) {
        const answer = await boundary.invoke(run, {
          toolCallId: `call_${seq++}`,
          runId: run.runId,
          toolName: toolDef.name,
          input: FIGURE3_INPUT,
        });
        if (answer.status !== "READY") throw new Error(`invoke failed: ${JSON.stringify(answer)}`);
      }
    },
    prepare: async () => {
      if (++batches % 10 === 0) {
        boundary = new ToolBoundary({ store: new MemoryStore(), tools: [toolDef] });
      }
      run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: CALLS } });
    },
    means: [],
  };
}

async function inProcess(): Promise<void> {
  const raw = logRaw(64 * 1024);
  const text = JSON.stringify(raw);
  const bytes = new TextEncoder().encode(text);
  const objectTool = tool("search_logs", () => raw);
  const rows: Row[] = [
    {
      name: "direct, object tool: JSON.parse + tool + projector + 3x JSON.stringify",
      batch: async () => {
        sink += await directCalls(objectTool, CALLS);
      },
      means: [],
    },
    {
      name:
        "direct, text tool: JSON.parse + tool + JSON.parse of the text + projector + 2x JSON.stringify",
      batch: async () => {
        sink += await directTextCalls(text, CALLS);
      },
      means: [],
    },
    await invokeRow("invoke, object tool (read by the copy walk)", objectTool),
    await invokeRow(
      "invoke, text tool before: JSON.parse(text) in execute, then the copy walk",
      tool("search_logs_parsed", () => JSON.parse(text)),
    ),
    await invokeRow("invoke, rawJson(text)", tool("search_logs_text", () => rawJson(text))),
    await invokeRow(
      "invoke, a Response of the text",
      tool("search_logs_response", () => new Response(bytes, { headers: JSON_HEADERS })),
    ),
  ];
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (let k = 0; k < rows.length; k++) {
      const row = rows[(k + round) % rows.length]!; // each row first in turn
      const started = performance.now();
      await row.batch();
      const elapsed = performance.now() - started;
      if (round >= WARMUP) row.means.push((elapsed * 1000) / CALLS);
      await row.prepare?.();
    }
  }
  const direct = median(rows[0]!.means);
  const directText = median(rows[1]!.means);
  console.log(
    `\nA. ${ROUNDS} batches of ${CALLS} calls per row (after ${WARMUP} warm-up batches), rows ` +
      `alternating, ${text.length} bytes raw, MemoryStore; median of the per-call batch means.\n`,
  );
  printTable(
    ["row", "us per call", "/ direct, object", "/ direct, text"],
    rows.map((row) => {
      const m = median(row.means);
      return [
        row.name,
        m.toFixed(1),
        `${(m / direct).toFixed(2)}x`,
        `${(m / directText).toFixed(2)}x`,
      ];
    }),
  );
  const textInvoke = median(rows[4]!.means);
  console.log(
    `\nrawJson invoke / direct (figure 3's) = ${(textInvoke / direct).toFixed(2)}x, ` +
      `/ direct text tool = ${(textInvoke / directText).toFixed(2)}x (target <= 2x); ` +
      `object invoke / direct = ${(median(rows[2]!.means) / direct).toFixed(2)}x; ` +
      `rawJson invoke / text tool before = ${(textInvoke / median(rows[3]!.means)).toFixed(2)}x`,
  );
}

/** CPU microseconds (user + system) of this process while `op` runs. */
async function cpuOf(op: () => Promise<unknown> | unknown): Promise<number> {
  const before = process.cpuUsage();
  await op();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

/**
 * Invokes of `toolName` on a boundary over `store()`, a fresh run (and store) every `perRun`
 * calls, untimed only when the op is timed as a whole: runs start inside the op every `perRun`.
 */
function invoker(
  store: () => Store,
  tools: AnyToolDefinition[],
  perRun: number,
): (toolName: string) => Promise<void> {
  let boundary: ToolBoundary | undefined;
  let run: RunContext | undefined;
  let calls = perRun;
  let seq = 0;
  return async (toolName) => {
    if (calls >= perRun) {
      // Records live one minute: the rows do not fill redis-server.
      boundary = new ToolBoundary({ store: store(), tools, recordTtlMs: 60_000 });
      run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: perRun } });
      calls = 0;
    }
    calls++;
    const answer = await boundary!.invoke(run!, {
      toolCallId: `call_${seq++}`,
      runId: run!.runId,
      toolName,
      input: FIGURE3_INPUT,
    });
    if (answer.status !== "READY") throw new Error(`invoke failed: ${JSON.stringify(answer)}`);
  };
}

async function throughUpstash(): Promise<void> {
  const raw = logRaw(1024 * 1024);
  const text = JSON.stringify(raw);
  const fixture = await startBenchFixture();
  try {
    const redis = fixture.createRedis();
    const tools = [
      tool("search_logs", () => raw),
      tool("search_logs_parsed", () => JSON.parse(text)),
      tool("search_logs_text", () => rawJson(text)),
    ];
    const rest = fixture.createRest();
    const upstash = new UpstashStore({ redis });
    const onUpstash = invoker(() => upstash, tools, 100);
    const onRest = invoker(() => new UpstashStore({ redis: rest }), tools, 100);
    // A fresh MemoryStore every 10 calls: it would otherwise hold every 1 MiB record.
    const inMemory = invoker(() => new MemoryStore(), tools, 10);
    // The command body the Redis client sends for a complete: its JSON.stringify escapes the
    // stored text a second time (what the store passes is already JSON text).
    const completeBody = ["evalsha", "0".repeat(40), 3, "k1", "k2", "k3", "call", "a", "1"];
    let key = 0;
    const rows = [
      {
        name: "JSON work: JSON.parse + JSON.stringify of the text",
        op: () => (sink += JSON.stringify(JSON.parse(text)).length),
      },
      { name: "invoke, rawJson(text), UpstashStore", op: () => onUpstash("search_logs_text") },
      { name: "invoke, object tool, UpstashStore", op: () => onUpstash("search_logs") },
      {
        name: "invoke, text tool before (JSON.parse in execute), UpstashStore",
        op: () => onUpstash("search_logs_parsed"),
      },
      { name: "invoke, rawJson(text), MemoryStore", op: () => inMemory("search_logs_text") },
      {
        name: "floor: JSON.parse + projector + one SET of the text (@upstash/redis)",
        op: async () => {
          sink += (projectLogs(JSON.parse(text) as LogRaw).content as string[]).length;
          await redis.set(`bench:text:${key++ % 8}`, text, { ex: 60 });
        },
      },
      {
        name: "invoke, rawJson(text), UpstashStore on UpstashRestClient",
        op: () => onRest("search_logs_text"),
      },
      {
        name: "floor: JSON.parse + projector + one SET of the text (UpstashRestClient)",
        op: async () => {
          sink += (projectLogs(JSON.parse(text) as LogRaw).content as string[]).length;
          await rest.exec(["SET", `bench:text:${key++ % 8}`, text, "EX", "60"]);
        },
      },
      {
        name: "of which: the Redis client's JSON.stringify of a complete's body",
        op: () => (sink += JSON.stringify([...completeBody, "READY", text, "1", "{}"]).length),
      },
    ].map((row) => ({ ...row, cpu: [] as number[] }));
    for (let i = 0; i < UPSTASH_WARMUP + N; i++) {
      for (let k = 0; k < rows.length; k++) {
        const row = rows[(k + i) % rows.length]!;
        const used = await cpuOf(row.op);
        if (i >= UPSTASH_WARMUP) row.cpu.push(used);
      }
    }
    const work = median(rows[0]!.cpu);
    const floor = median(rows[5]!.cpu);
    console.log(
      `\nB. ${N} calls per row (after ${UPSTASH_WARMUP} warm-up), interleaved call by call, ` +
        `${text.length} bytes raw; UpstashStore through the endpoint in a child process; ` +
        "median client CPU (user + system of this process) per call.\n",
    );
    printTable(
      ["row", "client CPU ms", "/ JSON work", "/ floor"],
      rows.map((row) => {
        const m = median(row.cpu);
        return [
          row.name,
          (m / 1000).toFixed(2),
          `${(m / work).toFixed(2)}x`,
          `${(m / floor).toFixed(2)}x`,
        ];
      }),
    );
    const textCpu = median(rows[1]!.cpu);
    const restCpu = median(rows[6]!.cpu);
    console.log(
      `\nrawJson invoke on UpstashStore / JSON work = ${(textCpu / work).toFixed(2)}x ` +
        `(target <= 2x), / floor = ${(textCpu / floor).toFixed(2)}x; ` +
        `on UpstashRestClient / JSON work = ${(restCpu / work).toFixed(2)}x, ` +
        `/ its floor = ${(restCpu / median(rows[7]!.cpu)).toFixed(2)}x; ` +
        `on MemoryStore / JSON work = ${(median(rows[4]!.cpu) / work).toFixed(2)}x; ` +
        `text tool before / JSON work = ${(median(rows[3]!.cpu) / work).toFixed(2)}x`,
    );
  } finally {
    await fixture.stop();
  }
}

const part = Deno.env.get("BENCH_PART");
if (part !== "B") await inProcess();
if (part !== "A") await throughUpstash();
if (sink === -1) console.log(sink);
