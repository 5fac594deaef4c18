/**
 * Scale: N calls of one step started at once (`Promise.all` of N invokes), on UpstashStore with
 * its batching on (the default) and with `batch: false`, through the Upstash-compatible endpoint
 * with a simulated round trip of BENCH_DELAY_MS (default 5; `setRoundTrip` in _fixture.ts). Prints the
 * REST requests the endpoint counted per step and the step's wall time, side by side in one run.
 * Each mode runs twice: with as many connections as the client opens, and with at most six
 * requests in flight at once, as a Cloudflare Worker has (six simultaneous open connections per
 * invocation; the others wait for one to close).
 *
 * Run: `deno task bench:parallel` (`BENCH_ROUNDS=<steps per row>`, default 15).
 *
 * @module
 */
import { ToolBoundary } from "../src/mod.ts";
import { UpstashStore } from "../src/upstash/mod.ts";
import { logRaw, ms, percentile, printTable, searchLogsTool, SMOKE } from "./_common.ts";
import { startBenchFixture } from "./_fixture.ts";

const ROUNDS = SMOKE ? 1 : Number(Deno.env.get("BENCH_ROUNDS") ?? 15);
const DELAY_MS = SMOKE ? 0 : Number(Deno.env.get("BENCH_DELAY_MS") ?? 5);
const SIZES = [1, 4, 16, 64];

const raw = logRaw(1024);
const tool = searchLogsTool(raw);

/** Workers' limit: six simultaneous open connections per invocation. */
const WORKERS_CONNECTIONS = 6;
const unlimitedFetch = globalThis.fetch;

/** `fetch` with at most `slots` requests in flight, the rest queued in order. */
function limitedFetch(slots: number): typeof fetch {
  let inFlight = 0;
  const queue: (() => void)[] = [];
  return async (input, init) => {
    if (inFlight >= slots) await new Promise<void>((resolve) => queue.push(resolve));
    inFlight++;
    try {
      const response = await unlimitedFetch(input, init);
      // A connection is taken until the body is read: buffer it, then free the slot.
      const body = await response.arrayBuffer();
      return new Response(body, response);
    } finally {
      inFlight--;
      queue.shift()?.();
    }
  };
}

const fixture = await startBenchFixture();
try {
  // Auto-pipelining off in both clients: only the store's own batching differs.
  const modes = [
    { name: "batched (default)", batch: undefined, slots: Infinity },
    { name: "batch: false", batch: false as const, slots: Infinity },
    { name: "batched, 6 connections", batch: undefined, slots: WORKERS_CONNECTIONS },
    { name: "batch: false, 6 connections", batch: false as const, slots: WORKERS_CONNECTIONS },
  ].map(({ name, batch, slots }, i) => {
    const store = new UpstashStore({
      redis: fixture.createRedis({ enableAutoPipelining: false }),
      prefix: `${batch === false ? "alone" : "batched"}${i}`,
      ...(batch === false ? { batch } : {}),
    });
    const fetch = slots === Infinity ? unlimitedFetch : limitedFetch(slots);
    // The row each is compared with: the unbatched one with the same connections.
    const alone = slots === Infinity ? "batch: false" : "batch: false, 6 connections";
    return {
      name,
      alone,
      fetch,
      boundary: new ToolBoundary({ store, tools: [tool], recordTtlMs: 300_000 }),
    };
  });
  let seq = 0;
  const step = async (mode: (typeof modes)[number], n: number): Promise<number> => {
    const { boundary } = mode;
    // The client's requests go through this mode's fetch (rows run one at a time).
    globalThis.fetch = mode.fetch;
    const run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: n } });
    // Counted from here: startRun is one request batched, two with batch: false.
    await fixture.reset();
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: n }, () =>
        boundary.invoke(run, {
          toolCallId: `call_${seq++}`,
          runId: run.runId,
          toolName: tool.name,
          input: { query: "timeout" },
        })),
    );
    const elapsed = performance.now() - started;
    if (results.some((r) => r.status !== "READY")) throw new Error("a call was not READY");
    return elapsed;
  };
  for (const mode of modes) await step(mode, 4); // scripts loaded, JIT warm
  const trip = await fixture.setRoundTrip(DELAY_MS);
  const rows: string[][] = [];
  const wall = new Map<string, number>();
  for (const n of SIZES) {
    const samples = new Map(modes.map((m) => [m.name, [] as number[]]));
    const requests = new Map<string, number>();
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
        samples.get(mode.name)!.push(await step(mode, n));
        requests.set(mode.name, await fixture.requests());
      }
    }
    for (const mode of modes) {
      const sorted = samples.get(mode.name)!.sort((a, b) => a - b);
      wall.set(`${mode.name}/${n}`, percentile(sorted, 50));
    }
    for (const mode of modes) {
      const p50 = wall.get(`${mode.name}/${n}`)!;
      const alone = wall.get(`${mode.alone}/${n}`)!;
      rows.push([
        String(n),
        mode.name,
        String(requests.get(mode.name)),
        ms(p50),
        `${(p50 / alone).toFixed(2)}x`,
      ]);
    }
  }
  console.log(
    `\n${ROUNDS} steps per row, alternating; a ${DELAY_MS} ms round trip (a PING pays ` +
      `${ms(trip.added)} ms more than at 0 ms; endpoint hold ${ms(trip.hold)} ms); 1 KiB raw; ` +
      "wall time of the whole step (N invokes started at once), p50.\n",
  );
  printTable(["N", "store", "REST requests", "p50 ms", "p50 / batch: false"], rows);
  const ratio16 = wall.get("batched (default)/16")! / wall.get("batch: false/16")!;
  const workers16 = wall.get("batched, 6 connections/16")! /
    wall.get("batch: false, 6 connections/16")!;
  console.log(`\nN = 16: batched / batch: false wall time = ${ratio16.toFixed(2)}x (goal <= 0.7x)`);
  console.log(`N = 16, six connections (Workers): ${workers16.toFixed(2)}x`);
  // The floor: a step of one call is two round trips and one call's work, the least any store
  // needs for a step. Even a batch that cost nothing more would take this long at N = 16.
  const floor = wall.get("batched (default)/1")!;
  console.log(
    `Floor (a step of one call): ${ms(floor)} ms; the best any batching could reach at N = 16: ` +
      `${(floor / wall.get("batch: false/16")!).toFixed(2)}x, ` +
      `${(floor / wall.get("batch: false, 6 connections/16")!).toFixed(2)}x with six connections`,
  );
} finally {
  globalThis.fetch = unlimitedFetch;
  await fixture.stop();
}
