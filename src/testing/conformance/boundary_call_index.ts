/**
 * Through the boundary, on a store with `CallIndex`: `recall` (the recorded result of one call,
 * by run context or reference, never executed) and `listCalls`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import { BoundaryError } from "../../core/errors.ts";
import { type BoundaryContext, capabilitySuite, type Suite, uniqueId } from "./context.ts";
import { assertError, executed, executedInAll } from "./helpers.ts";
import { heldCall } from "./boundary_cost.ts";

/** Registers the boundary's `CallIndex` cases. */
export function boundaryCallIndexCases(boundarySuite: Suite<BoundaryContext>): void {
  const suite = capabilitySuite(boundarySuite, "CallIndex");

  suite.test(
    "recall() of a costed call caught mid-way is OUTCOME_UNKNOWN, and its reservation stays held",
    async (ctx) => {
      const held = await heldCall(ctx);
      const recalled = await held.second.recall({ runId: held.runId }, held.envelope("call_held"));
      assertError(recalled, "OUTCOME_UNKNOWN");
      assert.deepEqual((await ctx.store.getRun(held.runId))?.cost, { reserved: 30, spent: 0 });
      held.release();
      assert.equal((await held.pending).status, "READY");
    },
  );

  suite.test(
    "recall() after the run ended gives the recorded result, replayed: true; another request, a key never begun and an absent run are refused",
    async (ctx) => {
      const run = await ctx.run();
      const envelope = {
        toolCallId: "call_1",
        runId: run.runId,
        toolName: ctx.kit.names.noEvidence,
        input: { query: "cpu" },
      };
      const first = await ctx.boundary.invoke(run, envelope);
      await ctx.boundary.endRun(run);
      assert.deepEqual(await ctx.boundary.recall(run, envelope), { ...first, replayed: true });
      const other = { ...envelope, input: { query: "disk" } };
      assertError(await ctx.boundary.recall(run, other), "TOOL_CALL_CONFLICT");
      const never = { ...envelope, toolCallId: "call_2" };
      assertError(await ctx.boundary.recall(run, never), "RECORD_NOT_FOUND");
      const gone = { ...run, runId: `${run.runId}-gone` };
      assertError(
        await ctx.boundary.recall(gone, { ...envelope, runId: gone.runId }),
        "RUN_NOT_FOUND",
      );
      assert.equal(executedInAll(ctx), 1);
    },
  );

  suite.test(
    "listCalls() lists begun calls in begin order with their status; refusals are not listed",
    async (ctx) => {
      const run = await ctx.run();
      await ctx.call(run, "call_b", ctx.kit.names.success);
      await ctx.call(run, "call_a", ctx.kit.names.throwing);
      await ctx.call(run, "call_b", ctx.kit.names.success); // duplicate: refused
      await ctx.call(run, "call_c", ctx.kit.names.writable); // NOT_READ_ONLY: refused
      const calls = await ctx.boundary.listCalls(run.runId);
      assert.deepEqual(
        calls.map((call) => [call.toolCallId, call.status, call.evidence, call.errorCode]),
        [["call_b", "READY", "EVIDENCE_FOUND", null], [
          "call_a",
          "ERROR",
          "ERROR",
          "EXECUTION_FAILED",
        ]],
      );
      await assert.rejects(
        ctx.boundary.listCalls(`${run.runId}-absent`),
        (error) => error instanceof BoundaryError && error.code === "RUN_NOT_FOUND",
      );
    },
  );

  suite.test(
    "recall() of a used key with another tool is TOOL_CALL_CONFLICT, also once the record expired, and RECORD_EXPIRED for its own request then",
    async (ctx) => {
      const { names } = ctx.kit;
      const boundary = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        recordTtlMs: ctx.ttlMs,
      });
      const run = await boundary.startRun({ runId: uniqueId("run") });
      const call = {
        toolCallId: "call_k",
        runId: run.runId,
        toolName: names.success,
        input: { query: "disk" },
      };
      assert.equal((await boundary.invoke(run, call)).status, "READY");
      const otherTool = { ...call, toolName: names.noEvidence };
      assertError(await boundary.recall(run, otherTool), "TOOL_CALL_CONFLICT");
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      assert.equal(await ctx.store.get(run.runId, "call_k"), null, "the record expired");
      // The key stays begun with its request's digest, which names its tool.
      assertError(await boundary.recall(run, otherTool), "TOOL_CALL_CONFLICT");
      assertError(await boundary.recall(run, call), "RECORD_EXPIRED");
      assert.equal(executed(ctx, names.success), 1);
      assert.equal(executed(ctx, names.noEvidence), 0, "the other tool never ran");
    },
  );

  suite.test(
    "recall() takes a run reference; for another instance of the run ID it is RUN_NOT_FOUND",
    async (ctx) => {
      const other = new ToolBoundary({ store: ctx.store, clock: ctx.clock, tools: ctx.kit.tools });
      const run = await ctx.run();
      const { runId, startedAt } = run;
      const envelope = {
        toolCallId: "call_by_id",
        runId,
        toolName: ctx.kit.names.success,
        input: { query: "disk" },
      };
      const first = await ctx.boundary.invoke(run, envelope);
      assert.equal(first.status, "READY");
      // A boundary that never saw the run: by reference it reads the one call.
      assert.deepEqual(await other.recall({ runId }, envelope), { ...first, replayed: true });
      assert.deepEqual(await other.recall({ runId, startedAt }, envelope), {
        ...first,
        replayed: true,
      });
      assertError(
        await other.recall({ ...run, startedAt: startedAt - 1 }, envelope),
        "RUN_NOT_FOUND",
      );
      assertError(
        await other.recall({ runId, startedAt: startedAt + 1 }, envelope),
        "RUN_NOT_FOUND",
      );
      assert.equal(executedInAll(ctx), 1);
    },
  );
}
