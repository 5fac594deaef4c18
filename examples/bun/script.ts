/**
 * A Bun script that runs tool calls through the boundary in process, no server: one run, a call
 * with evidence, one without, a duplicate, the record, the facts. Prints one JSON line per step.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool, ToolBoundary } from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";

const INVENTORY: Record<string, number> = { "sku-1001": 12, "sku-2002": 0 };

const stockLevel = defineTool({
  name: "stock_level",
  readOnly: true,
  input: v.object({ sku: v.string() }),
  execute: ({ sku }) => ({
    sku,
    units: INVENTORY[sku] ?? null,
    warehouse: "internal-db-7",
  }),
  project: (raw) => ({
    evidence: raw.units === null ? "NO_EVIDENCE" : "EVIDENCE_FOUND",
    scope: `inventory of ${raw.sku}`,
    content: raw.units,
  }),
});

const boundary = new ToolBoundary({
  store: new MemoryStore(),
  tools: [stockLevel],
});
const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5 } });
const call = (toolCallId: string, sku: string) =>
  boundary.invoke(run, {
    toolCallId,
    runId: run.runId,
    toolName: "stock_level",
    input: { sku },
  });

const print = (step: string, value: unknown) => console.log(JSON.stringify({ step, value }));
print("found", await call("call_1", "sku-1001"));
print("missing", await call("call_2", "sku-9999"));
print("duplicate", await call("call_1", "sku-1001"));
print("record", (await boundary.inspect(run.runId, "call_1"))?.raw);
print("facts", await boundary.endRun(run));
