/**
 * The ledger inside Cloudflare against Upstash (figure 12): per-call time of `invoke` with
 * `DurableObjectStore` inside the Durable Object that runs the calls (as in an `Agent`), with
 * `boundaryStore` over the namespace (a Worker calling the run's object by RPC), and with a
 * `MemoryStore` in the same object (the floor: no storage at all); against `UpstashStore`
 * through the Upstash-compatible endpoint with a simulated round trip of 5 and 25 ms (a PING
 * costs that much more than at 0 ms: `setRoundTrip` in _fixture.ts), and two PINGs at each
 * delay. In one run, as ratios; with the store requests and SQLite rows each call costs.
 *
 * Time in workerd stands still between I/O, so the workerd rows are timed from outside: a request
 * that makes `n` calls, less one that makes none, over `n` (the median of the rounds). workerd
 * runs here through miniflare, on this machine: the Durable Object rows leave out what
 * Cloudflare's storage adds to the object's replies (writes are confirmed before they leave),
 * which is per reply, not per call.
 *
 * Run: `deno task bench:cloudflare` (`BENCH_N=<calls per sample>`, default 200;
 * `BENCH_ROUNDS`, default 15).
 *
 * @module
 */
import { type RunContext, ToolBoundary } from "../src/mod.ts";
import { UpstashStore } from "../src/upstash/mod.ts";
import { bundle, serveMiniflare } from "../tests/runtime/setup.ts";
import { logRaw, ms, percentile, printTable, searchLogsTool, SMOKE } from "./_common.ts";
import { type RoundTrip, startBenchFixture } from "./_fixture.ts";
import type { Cost } from "./cloudflare_worker.ts";

const N = SMOKE ? 4 : Number(Deno.env.get("BENCH_N") ?? 200);
const ROUNDS = SMOKE ? 1 : Number(Deno.env.get("BENCH_ROUNDS") ?? 15);
const DELAYS = SMOKE ? [0] : [5, 25];
const CALLS_PER_RUN = 100;

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

/** The workerd rows: per-call ms (median of the rounds) and the cost of one call. */
async function measureWorkerd(): Promise<Map<string, { ms: number; cost: Cost }>> {
  const dir = await Deno.makeTempDir({ prefix: "tb-bench-cloudflare-" });
  const measured = new Map<string, { ms: number; cost: Cost }>();
  try {
    const script = await bundle("bench/cloudflare_worker.ts", dir, undefined, {
      external: ["cloudflare:*"],
    });
    await serveMiniflare({
      modules: true,
      scriptPath: script,
      modulesRoot: dir,
      compatibilityDate: "2026-07-01",
      compatibilityFlags: ["nodejs_compat"],
      durableObjects: {
        LEDGER: { className: "LedgerObject", useSQLite: true },
        BENCH: { className: "BenchObject", useSQLite: true },
      },
    }, async (base) => {
      const paths = {
        "DurableObjectStore, in the object": "/object?store=durable",
        "MemoryStore, in the object (floor)": "/object?store=memory",
        "boundaryStore, namespace over RPC": "/namespace?",
      };
      const ask = async (path: string, n: number): Promise<[number, Cost]> => {
        const started = performance.now();
        const res = await fetch(`${base}${path}&n=${n}`);
        const cost = await res.json() as Cost;
        const took = performance.now() - started;
        if (!res.ok || cost.ready !== n) throw new Error(`${path}: ${JSON.stringify(cost)}`);
        return [took, cost];
      };
      const samples = new Map<string, number[]>();
      const costs = new Map<string, Cost>();
      for (const name of Object.keys(paths)) samples.set(name, []);
      // Warm-up, untimed: every path once.
      for (const path of Object.values(paths)) await ask(path, N);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, path] of Object.entries(paths)) {
          const [empty, before] = await ask(path, 0);
          const [full, after] = await ask(path, N);
          samples.get(name)!.push((full - empty) / N);
          costs.set(name, {
            ready: N,
            requests: (after.requests - before.requests) / N,
            rowsRead: (after.rowsRead - before.rowsRead) / N,
            rowsWritten: (after.rowsWritten - before.rowsWritten) / N,
          });
        }
      }
      for (const name of Object.keys(paths)) {
        measured.set(name, { ms: median(samples.get(name)!), cost: costs.get(name)! });
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return measured;
}

/** The Upstash rows at each delay: p50 ms of one invoke and of two PINGs, commands per call. */
async function measureUpstash(): Promise<
  {
    delay: number;
    invoke: number;
    pings: number;
    commands: number;
    requests: number;
    trip: RoundTrip;
  }[]
> {
  const fixture = await startBenchFixture();
  const rows = [];
  try {
    const tool = searchLogsTool(logRaw(1024));
    const ping = fixture.createRedis();
    const store = new UpstashStore({ redis: fixture.createRedis(), prefix: "cf-bench" });
    const boundary = new ToolBoundary({ store, tools: [tool], recordTtlMs: 300_000 });
    let run: RunContext | undefined;
    let calls = 0;
    let seq = 0;
    const prepare = async () => {
      if (run === undefined || calls >= CALLS_PER_RUN) {
        run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: CALLS_PER_RUN } });
        calls = 0;
      }
    };
    const invoke = async () => {
      calls++;
      const result = await boundary.invoke(run!, {
        toolCallId: `call_${seq++}`,
        runId: run!.runId,
        toolName: tool.name,
        input: { query: "timeout" },
      });
      if (result.status !== "READY") throw new Error(`invoke: ${JSON.stringify(result)}`);
    };
    for (let i = 0; i < (SMOKE ? 2 : 50); i++) {
      await prepare();
      await invoke();
    }
    // Commands and requests of calls alone (a run is started before, untimed and uncounted).
    run = undefined;
    await prepare();
    await fixture.reset();
    const counted = Math.min(N, CALLS_PER_RUN);
    for (let i = 0; i < counted; i++) await invoke();
    const commands = (await fixture.commands()).length / counted;
    const requests = await fixture.requests() / counted;
    for (const delay of DELAYS) {
      const trip = await fixture.setRoundTrip(delay);
      const invokes: number[] = [];
      const pings: number[] = [];
      for (let i = 0; i < N; i++) {
        await prepare();
        let started = performance.now();
        await invoke();
        invokes.push(performance.now() - started);
        started = performance.now();
        await ping.ping();
        await ping.ping();
        pings.push(performance.now() - started);
      }
      rows.push({
        delay,
        invoke: median(invokes),
        pings: median(pings),
        commands,
        requests,
        trip,
      });
    }
  } finally {
    await fixture.stop();
  }
  return rows;
}

const workerd = await measureWorkerd();
const upstash = await measureUpstash();
const inObject = workerd.get("DurableObjectStore, in the object")!.ms;
const table: string[][] = [];
for (const [name, { ms: perCall, cost }] of workerd) {
  table.push([
    name,
    "0 (in workerd)",
    ms(perCall),
    `${(perCall / inObject).toFixed(2)}x`,
    `${cost.requests} RPC`,
    `${cost.rowsRead.toFixed(1)} / ${cost.rowsWritten.toFixed(1)}`,
  ]);
}
for (const row of upstash) {
  table.push([
    "UpstashStore (batched), delay proxy",
    `${row.delay} ms`,
    ms(row.invoke),
    `${(row.invoke / inObject).toFixed(2)}x`,
    // The endpoint counts the commands sent (EVALSHA); Upstash bills what their scripts run too
    // (9 per invoke: figure 7, tests/stores/upstash_billing_test.ts).
    `${row.requests.toFixed(1)} requests (${row.commands.toFixed(1)} EVALSHA)`,
    "-",
  ]);
  table.push([
    "2 x PING, delay proxy",
    `${row.delay} ms`,
    ms(row.pings),
    `${(row.pings / inObject).toFixed(2)}x`,
    "2 commands",
    "-",
  ]);
}
console.log(
  `\n${N} calls per sample, ${ROUNDS} rounds (workerd: median per call of a request of ${N} calls ` +
    `less one of none; Upstash: p50 of one invoke); 1 KiB raw.\n`,
);
printTable(
  [
    "store",
    "round trip",
    "ms per call",
    "vs DurableObjectStore in the object",
    "store requests per call",
    "SQLite rows read / written per call",
  ],
  table,
);
for (const row of upstash) {
  if (row.delay > 0) {
    console.log(
      `round trip ${row.delay} ms: a PING pays ${ms(row.trip.added)} ms more than at 0 ms ` +
        `(endpoint hold ${ms(row.trip.hold)} ms)`,
    );
  }
  console.log(
    `${row.delay} ms: UpstashStore / DurableObjectStore in the object = ` +
      `${(row.invoke / inObject).toFixed(1)}x; ` +
      `boundaryStore over RPC / DurableObjectStore in the object = ${
        (workerd.get("boundaryStore, namespace over RPC")!.ms / inObject).toFixed(1)
      }x; DurableObjectStore / MemoryStore in the object = ${
        (inObject / workerd.get("MemoryStore, in the object (floor)")!.ms).toFixed(2)
      }x`,
  );
}
