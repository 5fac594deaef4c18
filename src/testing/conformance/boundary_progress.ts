/**
 * Through the boundary: at the end of a run only its READY records become bounded facts, in
 * execution order, resolved from the records themselves.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import type { ErrorCode } from "../../core/errors.ts";
import type { BoundaryContext, Suite } from "./context.ts";
import {
  assertError,
  assertRowOfRecord,
  assertSafe,
  endRunIndex,
  readRows,
  seedIdentities,
} from "./helpers.ts";

/** Registers the run progress cases that go through a `ToolBoundary`. */
export function boundaryProgressCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "the fake tools give every outcome, and only the READY calls become facts",
    async (ctx) => {
      const { names } = ctx.kit;
      const run = await ctx.run({ calls: 20, perTool: { [names.success]: 2 } });
      const expect: [string, string, "READY" | ErrorCode][] = [
        ["call_f1", names.success, "READY"],
        ["call_f2", names.noEvidence, "READY"],
        ["call_f3", names.throwing, "EXECUTION_FAILED"],
        ["call_f1", names.success, "DUPLICATE_TOOL_CALL"],
        ["call_f1", names.noEvidence, "TOOL_CALL_CONFLICT"],
        ["call_f4", names.oversized, "RESULT_TOO_LARGE"],
        ["call_f5", names.oversizedProjection, "RESULT_TOO_LARGE"],
        ["call_f6", names.invalidEvidence, "INVALID_PROJECTION"],
        ["call_f7", names.success, "READY"],
        ["call_f8", names.success, "TOOL_BUDGET_EXHAUSTED"],
      ];
      for (const [id, tool, outcome] of expect) {
        const result = await ctx.call(run, id, tool);
        if (outcome === "READY") assert.equal(result.status, "READY", id);
        else assertError(result, outcome, id);
      }
      const facts = await ctx.boundary.endRun(run);
      assert.deepEqual(facts.map((f) => [f.toolCallId, f.kind]), [
        ["call_f1", "EVIDENCE"],
        ["call_f2", "NEGATIVE_OBSERVATION"],
        ["call_f7", "EVIDENCE"],
      ]);
    },
  );

  suite.test(
    "the progress index holds identities only, and a fact row is the record's own agent result without raw data",
    async (ctx) => {
      const run = await ctx.run();
      await ctx.call(run, "call_p1", ctx.kit.names.success);
      await ctx.call(run, "call_p2", ctx.kit.names.throwing);
      const { toolCallIds } = await endRunIndex(ctx, run.runId);
      assert.deepEqual(toolCallIds, ["call_p1", "call_p2"], "the index holds identities only");
      const rows = await readRows(ctx, run.runId, toolCallIds);
      assert.deepEqual(rows.map((row) => row.toolCallId), ["call_p1"]);
      await assertRowOfRecord(ctx, rows[0]!);
    },
  );

  suite.test(
    "endRun() gives facts in execution order, the same facts again when repeated, capped by factCount and factBytes",
    async (ctx) => {
      const run = await ctx.run();
      const order = ["call_c3", "call_c1", "call_c2", "call_c4"];
      for (const [i, id] of order.entries()) {
        await ctx.call(run, id, i % 2 === 0 ? ctx.kit.names.success : ctx.kit.names.noEvidence, {
          query: `q${i}`,
        });
      }
      const report = await ctx.boundary.endRunReport(run);
      assert.deepEqual(report.facts.map((f) => f.toolCallId), order, "in execution order");
      assert.equal(report.omitted, 0);
      assert.deepEqual(report.facts.map((f) => f.kind), [
        "EVIDENCE",
        "NEGATIVE_OBSERVATION",
        "EVIDENCE",
        "NEGATIVE_OBSERVATION",
      ]);
      assert.equal(report.facts[1]?.scope, 'fake index, query "q1"');
      assertSafe(report);
      // Ending again returns the same facts.
      assert.deepEqual((await ctx.boundary.endRunReport(run)).facts, report.facts);
      // Caps: count and bytes.
      const capped = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        limits: { factCount: 2 },
      });
      const countCapped = await capped.endRunReport(run);
      assert.deepEqual(countCapped.facts.map((f) => f.toolCallId), order.slice(0, 2));
      assert.equal(countCapped.omitted, 2);
      const rowBytes = new TextEncoder().encode(
        JSON.stringify({
          evidence: "EVIDENCE_FOUND",
          scope: 'fake index, query "q0"',
          content: ["line 1: match", "line 2: match"],
        }),
      ).length;
      const byteCapped = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        limits: { factBytes: rowBytes },
      });
      const bytesReport = await byteCapped.endRunReport(run);
      assert.deepEqual(bytesReport.facts.map((f) => f.toolCallId), ["call_c3"]);
      assert.equal(bytesReport.omitted, 3);
    },
  );

  suite.test(
    "endRun() makes facts of the run's READY records only: expired, PROJECTING and ERROR records are left out",
    async (ctx) => {
      const { runId } = await seedIdentities(ctx);
      const ended = await new ToolBoundary({ store: ctx.store, tools: [], clock: ctx.clock })
        .endRunReport(runId);
      assert.deepEqual(ended.facts.map((f) => f.toolCallId), ["call_ready"]);
      assert.equal(ended.facts[0]?.kind, "EVIDENCE");
      assert.equal(ended.omitted, 0);
    },
  );
}
