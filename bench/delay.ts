/**
 * Scale: one call at a time (N = 1) through the Upstash-compatible endpoint with a simulated
 * round trip of 0, 5 and 25 ms: UpstashStore batched (the default) and with `batch: false`,
 * against two PINGs (the floor of our two round trips) and the plain-command baselines
 * (bench/baseline_store.ts: one command per round trip, and one pipeline per phase), interleaved
 * in one run.
 *
 * The round trip is checked in the same run: a PING costs the configured round trip more than at
 * 0 ms (p50 of the 2 x PING row, halved), printed beside it with the endpoint's hold (see
 * `setRoundTrip` in _fixture.ts).
 *
 * Run: `deno task bench:delay` (`BENCH_N=<calls per row and delay>`, default 200).
 *
 * @module
 */
import { type RunContext, ToolBoundary } from "../src/mod.ts";
import { UpstashStore } from "../src/upstash/mod.ts";
import { BaselineStore, PipelinedBaselineStore } from "./baseline_store.ts";
import { logRaw, ms, percentile, printTable, searchLogsTool, SMOKE } from "./_common.ts";
import { type RoundTrip, startBenchFixture } from "./_fixture.ts";

const N = SMOKE ? 4 : Number(Deno.env.get("BENCH_N") ?? 200);
const DELAYS = SMOKE ? [0] : [0, 5, 25];
const CALLS_PER_RUN = 100;

const raw = logRaw(1024);
const tool = searchLogsTool(raw);

const fixture = await startBenchFixture();
try {
  const ping = fixture.createRedis();
  const rows: {
    name: string;
    /** Untimed: starts a new run when the current one has used its budget. */
    prepare?: () => Promise<void>;
    op: () => Promise<void>;
    samples: Map<number, number[]>;
  }[] = [{
    name: "2 x PING (sequential)",
    op: async () => {
      await ping.ping();
      await ping.ping();
    },
    samples: new Map(),
  }];
  const stores = [
    {
      name: "invoke, UpstashStore (batched, default)",
      store: new UpstashStore({ redis: fixture.createRedis(), prefix: "ours" }),
    },
    {
      name: "invoke, UpstashStore batch: false",
      store: new UpstashStore({ redis: fixture.createRedis(), prefix: "alone", batch: false }),
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
    let run: RunContext | undefined;
    let calls = 0;
    let seq = 0;
    rows.push({
      name,
      samples: new Map(),
      prepare: async () => {
        if (run === undefined || calls >= CALLS_PER_RUN) {
          run = await boundary.startRun({
            ttlMs: 600_000,
            budget: { calls: CALLS_PER_RUN, perTool: { [tool.name]: CALLS_PER_RUN } },
          });
          calls = 0;
        }
      },
      op: async () => {
        calls++;
        const result = await boundary.invoke(run!, {
          toolCallId: `call_${seq++}`,
          runId: run!.runId,
          toolName: tool.name,
          input: { query: "timeout" },
        });
        if (result.status !== "READY") throw new Error(`invoke failed: ${JSON.stringify(result)}`);
      },
    });
  }
  for (const row of rows) {
    for (let i = 0; i < (SMOKE ? 2 : 50); i++) {
      await row.prepare?.();
      await row.op();
    }
  }
  const trips = new Map<number, RoundTrip>();
  for (const delay of DELAYS) {
    trips.set(delay, await fixture.setRoundTrip(delay));
    for (const row of rows) row.samples.set(delay, []);
    for (let i = 0; i < N; i++) {
      for (let k = 0; k < rows.length; k++) {
        const row = rows[(k + i) % rows.length]!;
        // A new run every 100 calls, outside the timing: a sample is one invoke, as the PING row's
        // is two PINGs (as in figure 1).
        await row.prepare?.();
        const started = performance.now();
        await row.op();
        row.samples.get(delay)!.push(performance.now() - started);
      }
    }
  }
  const p50 = (row: (typeof rows)[number], delay: number) =>
    percentile([...row.samples.get(delay)!].sort((a, b) => a - b), 50);
  const table: string[][] = [];
  for (const delay of DELAYS) {
    const pings = p50(rows[0]!, delay);
    for (const row of rows) {
      table.push([
        `${delay} ms`,
        row.name,
        ms(p50(row, delay)),
        `${(p50(row, delay) / pings).toFixed(2)}x`,
      ]);
    }
  }
  console.log(`\n${N} samples per row and delay, one call of each row in turn; 1 KiB raw; p50.\n`);
  printTable(["round trip", "operation", "p50 ms", "p50 / 2 x PING"], table);
  console.log();
  for (const delay of DELAYS.filter((delay) => delay > 0)) {
    const trip = trips.get(delay)!;
    const added = (p50(rows[0]!, delay) - p50(rows[0]!, 0)) / 2;
    console.log(
      `round trip ${delay} ms: a PING costs ${ms(added)} ms more than at 0 ms (p50 of this ` +
        `run's 2 x PING row, halved); the endpoint holds each answer ${ms(trip.hold)} ms ` +
        `(calibrated to ${ms(trip.added)} ms)`,
    );
  }
  for (const delay of DELAYS) {
    const [pings, batched, alone, baseline, pipelined] = rows.map((row) => p50(row, delay));
    console.log(
      `${delay} ms: ours/2xPING = ${(batched! / pings!).toFixed(2)}x (goal <= 1.1 at 5 ms); ` +
        `batched/batch: false = ${(batched! / alone!).toFixed(2)}x; baseline/ours = ${
          (baseline! / batched!).toFixed(2)
        }x; pipelined baseline/ours = ${(pipelined! / batched!).toFixed(2)}x`,
    );
  }
} finally {
  await fixture.stop();
}
