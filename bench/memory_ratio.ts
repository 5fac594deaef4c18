/**
 * Figure 3 as one ratio: batches of 100 direct calls (JSON.parse + tool + projector +
 * 3x JSON.stringify, as in `memory_bench.ts`) and batches of 100 `ToolBoundary.invoke` on a
 * MemoryStore, alternating in one process, 1 KiB raw. The figure is the median of the per-call
 * batch means of each row, and their ratio: on a shared machine a GC pause or another process
 * moves one batch, not the median.
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
 * warm-up batches: about 6 s). With 300 batches the median moved by up to 0.4x between runs on
 * the shared machine; with 1500 it stays within a few hundredths.
 *
 * @module
 */
import * as current from "../src/mod.ts";
import { MemoryStore } from "../src/stores/memory.ts";
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
}

const rows: Row[] = [{
  name: "direct: JSON.parse + tool + projector + 3x JSON.stringify",
  batch: async () => {
    sink += await directCalls(tool, CALLS);
  },
  means: [],
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
  };
}

/** The invoke row of a tree loaded from a `src/` folder elsewhere. */
async function treeAt(name: string, src: URL): Promise<Row> {
  const mod = await import(new URL("mod.ts", src).href);
  const memory = await import(new URL("stores/memory.ts", src).href);
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

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const direct = median(rows[0]!.means);
console.log(
  `\n${ROUNDS} batches of ${CALLS} calls per row (after ${WARMUP} warm-up batches), rows ` +
    "alternating, 1 KiB raw; median of the per-call batch means.\n",
);
printTable(
  ["row", "us per call", "/ direct"],
  rows.map((row) => {
    const m = median(row.means);
    return [row.name, m.toFixed(2), `${(m / direct).toFixed(2)}x`];
  }),
);
const invoke = median(rows[1]!.means);
console.log(
  `\ninvoke / direct = ${(invoke / direct).toFixed(2)}x (figure 3 target <= 3.5x at 1 KiB)`,
);
if (before !== undefined) {
  console.log(`after / before = ${(invoke / median(rows[2]!.means)).toFixed(3)}`);
}
if (rows.length > plainFrom) {
  const asIs = median(rows[plainFrom]!.means);
  console.log("\nWhat each trick buys on an invoke: the plain copy over the unchanged copy.\n");
  printTable(
    ["trick -> plain twin", "plain / as is", "trick saves, of the plain invoke"],
    rows.slice(plainFrom + 1).map((row) => {
      const plain = median(row.means);
      return [
        row.name.replace("copy of src/: ", ""),
        `${(plain / asIs).toFixed(3)}x`,
        `${((1 - asIs / plain) * 100).toFixed(1)}%`,
      ];
    }),
  );
}
if (sink === -1) console.log(sink);
