/**
 * Figure 3: the boundary on the MemoryStore against calling the tool and the projector
 * directly with the JSON work that must happen anyway (parse the arguments text, serialize the
 * request, the raw response and the agent result). Raw payloads of 1 KiB and 64 KiB.
 *
 * Run: `deno task bench` (or `deno bench --config deno.dev.json -A bench/memory_bench.ts`).
 *
 * The tool returns a prebuilt raw object, so the tool itself costs nothing: the ratio is the
 * boundary's cost over the least a caller must do, the worst case for the boundary.
 *
 * Each iteration is one run of 100 calls (a call's time is the figure / 100), so that a GC pause
 * or a scheduling hiccup of the shared machine moves one sample of 100 calls, not the percentiles:
 * read the p75 column, which stays put from run to run where the mean does not.
 */
import { defineTool, ToolBoundary } from "../src/mod.ts";
import { MemoryStore } from "../src/memory/mod.ts";
import {
  benchOptions,
  directCalls,
  FIGURE3_INPUT,
  type LogRaw,
  logRaw,
  projectLogs,
} from "./_common.ts";

const CALLS_PER_RUN = 100; // the default run budget
const RUNS_PER_STORE = 10;

let sink = 0;

for (const [label, bytes] of [["1 KiB", 1024], ["64 KiB", 65_536]] as const) {
  const raw = logRaw(bytes);
  const tool = defineTool({
    name: "search_logs",
    readOnly: true,
    execute: () => raw,
    project: (r: LogRaw) => projectLogs(r),
  });
  const group = `memory ${label}`;

  Deno.bench({
    ...benchOptions,
    name:
      `direct: JSON.parse + tool + projector + 3x JSON.stringify, ${label} raw, x${CALLS_PER_RUN}`,
    group,
    baseline: true,
    async fn(b) {
      b.start();
      sink += await directCalls(tool, CALLS_PER_RUN);
      b.end();
    },
  });

  let boundary: ToolBoundary | undefined;
  let runs = 0;
  let calls = 0;
  Deno.bench({
    ...benchOptions,
    name: `ToolBoundary.invoke on MemoryStore, ${label} raw, x${CALLS_PER_RUN}`,
    group,
    async fn(b) {
      // A realistic run of 100 calls, a fresh store every 10 runs; set up outside the timing.
      if (runs++ % RUNS_PER_STORE === 0) {
        boundary = new ToolBoundary({ store: new MemoryStore(), tools: [tool] });
      }
      const run = await boundary!.startRun({ ttlMs: 600_000, budget: { calls: CALLS_PER_RUN } });
      b.start();
      for (let i = 0; i < CALLS_PER_RUN; i++) {
        const result = await boundary!.invoke(run, {
          toolCallId: `call_${calls++}`,
          runId: run.runId,
          toolName: "search_logs",
          input: FIGURE3_INPUT,
        });
        if (result.status !== "READY") throw new Error(`invoke failed: ${JSON.stringify(result)}`);
      }
      b.end();
    },
  });
}

globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
