/**
 * Scale: N calls of one step started at once (`Promise.all` of N invokes), on UpstashStore with
 * its batching on (the default) and with `batch: false`, through the Upstash-compatible endpoint
 * with a simulated round trip (every answer delayed by BENCH_DELAY_MS, default 5). Prints the
 * REST requests the endpoint counted per step and the step's wall time, side by side in one run.
 *
 * Run: `deno task bench:parallel` (`BENCH_ROUNDS=<steps per row>`, default 15).
 *
 * @module
 */
import { ToolBoundary } from "../src/mod.ts";
import { UpstashStore } from "../src/stores/upstash/mod.ts";
import { logRaw, ms, percentile, printTable, searchLogsTool, SMOKE } from "./_common.ts";
import { startBenchFixture } from "./_fixture.ts";

const ROUNDS = SMOKE ? 1 : Number(Deno.env.get("BENCH_ROUNDS") ?? 15);
const DELAY_MS = SMOKE ? 0 : Number(Deno.env.get("BENCH_DELAY_MS") ?? 5);
const SIZES = [1, 4, 16, 64];

const raw = logRaw(1024);
const tool = searchLogsTool(raw);

const fixture = await startBenchFixture();
try {
  // Auto-pipelining off in both clients: only the store's own batching differs.
  const modes = [
    { name: "batched (default)", batch: undefined },
    { name: "batch: false", batch: false as const },
  ].map(({ name, batch }) => {
    const store = new UpstashStore({
      redis: fixture.createRedis({ enableAutoPipelining: false }),
      prefix: batch === false ? "alone" : "batched",
      ...(batch === false ? { batch } : {}),
    });
    return { name, boundary: new ToolBoundary({ store, tools: [tool], recordTtlMs: 300_000 }) };
  });
  let seq = 0;
  const step = async (boundary: ToolBoundary, n: number): Promise<number> => {
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
  for (const mode of modes) await step(mode.boundary, 4); // scripts loaded, JIT warm
  await fixture.setDelay(DELAY_MS);
  const rows: string[][] = [];
  const wall = new Map<string, number>();
  for (const n of SIZES) {
    const samples = new Map(modes.map((m) => [m.name, [] as number[]]));
    const requests = new Map<string, number>();
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
        samples.get(mode.name)!.push(await step(mode.boundary, n));
        requests.set(mode.name, await fixture.requests());
      }
    }
    for (const mode of modes) {
      const sorted = samples.get(mode.name)!.sort((a, b) => a - b);
      wall.set(`${mode.name}/${n}`, percentile(sorted, 50));
    }
    for (const mode of modes) {
      const p50 = wall.get(`${mode.name}/${n}`)!;
      const alone = wall.get(`batch: false/${n}`)!;
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
    `\n${ROUNDS} steps per row, alternating; every endpoint answer delayed ${DELAY_MS} ms; ` +
      "1 KiB raw; wall time of the whole step (N invokes started at once), p50.\n",
  );
  printTable(["N", "store", "REST requests", "p50 ms", "p50 / batch: false"], rows);
  const ratio16 = wall.get("batched (default)/16")! / wall.get("batch: false/16")!;
  console.log(`\nN = 16: batched / batch: false wall time = ${ratio16.toFixed(2)}x (goal <= 0.7x)`);
} finally {
  await fixture.stop();
}
