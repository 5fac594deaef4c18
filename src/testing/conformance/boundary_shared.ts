/**
 * Through the boundary: boundaries with different tools share one store and its rules; a run
 * started by one is resumed by ID in another.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import type { BoundaryContext, Suite } from "./context.ts";
import { assertError } from "./helpers.ts";

/** Registers the cases of boundaries that share a store. */
export function boundarySharedCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "two boundaries on one store share a run: duplicates, facts and the end bind both",
    async (ctx) => {
      // Two independent boundaries (say, two services with different tools) share the store and
      // its rules without sharing code: one starts the run, the other resumes it by ID.
      const other = new ToolBoundary({
        store: ctx.store,
        clock: ctx.clock,
        tools: [{
          name: "rag_search",
          readOnly: true,
          execute: () => ({ passages: ["p1"] }),
          project: (raw: { passages: string[] }) => ({
            evidence: "EVIDENCE_FOUND",
            scope: "rag index",
            content: raw.passages,
          }),
        }],
      });
      const run = await ctx.run();
      const resumed = await other.getRun(run.runId);
      assert.deepEqual(resumed, run);
      assert.ok(resumed);
      assert.equal((await ctx.call(run, "call_shared", ctx.kit.names.success)).status, "READY");
      const rag = (toolCallId: string) =>
        other.invoke(resumed, { toolCallId, runId: run.runId, toolName: "rag_search", input: {} });
      assertError(
        await rag("call_shared"),
        "TOOL_CALL_CONFLICT",
        "a used key is caught across boundaries",
      );
      assert.equal((await rag("call_rag")).status, "READY");
      const facts = await ctx.boundary.endRun(run);
      assert.deepEqual(facts.map((f) => f.toolCallId), ["call_shared", "call_rag"]);
      assertError(
        await rag("call_after_end"),
        "RUN_INACTIVE",
        "an end seen by one boundary binds the other",
      );
    },
  );
}
