/**
 * Through the boundary: replaying a used key (`onDuplicate: "replay"`) and `checkCitations`,
 * which answer from what the store keeps and never run a tool. `recall` and `listCalls` need
 * the store's `CallIndex` (`boundary_call_index.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import { type BoundaryContext, type Suite, SUITE_LIMITS } from "./context.ts";
import { assertError, assertSafe, executedInAll } from "./helpers.ts";

/** A boundary on the case's store and tools that replays duplicates. */
function replaying(ctx: BoundaryContext): ToolBoundary {
  return new ToolBoundary({
    store: ctx.store,
    tools: ctx.kit.tools,
    limits: SUITE_LIMITS,
    clock: ctx.clock,
    onDuplicate: "replay",
  });
}

/** Registers the resume and audit cases. */
export function boundaryResumeCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "replay: a used key with the same request gets its READY or ERROR result again, replayed: true, with no execution and no budget",
    async (ctx) => {
      const boundary = replaying(ctx);
      const run = await ctx.run({ calls: 2 });
      const call = (toolCallId: string, toolName: string, input: unknown) =>
        boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
      const ready = await call("call_r", ctx.kit.names.success, '{"query":"disk","n":1}');
      const failed = await call("call_e", ctx.kit.names.throwing, {});
      assert.equal(ready.status, "READY");
      assertError(failed, "EXECUTION_FAILED");
      assert.deepEqual(await call("call_r", ctx.kit.names.success, { n: 1, query: "disk" }), {
        ...ready,
        replayed: true,
      });
      const again = await call("call_e", ctx.kit.names.throwing, {});
      assert.deepEqual(again, { ...failed, replayed: true });
      assertSafe(again);
      assertError(
        await call("call_r", ctx.kit.names.success, { query: "other" }),
        "TOOL_CALL_CONFLICT",
      );
      assert.equal(executedInAll(ctx), 2, "each tool ran once");
      assert.equal((await ctx.store.getRun(run.runId))?.used.calls, 2, "budget of 2 not passed");
    },
  );

  suite.test(
    "checkCitations() tells EVIDENCE, NEGATIVE_OBSERVATION with its scope, and NOT_EVIDENCE, in the order given",
    async (ctx) => {
      const run = await ctx.run();
      const other = await ctx.run();
      await ctx.call(run, "call_e", ctx.kit.names.success);
      await ctx.call(run, "call_n", ctx.kit.names.noEvidence);
      await ctx.call(run, "call_x", ctx.kit.names.throwing);
      await ctx.call(other, "call_o", ctx.kit.names.success);
      const negative = await ctx.store.get(run.runId, "call_n");
      const scope = JSON.parse(negative!.agentResultJson!).scope;
      const ids = ["call_x", "call_n", "call_o", "call_e", "call_none", "not safe"];
      assert.deepEqual(await ctx.boundary.checkCitations(run, ids), [
        { toolCallId: "call_x", verdict: "NOT_EVIDENCE" },
        { toolCallId: "call_n", verdict: "NEGATIVE_OBSERVATION", scope },
        { toolCallId: "call_o", verdict: "NOT_EVIDENCE" },
        { toolCallId: "call_e", verdict: "EVIDENCE" },
        { toolCallId: "call_none", verdict: "NOT_EVIDENCE" },
        { toolCallId: "not safe", verdict: "NOT_EVIDENCE" },
      ]);
    },
  );
}
