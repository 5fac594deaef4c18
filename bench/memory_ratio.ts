/**
 * Figure 3 as one ratio: batches of 100 direct calls (JSON.parse + tool + projector +
 * 3x JSON.stringify, as in `memory_bench.ts`) and batches of 100 `ToolBoundary.invoke` on a
 * MemoryStore, alternating in one process, 1 KiB raw. The figure is the median of the per-call
 * batch means of each row, and their ratio: on a shared machine another process moves one batch,
 * not the median.
 *
 * Each row pays for its own garbage, and only for its own: a young-generation collection is
 * forced after every batch, timed, and charged to the row that made the garbage (its GC column),
 * then another, untimed, after the next batch's setup, so that every batch starts on an empty
 * young generation and no batch pays for another row's garbage. (Before, a scavenge ran in
 * whichever batch filled the young generation, so a row could pay for another's garbage, and the
 * median of batch means left most GC out altogether.) A full collection still falls inside one
 * batch now and then, which the median leaves out; forcing one every 10 rounds was tried and not
 * kept: the invoke batches took about twice as long in those runs. This needs `gc()`:
 * `--v8-flags=--expose-gc`, which the tasks pass.
 *
 * With `BENCH_BEFORE=<path of another checkout>`, a third row runs the same invokes on that
 * checkout's `src/` (its own `ToolBoundary` and `MemoryStore`), interleaved with the other two:
 * before and after, side by side.
 *
 * With `BENCH_PLAIN=1`, one more row per speed trick of `src/` runs the same invokes on a copy of
 * `src/` where that trick alone is replaced by its plain twin (see `_plain_twins.ts`), beside a row
 * on an unchanged copy: what each trick buys on an invoke is that row over the unchanged copy's.
 *
 * Run: `deno task bench:memory` (`BENCH_ROUNDS=<batches per row>`, default 1500, after 100
 * warm-up batches: about 8 s). With 300 batches the median moved by up to 0.4x between runs on
 * the shared machine; with 1500 it stays within a few hundredths.
 *
 * @module
 */
import * as current from "../src/mod.ts";
import { MemoryStore } from "../src/memory/mod.ts";
import { plainTrees } from "./_plain_twins.ts";
import {
  directCalls,
  FIGURE3_INPUT,
  type LogRaw,
  logRaw,
  printTable,
  projectLogs,
  SMOKE,
} from "./_common.ts";

const ROUNDS = SMOKE ? 3 : Number(Deno.env.get("BENCH_ROUNDS") ?? 1500);
type Gc = (options?: { type: "minor" | "major" }) => void;
const gc = (globalThis as { gc?: Gc }).gc;
if (gc === undefined) {
  throw new Error(
    "bench:memory charges each row its own GC and needs gc(): run it with " +
      "--v8-flags=--expose-gc (deno task bench:memory does)",
  );
}
const WARMUP = SMOKE ? 1 : 100;
const CALLS = 100; // per batch: the default run budget

const raw = logRaw(1024);
let sink = 0;

interface Tree {
  defineTool: typeof current.defineTool;
  ToolBoundary: typeof current.ToolBoundary;
  MemoryStore: typeof MemoryStore;
}

/** The log tool of every row, made by the tree's own `defineTool`. */
const logTool = (defineTool: Tree["defineTool"]) =>
  defineTool({
    name: "search_logs",
    readOnly: true,
    execute: () => raw,
    project: (r: LogRaw) => projectLogs(r),
  });

const tool = logTool(current.defineTool);

interface Row {
  name: string;
  /** Runs one timed batch; `prepare` (if any) runs untimed after it. */
  batch: () => Promise<void>;
  prepare?: () => Promise<void>;
  means: number[];
  /** The forced young-generation collection after each batch, us per call of the batch. */
  gcMeans: number[];
}

const rows: Row[] = [{
  name: "direct: JSON.parse + tool + projector + 3x JSON.stringify",
  batch: async () => {
    sink += await directCalls(tool, CALLS);
  },
  means: [],
  gcMeans: [],
}];

/** A tree's invoke row: the batch runs the invokes, prepare starts the next batch's run. */
async function treeRow(name: string, tree: Tree): Promise<Row> {
  const tool = logTool(tree.defineTool);
  let boundary = new tree.ToolBoundary({ store: new tree.MemoryStore(), tools: [tool] });
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
          toolName: "search_logs",
          input: FIGURE3_INPUT,
        });
        if (answer.status !== "READY") throw new Error(`invoke failed: ${JSON.stringify(answer)}`);
      }
    },
    prepare: async () => {
      if (++batches % 10 === 0) {
        boundary = new tree.ToolBoundary({ store: new tree.MemoryStore(), tools: [tool] });
      }
      run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: CALLS } });
    },
    means: [],
    gcMeans: [],
  };
}

/** The invoke row of a tree loaded from a `src/` folder elsewhere. */
async function treeAt(name: string, src: URL): Promise<Row> {
  const mod = await import(new URL("mod.ts", src).href);
  const memory = await import(new URL("memory/mod.ts", src).href);
  return await treeRow(name, {
    defineTool: mod.defineTool,
    ToolBoundary: mod.ToolBoundary,
    MemoryStore: memory.MemoryStore,
  });
}

rows.push(await treeRow("ToolBoundary.invoke on MemoryStore", { ...current, MemoryStore }));
const before = Deno.env.get("BENCH_BEFORE");
if (before !== undefined) {
  const base = new URL(`file://${before.replace(/\/?$/, "/")}`);
  rows.push(
    await treeAt(`ToolBoundary.invoke on MemoryStore, before (${before})`, new URL("src/", base)),
  );
}
const plainFrom = rows.length;
if (Deno.env.get("BENCH_PLAIN") === "1") {
  const { trees, remove } = await plainTrees();
  try {
    // Loaded in a random order, listed in their own: which tree loads first is no figure.
    const loaded = new Map<string, Row>();
    for (const tree of [...trees].sort(() => Math.random() - 0.5)) {
      loaded.set(tree.name, await treeAt(`copy of src/: ${tree.name}`, tree.src));
    }
    for (const tree of trees) rows.push(loaded.get(tree.name)!);
  } finally {
    await remove(); // every module is loaded by now
  }
}

gc();
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  for (let k = 0; k < rows.length; k++) {
    const row = rows[(k + round) % rows.length]!; // each row first in turn
    const started = performance.now();
    await row.batch();
    const elapsed = performance.now() - started;
    // This batch's garbage, collected now and charged to this row.
    const collecting = performance.now();
    gc({ type: "minor" });
    const collected = performance.now() - collecting;
    if (round >= WARMUP) {
      row.means.push((elapsed * 1000) / CALLS);
      row.gcMeans.push((collected * 1000) / CALLS);
    }
    await row.prepare?.();
    gc({ type: "minor" }); // the setup's garbage: the next batch starts clean
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const direct = median(rows[0]!.means);
const directGc = median(rows[0]!.gcMeans);
console.log(
  `\n${ROUNDS} batches of ${CALLS} calls per row (after ${WARMUP} warm-up batches), rows ` +
    "alternating, 1 KiB raw; median of the per-call batch means. GC: a young-generation " +
    "collection forced after each batch, charged to that row.\n",
);
printTable(
  ["row", "us per call", "its GC, us per call", "with its GC", "/ direct", "with GC / direct"],
  rows.map((row) => {
    const m = median(row.means);
    const g = median(row.gcMeans);
    return [
      row.name,
      m.toFixed(2),
      g.toFixed(2),
      (m + g).toFixed(2),
      `${(m / direct).toFixed(2)}x`,
      `${((m + g) / (direct + directGc)).toFixed(2)}x`,
    ];
  }),
);
const invoke = median(rows[1]!.means);
const invokeGc = median(rows[1]!.gcMeans);
console.log(
  `\ninvoke / direct = ${(invoke / direct).toFixed(2)}x without GC, ${
    ((invoke + invokeGc) / (direct + directGc)).toFixed(2)
  }x each with its own GC (figure 3 target <= 3.5x at 1 KiB)`,
);
if (before !== undefined) {
  const was = median(rows[2]!.means);
  const wasGc = median(rows[2]!.gcMeans);
  console.log(
    `after / before = ${(invoke / was).toFixed(3)} without GC, ${
      ((invoke + invokeGc) / (was + wasGc)).toFixed(3)
    } each with its own GC`,
  );
}
if (rows.length > plainFrom) {
  const withGc = (row: Row) => median(row.means) + median(row.gcMeans);
  const asIs = median(rows[plainFrom]!.means);
  const asIsGc = withGc(rows[plainFrom]!);
  console.log("\nWhat each trick buys on an invoke: the plain copy over the unchanged copy.\n");
  printTable(
    [
      "trick -> plain twin",
      "plain / as is",
      "trick saves, of the plain invoke",
      "with each its GC: plain / as is",
      "saves",
    ],
    rows.slice(plainFrom + 1).map((row) => {
      const plain = median(row.means);
      const plainGc = withGc(row);
      return [
        row.name.replace("copy of src/: ", ""),
        `${(plain / asIs).toFixed(3)}x`,
        `${((1 - asIs / plain) * 100).toFixed(1)}%`,
        `${(plainGc / asIsGc).toFixed(3)}x`,
        `${((1 - asIsGc / plainGc) * 100).toFixed(1)}%`,
      ];
    }),
  );
}
if (sink === -1) console.log(sink);
