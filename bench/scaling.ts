/**
 * Figure 4: scaling.
 *
 * - A. Invoke latency as one run grows to 10,000 records, per 1,000-call slice, on
 *   `UpstashStore` (through the REST fixture) and on `MemoryStore`.
 * - B. End-of-run projection (`endRunReport`) against the number of calls in the run: time and
 *   round trips, with the default caps (100 facts, 256 KiB) and uncapped (every fact returned).
 * - C. A 1 MiB raw payload through `UpstashStore`, beside a 1 KiB one and PING.
 * - D. Run reads against the calls in the run, on both stores: `getRun` at 1, 1,000 and 100,000
 *   begun calls, and `endRunReport` (default caps) at 100 and 10,000 READY calls, each size's
 *   samples taken in turn with the others', so every ratio comes from one run.
 *
 * Run: `deno task bench:scaling` (`BENCH_SMOKE=1` for a quick pass; `BENCH_PART=D` for D only).
 *
 * @module
 */
import { defineTool, type ProjectorOutput, type RunContext, ToolBoundary } from "../src/mod.ts";
import { MemoryStore } from "../src/memory/mod.ts";
import type { BeginRequest, Store } from "../src/core/store.ts";
import { UpstashStore } from "../src/upstash/mod.ts";
import { type LogRaw, logRaw, ms, percentile, printTable, SMOKE } from "./_common.ts";
import { startBenchFixture } from "./_fixture.ts";

const GROW_TO = SMOKE ? 200 : 10_000;
const SLICE = SMOKE ? 100 : 1_000;
const RUN_SIZES = SMOKE ? [10, 100] : [10, 100, 1_000, 10_000];
const END_REPEATS = SMOKE ? 2 : 5;
const BIG_N = SMOKE ? 2 : 50;
const ONLY_D = Deno.env.get("BENCH_PART") === "D";
const GET_SIZES = SMOKE ? [1, 100, 2_000] : [1, 1_000, 100_000];
const END_SIZES = SMOKE ? [10, 500] : [100, 10_000];
const READ_SAMPLES = SMOKE ? 5 : 41;
const INPUT = { service: "api", query: "timeout" };

function project(raw: LogRaw): ProjectorOutput {
  return {
    evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
    scope: `logs of ${raw.service} matching "${raw.query}", last 24 hours`,
    content: raw.hits.slice(0, 2).map((hit) => `${hit.ts} ${hit.level} ${hit.line}`),
  };
}

const small = logRaw(1024);
const big = logRaw(1_040_000); // just under the default rawBytes limit of 1 MiB
const tools = [
  defineTool({ name: "search_logs", readOnly: true, execute: () => small, project }),
  defineTool({ name: "search_logs_big", readOnly: true, execute: () => big, project }),
];
const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};

let seq = 0;
async function call(boundary: ToolBoundary, run: RunContext, toolName = "search_logs") {
  const started = performance.now();
  const result = await boundary.invoke(run, {
    toolCallId: `call_${seq++}`,
    runId: run.runId,
    toolName,
    input: INPUT,
  });
  const elapsed = performance.now() - started;
  if (result.status !== "READY") throw new Error(`invoke failed: ${JSON.stringify(result)}`);
  return elapsed;
}

const fixture = await startBenchFixture();
try {
  await runReads();
  if (ONLY_D) Deno.exit(0);
  const stores: [string, Store][] = [
    ["UpstashStore", new UpstashStore({ redis: fixture.createRedis(), prefix: "scale" })],
    ["MemoryStore", new MemoryStore()],
  ];
  const unlimited = { factCount: 1_000_000, factBytes: 1 << 30 };

  // A. One run per store grows to GROW_TO records; calls alternate between the stores.
  const growing = await Promise.all(stores.map(async ([name, store]) => {
    const boundary = new ToolBoundary({ store, tools, recordTtlMs: 900_000 });
    const run = await boundary.startRun({ ttlMs: 900_000, budget: { calls: GROW_TO } });
    return { name, boundary, run, slices: [] as number[][] };
  }));
  for (let i = 0; i < GROW_TO; i++) {
    for (const g of growing) {
      if (i % SLICE === 0) g.slices.push([]);
      g.slices.at(-1)!.push(await call(g.boundary, g.run));
    }
  }
  console.log(`\nA. invoke latency as one run grows to ${GROW_TO} records (1 KiB raw), ms\n`);
  printTable(
    ["calls", ...growing.flatMap((g) => [`${g.name} p50`, `${g.name} p99`])],
    growing[0]!.slices.map((_, s) => [
      `${s * SLICE + 1}-${(s + 1) * SLICE}`,
      ...growing.flatMap((g) => {
        const { p50, p99 } = stats(g.slices[s]!);
        return [ms(p50), ms(p99)];
      }),
    ]),
  );
  for (const g of growing) {
    const first = stats(g.slices[0]!).p50;
    const last = stats(g.slices.at(-1)!).p50;
    console.log(`${g.name}: last slice p50 / first slice p50 = ${(last / first).toFixed(2)}x`);
  }

  // B. End of run against the number of calls (UpstashStore; round trips from the endpoint).
  const [, upstash] = stores[0]!;
  const capped = new ToolBoundary({ store: upstash, tools, recordTtlMs: 900_000 });
  const uncapped = new ToolBoundary({
    store: upstash,
    tools,
    recordTtlMs: 900_000,
    limits: unlimited,
  });
  const endRows: string[][] = [];
  for (const size of RUN_SIZES) {
    const run = size === GROW_TO
      ? growing[0]!.run
      : await capped.startRun({ ttlMs: 900_000, budget: { calls: size } });
    if (size !== GROW_TO) { for (let i = 0; i < size; i++) await call(capped, run); }
    for (const [label, boundary] of [["default caps", capped], ["uncapped", uncapped]] as const) {
      const times: number[] = [];
      let facts = 0;
      let requests = 0;
      for (let r = 0; r < END_REPEATS; r++) {
        await fixture.reset();
        const started = performance.now();
        const report = await boundary.endRunReport(run.runId);
        times.push(performance.now() - started);
        requests = await fixture.requests();
        facts = report.facts.length;
      }
      const { p50 } = stats(times);
      endRows.push([
        String(size),
        label,
        String(facts),
        ms(p50),
        `${((p50 * 1000) / size).toFixed(1)}`,
        String(requests),
      ]);
    }
  }
  console.log(
    `\nB. endRunReport on UpstashStore against the calls in the run (median of ${END_REPEATS})\n`,
  );
  printTable(["calls", "caps", "facts", "p50 ms", "us per call", "round trips"], endRows);

  // C. 1 MiB raw through UpstashStore, beside 1 KiB and PING, interleaved.
  const boundary = new ToolBoundary({ store: upstash, tools, recordTtlMs: 120_000 });
  const ping = fixture.createRedis();
  const samples = { ping: [] as number[], small: [] as number[], big: [] as number[] };
  let run = await boundary.startRun({ ttlMs: 900_000, budget: { calls: 100 } });
  for (let i = 0; i < 3 + BIG_N; i++) {
    if ((2 * i + 2) % 100 === 0) {
      run = await boundary.startRun({ ttlMs: 900_000, budget: { calls: 100 } });
    }
    const started = performance.now();
    await ping.ping();
    const p = performance.now() - started;
    const s = await call(boundary, run);
    const b = await call(boundary, run, "search_logs_big");
    if (i < 3) continue; // warm-up
    samples.ping.push(p);
    samples.small.push(s);
    samples.big.push(b);
  }
  await fixture.reset();
  await call(boundary, run, "search_logs_big");
  const bigRequests = await fixture.requests();
  const pingP50 = stats(samples.ping).p50;
  console.log(`\nC. a 1 MiB raw payload through UpstashStore (${BIG_N} calls each, interleaved)\n`);
  printTable(
    ["operation", "raw bytes", "p50 ms", "p99 ms", "p50 / 2xPING", "round trips"],
    [
      ["PING", "-", ms(pingP50), ms(stats(samples.ping).p99), "-", "1"],
      ...([["invoke", samples.small, small], ["invoke", samples.big, big]] as const).map((
        [name, data, raw],
      ) => [
        name,
        String(JSON.stringify(raw).length),
        ms(stats(data).p50),
        ms(stats(data).p99),
        `${(stats(data).p50 / (2 * pingP50)).toFixed(2)}x`,
        raw === big ? String(bigRequests) : "2",
      ]),
    ],
  );
} finally {
  await fixture.stop();
}

/** D: run reads against the calls in the run, on both stores. */
async function runReads(): Promise<void> {
  const stores: [string, Store][] = [
    ["UpstashStore", new UpstashStore({ redis: fixture.createRedis(), prefix: "reads" })],
    ["MemoryStore", new MemoryStore({ maxRecords: 1_000_000 })],
  ];
  const ttlMs = 3_600_000;
  const agentResultJson = JSON.stringify(project(small));
  /** A run with `size` calls begun straight on the store, `ready` of them completed READY. */
  const seed = async (store: Store, size: number, complete: boolean) => {
    const runId = `reads-${seq++}`;
    const now = Date.now();
    await store.startRun({
      runId,
      deadline: now + ttlMs,
      budget: { calls: size, perTool: {} },
      ttlMs,
      attemptId: runId,
      now,
    });
    // In chunks that run in parallel: UpstashStore packs each into one pipeline request.
    for (let from = 0; from < size; from += 500) {
      const chunk = Array.from({ length: Math.min(500, size - from) }, (_, i) => from + i);
      await Promise.all(chunk.map(async (i) => {
        const request: BeginRequest = {
          runId,
          toolCallId: `call_${i}`,
          toolName: "search_logs",
          requestJson: JSON.stringify(INPUT),
          requestDigest: "bench-digest",
          attemptId: `a${i}`,
          ttlMs,
          now: Date.now(),
        };
        const begun = await store.begin(request);
        if (!begun.ok) throw new Error(`begin failed: ${begun.code}`);
        if (!complete) return;
        const done = await store.complete({
          runId,
          toolCallId: request.toolCallId,
          attemptId: request.attemptId,
          outcome: {
            status: "READY",
            evidence: "EVIDENCE_FOUND",
            rawJson: JSON.stringify(small),
            agentResultJson,
          },
          now: Date.now(),
        });
        if (!done.ok) throw new Error(`complete failed: ${done.code}`);
      }));
    }
    return runId;
  };
  const time = async (op: () => Promise<unknown>) => {
    const started = performance.now();
    await op();
    return performance.now() - started;
  };
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const [name, store] of stores) {
    const boundary = new ToolBoundary({ store, tools, recordTtlMs: ttlMs });
    const getRuns = await Promise.all(GET_SIZES.map((size) => seed(store, size, false)));
    const endRuns = await Promise.all(END_SIZES.map((size) => seed(store, size, true)));
    const firstEnd: number[] = [];
    for (const runId of endRuns) firstEnd.push(await time(() => boundary.endRun(runId)));
    const gets = GET_SIZES.map(() => [] as number[]);
    const ends = END_SIZES.map(() => [] as number[]);
    for (let r = 0; r < READ_SAMPLES + 2; r++) {
      for (const [i, runId] of getRuns.entries()) {
        const t = await time(() => store.getRun(runId));
        if (r >= 2) gets[i]!.push(t); // the first two rounds warm up
      }
      for (const [i, runId] of endRuns.entries()) {
        const t = await time(() => boundary.endRunReport(runId));
        if (r >= 2) ends[i]!.push(t);
      }
    }
    const getP50 = gets.map((samples) => stats(samples).p50);
    const endP50 = ends.map((samples) => stats(samples).p50);
    for (const [i, size] of GET_SIZES.entries()) {
      rows.push([
        name,
        "getRun",
        String(size),
        ms(getP50[i]!),
        `${(getP50[i]! / getP50[0]!).toFixed(2)}x`,
      ]);
    }
    for (const [i, size] of END_SIZES.entries()) {
      rows.push([
        name,
        `endRunReport (first end ${ms(firstEnd[i]!)})`,
        String(size),
        ms(endP50[i]!),
        `${(endP50[i]! / endP50[0]!).toFixed(2)}x`,
      ]);
    }
    verdicts.push(
      `${name}: getRun at ${GET_SIZES.at(-1)} / at ${GET_SIZES[0]} calls = ${
        (getP50.at(-1)! / getP50[0]!).toFixed(2)
      }x (goal <= 2x); endRunReport at ${END_SIZES.at(-1)} / at ${END_SIZES[0]} READY = ${
        (endP50.at(-1)! / endP50[0]!).toFixed(2)
      }x (goal <= 2x)`,
    );
  }
  console.log(
    `\nD. run reads against the calls in the run (p50 of ${READ_SAMPLES}, sizes in turn), ms\n`,
  );
  printTable(["store", "read", "calls", "p50 ms", "/ smallest"], rows);
  for (const line of verdicts) console.log(line);
}
