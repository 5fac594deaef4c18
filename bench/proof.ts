/**
 * Figure 10: what the ledger costs. A. In process (MemoryStore): `invoke` with a `ledgerKey`
 * against the same boundary without one, interleaved; the difference is hashing the record and
 * one Ed25519 signature. B. UpstashStore through the REST endpoint with a simulated round trip of
 * 5 ms (`calibrateRoundTrip` in _fixture.ts; the endpoint runs in this process): invoke p50 with
 * and without a key, REST requests per invoke and per endRun. C. endRun with an RFC 3161 timestamp from a real TSA on loopback (`openssl ts`
 * behind tests/support/tsa.ts): TSA requests per call and per seal, and endRun's p50 with and
 * without the timestamp.
 *
 * `deno task bench:proof` (BENCH_N=<calls per row>; BENCH_SMOKE=1 for a quick pass).
 *
 * @module
 */
import { defineTool, generateLedgerKeys, ToolBoundary } from "../src/mod.ts";
import type { Store } from "../src/store/mod.ts";
import { MemoryStore } from "../src/memory/mod.ts";
import { UpstashStore } from "../src/upstash/mod.ts";
import { startUpstashFixture } from "../tests/support/upstash_fixture.ts";
import { rfc3161 } from "../src/timestamp/mod.ts";
import { startTsa } from "../tests/support/tsa.ts";
import { calibrateRoundTrip } from "./_fixture.ts";

const SMOKE = Deno.env.get("BENCH_SMOKE") === "1";
const N = SMOKE ? 20 : Number(Deno.env.get("BENCH_N") ?? 2000);
const N_REMOTE = SMOKE ? 10 : Math.max(50, Math.floor(N / 5));
const DELAY_MS = 5;

const raw = {
  lines: Array.from(
    { length: 8 },
    (_, i) => `2026-01-01T00:00:0${i}Z worker timeout ${"x".repeat(100)}`,
  ),
};
const tool = defineTool({
  name: "search_logs",
  readOnly: true,
  execute: () => raw,
  project: (r) => ({ evidence: "EVIDENCE_FOUND", scope: "worker logs", content: r.lines.length }),
});
const keys = await generateLedgerKeys();

interface Row {
  name: string;
  boundary: ToolBoundary;
  samples: number[];
}

function row(name: string, store: Store, signed: boolean): Row {
  const boundary = new ToolBoundary({
    store,
    tools: [tool],
    recordTtlMs: 300_000,
    defaultBudget: { calls: 100_000 },
    ...(signed ? { ledgerKey: keys.privateKey } : {}),
  });
  return { name, boundary, samples: [] };
}

/** Runs `n` invokes per row, one of each row at a time, rotating the order. */
async function measure(rows: Row[], n: number): Promise<void> {
  const runs = await Promise.all(rows.map((r) => r.boundary.startRun({ ttlMs: 600_000 })));
  let id = 0;
  const once = (i: number) =>
    rows[i]!.boundary.invoke(runs[i]!, {
      toolCallId: `call_${id++}`,
      runId: runs[i]!.runId,
      toolName: tool.name,
      input: { query: "timeout" },
    });
  for (let i = 0; i < Math.min(50, n); i++) for (let k = 0; k < rows.length; k++) await once(k);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < rows.length; k++) {
      const j = (k + i) % rows.length;
      const started = performance.now();
      const result = await once(j);
      rows[j]!.samples.push(performance.now() - started);
      if (result.status !== "READY") throw new Error(`${rows[j]!.name}: ${result.status}`);
    }
  }
}

const p = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((q / 100) * sorted.length))]!;
};

const local = [
  row("MemoryStore, no key", new MemoryStore(), false),
  row("MemoryStore, ledgerKey", new MemoryStore(), true),
];
await measure(local, N);
console.log(`\nA. in process, ${N} invokes per row (1 KiB raw), ms\n`);
console.log("| row | p50 | p99 | mean |\n| --- | --- | --- | --- |");
for (const r of local) {
  const mean = r.samples.reduce((a, b) => a + b, 0) / r.samples.length;
  console.log(
    `| ${r.name} | ${p(r.samples, 50).toFixed(3)} | ${p(r.samples, 99).toFixed(3)} | ${
      mean.toFixed(3)
    } |`,
  );
}
const localRatio = p(local[1]!.samples, 50) / p(local[0]!.samples, 50);
const extraUs = (p(local[1]!.samples, 50) - p(local[0]!.samples, 50)) * 1000;
console.log(
  `\nsigned/unsigned at p50 = ${localRatio.toFixed(2)}x (+${extraUs.toFixed(0)} us per invoke)`,
);

const fixture = await startUpstashFixture();
try {
  const client = () => fixture.createRedis({ enableAutoPipelining: false });
  const remote = [
    row("UpstashStore, no key", new UpstashStore({ redis: client(), prefix: "plain" }), false),
    row("UpstashStore, ledgerKey", new UpstashStore({ redis: client(), prefix: "signed" }), true),
  ];
  // Warm every script before the delay and the counts: NOSCRIPT -> EVAL once each.
  await measure(remote, 2);
  for (const r of remote) {
    const run = await r.boundary.startRun({ ttlMs: 600_000 });
    await r.boundary.invoke(run, {
      toolCallId: "w",
      runId: run.runId,
      toolName: tool.name,
      input: {},
    });
    await r.boundary.endRun(run);
    await r.boundary.exportRun(run.runId);
  }
  const probe = fixture.createRedis({ enableAutoPipelining: false });
  const trip = await calibrateRoundTrip(
    DELAY_MS,
    (ms) => fixture.endpoint.setDelay(ms),
    () => probe.ping(),
  );
  await measure(remote, N_REMOTE);
  // Requests per invoke and per endRun, counted by the endpoint.
  const counts: { perInvoke: number; firstEnd: number; laterEnd: number; exported: number }[] = [];
  for (const r of remote) {
    const run = await r.boundary.startRun({ ttlMs: 600_000 });
    fixture.endpoint.reset();
    for (let i = 0; i < 10; i++) {
      await r.boundary.invoke(run, {
        toolCallId: `c${i}`,
        runId: run.runId,
        toolName: tool.name,
        input: {},
      });
    }
    const perInvoke = fixture.endpoint.requests / 10;
    fixture.endpoint.reset();
    await r.boundary.endRun(run);
    const firstEnd = fixture.endpoint.requests;
    fixture.endpoint.reset();
    await r.boundary.endRun(run.runId);
    const laterEnd = fixture.endpoint.requests;
    fixture.endpoint.reset();
    await r.boundary.exportRun(run.runId);
    counts.push({ perInvoke, firstEnd, laterEnd, exported: fixture.endpoint.requests });
  }
  fixture.endpoint.setDelay(0);
  console.log(
    `\nB. UpstashStore, a ${DELAY_MS} ms round trip (a PING pays ${
      trip.added.toFixed(3)
    } ms more than at 0 ms; endpoint hold ${trip.hold.toFixed(3)} ms), ${N_REMOTE} invokes ` +
      "per row, ms\n",
  );
  console.log(
    "| row | p50 | p99 | requests/invoke | endRun first | endRun again | exportRun (10 calls) |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  remote.forEach((r, i) => {
    const c = counts[i]!;
    console.log(
      `| ${r.name} | ${p(r.samples, 50).toFixed(2)} | ${
        p(r.samples, 99).toFixed(2)
      } | ${c.perInvoke} | ${c.firstEnd} | ${c.laterEnd} | ${c.exported} |`,
    );
  });
  const remoteRatio = p(remote[1]!.samples, 50) / p(remote[0]!.samples, 50);
  console.log(`\nsigned/unsigned at p50 = ${remoteRatio.toFixed(3)}x (target <= 1.05x)`);
  if (!SMOKE) {
    if (counts[1]!.perInvoke !== counts[0]!.perInvoke) {
      throw new Error("requests per invoke changed");
    }
    if (counts[1]!.firstEnd > counts[0]!.firstEnd + 1) {
      throw new Error("endRun: more than one more request");
    }
  }
} finally {
  await fixture.stop();
}

// C. The timestamp: one TSA request per seal, none per call.
const tsa = await startTsa("bench");
try {
  const SEALS = SMOKE ? 3 : 20;
  const CALLS_PER_RUN = 10;
  const ends = async (timestamp: boolean) => {
    const boundary = new ToolBoundary({
      store: new MemoryStore(),
      tools: [tool],
      ledgerKey: keys.privateKey,
      ...(timestamp ? { timestamp: rfc3161(tsa.url) } : {}),
    });
    const samples: number[] = [];
    let perCall = 0, perSeal = 0;
    for (let s = 0; s < SEALS; s++) {
      const run = await boundary.startRun();
      const before = tsa.requests;
      for (let i = 0; i < CALLS_PER_RUN; i++) {
        await boundary.invoke(run, {
          toolCallId: `c${i}`,
          runId: run.runId,
          toolName: tool.name,
          input: {},
        });
      }
      perCall += tsa.requests - before;
      const started = performance.now();
      await boundary.endRun(run);
      samples.push(performance.now() - started);
      perSeal += tsa.requests - before;
      await boundary.endRun(run); // a later end reads the seal: no request
    }
    return { samples, perCall: perCall / (SEALS * CALLS_PER_RUN), perSeal: perSeal / SEALS };
  };
  const plain = await ends(false);
  const stamped = await ends(true);
  console.log(
    `\nC. endRun with a TSA on loopback (openssl ts), ${SEALS} seals of ${CALLS_PER_RUN} calls\n`,
  );
  console.log("| row | endRun p50 ms | TSA requests per call | TSA requests per seal |");
  console.log("| --- | --- | --- | --- |");
  console.log(`| ledgerKey | ${p(plain.samples, 50).toFixed(2)} | 0 | 0 |`);
  console.log(
    `| ledgerKey + timestamp | ${
      p(stamped.samples, 50).toFixed(2)
    } | ${stamped.perCall} | ${stamped.perSeal} |`,
  );
  if (stamped.perCall !== 0 || stamped.perSeal !== 1) {
    throw new Error("the TSA must be asked once per seal and never per call");
  }
} finally {
  await tsa.stop();
}
