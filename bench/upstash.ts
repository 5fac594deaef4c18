/**
 * Figures 1 and 2: `ToolBoundary.invoke` on `UpstashStore` against the same boundary on
 * `BaselineStore` (plain `@upstash/redis` commands, one round trip each, see baseline_store.ts)
 * and on `PipelinedBaselineStore` (the same commands, one pipeline per phase), and against the
 * floor of two PINGs (our two round trips: begin and complete), all through the same
 * Upstash-compatible REST endpoint in front of a local redis-server, interleaved in one run.
 *
 * Run: `deno task bench:upstash` (`BENCH_N=<calls per row>`, default 1000).
 *
 * @module
 */
import { type RunContext, ToolBoundary } from "../src/mod.ts";
import { UpstashStore } from "../src/upstash/mod.ts";
import { BaselineStore, PipelinedBaselineStore } from "./baseline_store.ts";
import { logRaw, ms, percentile, printTable, searchLogsTool, SMOKE } from "./_common.ts";
import { startBenchFixture } from "./_fixture.ts";

const N = SMOKE ? 10 : Number(Deno.env.get("BENCH_N") ?? 1000);
const BLOCK = SMOKE ? 5 : 20;
const WARMUP = SMOKE ? 3 : 100;
const INPUT = { service: "api", query: "timeout", window: "24h", limit: 50 };
const CALLS_PER_RUN = 100;

/** One row of the table: something timed once per sample. */
interface Row {
  name: string;
  payload: string;
  /** Untimed: starts a new run when the current one cannot take a whole block. */
  prepare: () => Promise<void>;
  op: () => Promise<void>;
  samples: number[];
  requests: number;
  ops: number;
}

/** A boundary with a run that is renewed every 100 calls, outside the timing. */
function invoker(boundary: ToolBoundary, toolName: string) {
  let run: RunContext | undefined;
  let calls = 0;
  let seq = 0;
  return {
    async prepare(): Promise<void> {
      if (run === undefined || calls + BLOCK > CALLS_PER_RUN) {
        run = await boundary.startRun({
          ttlMs: 600_000,
          budget: { calls: CALLS_PER_RUN, perTool: { [toolName]: CALLS_PER_RUN } },
        });
        calls = 0;
      }
    },
    async invoke(): Promise<void> {
      calls++;
      const result = await boundary.invoke(run!, {
        toolCallId: `call_${seq++}`,
        runId: run!.runId,
        toolName,
        input: INPUT,
      });
      if (result.status !== "READY") throw new Error(`invoke failed: ${JSON.stringify(result)}`);
    },
  };
}

const fixture = await startBenchFixture();
try {
  const rows: Row[] = [];
  const ping = fixture.createRedis();
  rows.push({
    name: "PING",
    payload: "-",
    prepare: () => Promise.resolve(),
    op: async () => {
      await ping.ping();
    },
    samples: [],
    requests: 0,
    ops: 0,
  });
  // The client as `Redis.fromEnv()` makes it, and one that skips the client's per-string
  // reply decoding (base64, then a JSON.parse attempt that throws on every store reply string).
  const raw_replies = { automaticDeserialization: false, responseEncoding: false } as const;
  for (const [payload, bytes] of [["1 KiB", 1024], ["64 KiB", 65_536]] as const) {
    const raw = logRaw(bytes);
    const tool = searchLogsTool(raw);
    const stores = [
      {
        name: "invoke, UpstashStore",
        store: new UpstashStore({ redis: fixture.createRedis(), prefix: "ours" }),
      },
      {
        name: "invoke, UpstashStore, raw-reply client",
        store: new UpstashStore({ redis: fixture.createRedis(raw_replies), prefix: "ours-raw" }),
      },
      {
        name: "invoke, BaselineStore (plain commands)",
        store: new BaselineStore(fixture.createRedis(), "baseline"),
      },
      {
        name: "invoke, PipelinedBaselineStore (plain, pipelined)",
        store: new PipelinedBaselineStore(fixture.createRedis(), "pipelined"),
      },
    ];
    for (const { name, store } of stores) {
      const boundary = new ToolBoundary({ store, tools: [tool], recordTtlMs: 300_000 });
      const calls = invoker(boundary, tool.name);
      rows.push({
        name,
        payload,
        prepare: calls.prepare,
        op: calls.invoke,
        samples: [],
        requests: 0,
        ops: 0,
      });
    }
  }

  // Warm up: connections, JIT, EVALSHA -> NOSCRIPT -> EVAL once per script.
  for (const row of rows) {
    for (let i = 0; i < WARMUP; i++) {
      await row.prepare();
      await row.op();
    }
  }

  // Interleave one call of each row at a time, rotating the order, so that noise and the
  // state of the machine fall on all rows alike.
  for (let i = 0; i < N; i++) {
    for (let k = 0; k < rows.length; k++) {
      const row = rows[(k + i) % rows.length]!;
      await row.prepare();
      const started = performance.now();
      await row.op();
      row.samples.push(performance.now() - started);
    }
  }
  // Round trips, counted by the endpoint over a block of calls per row.
  for (const row of rows) {
    await row.prepare();
    await fixture.reset();
    for (let i = 0; i < BLOCK; i++) await row.op();
    row.requests += await fixture.requests();
    row.ops += BLOCK;
  }

  const stats = new Map(rows.map((row) => {
    const sorted = [...row.samples].sort((a, b) => a - b);
    return [row, {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    }];
  }));
  const pingP50 = stats.get(rows[0]!)!.p50;
  const oursOf = (payload: string) =>
    stats.get(rows.find((r) => r.payload === payload && r.name === "invoke, UpstashStore")!)!;
  console.log(
    `\n${N} samples per row, one call of each row in turn; times in ms on this machine.\n`,
  );
  printTable(
    [
      "operation",
      "raw",
      "p50 ms",
      "p99 ms",
      "mean ms",
      "round trips",
      "p50 / ours",
      "p50 / 2xPING",
    ],
    rows.map((row) => {
      const s = stats.get(row)!;
      const ours = row.payload === "-" ? undefined : oursOf(row.payload);
      return [
        row.name,
        row.payload,
        ms(s.p50),
        ms(s.p99),
        ms(s.mean),
        (row.requests / row.ops).toFixed(2),
        ours === undefined ? "-" : `${(s.p50 / ours.p50).toFixed(2)}x`,
        row.payload === "-" ? "-" : `${(s.p50 / (2 * pingP50)).toFixed(2)}x`,
      ];
    }),
  );
  for (const payload of ["1 KiB", "64 KiB"]) {
    const ours = oursOf(payload);
    const of = (name: string) =>
      stats.get(rows.find((r) => r.payload === payload && r.name.startsWith(name))!)!;
    const baseline = of("invoke, BaselineStore");
    const pipelined = of("invoke, PipelinedBaselineStore");
    console.log(
      `\n${payload}: baseline/ours at p50 = ${(baseline.p50 / ours.p50).toFixed(2)}x ` +
        `(figure 1 target >= 3x); pipelined baseline/ours = ${
          (pipelined.p50 / ours.p50).toFixed(2)
        }x; ours/(2 x PING p50) = ${(ours.p50 / (2 * pingP50)).toFixed(2)}x at p50, ${
          (ours.p99 / (2 * pingP50)).toFixed(2)
        }x at p99 (figure 2 target <= 1.3x at p50 for 1 KiB)`,
    );
  }
} finally {
  await fixture.stop();
}
