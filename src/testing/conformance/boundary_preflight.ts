/**
 * Through the boundary: preflight refuses a call before its executor runs, and a refused call
 * creates no record.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import type { ErrorCode } from "../../core/errors.ts";
import { CANARY_SECRET } from "../fakes.ts";
import { type BoundaryContext, type Suite, uniqueId } from "./context.ts";
import { assertAbsent, assertError, assertSafe, executed, executedInAll } from "./helpers.ts";

/** Registers the preflight cases that go through a `ToolBoundary`. */
export function boundaryPreflightCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "invoke() refuses unsafe IDs, another run, unknown tools, bad or large input and writable tools before any executor runs, with no record",
    async (ctx) => {
      const { names } = ctx.kit;
      const run = await ctx.run();
      const refusals: [string, string, string, unknown, ErrorCode][] = [
        ["", run.runId, names.success, {}, "INVALID_TOOL_CALL_ID"],
        ["call with space", run.runId, names.success, {}, "INVALID_TOOL_CALL_ID"],
        ["call_x", "other-run", names.success, {}, "RUN_MISMATCH"],
        ["call_unknown", run.runId, "no_such_tool", {}, "UNKNOWN_TOOL"],
        ["call_array", run.runId, names.success, [1, 2], "INVALID_INPUT"],
        ["call_text", run.runId, names.success, "{not json", "INVALID_INPUT"],
        ["call_big", run.runId, names.success, { q: "x".repeat(2000) }, "REQUEST_TOO_LARGE"],
        ["call_write", run.runId, names.writable, {}, "NOT_READ_ONLY"],
      ];
      for (const [toolCallId, runId, toolName, input, code] of refusals) {
        const result = await ctx.boundary.invoke(run, { toolCallId, runId, toolName, input });
        assertError(result, code, toolCallId);
        assertSafe(result);
        if (toolCallId !== "" && toolCallId !== "call with space") {
          await assertAbsent(ctx, run.runId, toolCallId);
        }
      }
      assert.equal(executedInAll(ctx), 0, "no executor may run for a refused call");
      assert.equal((await ctx.store.getRun(run.runId))?.used.calls, 0, "no budget used");
    },
  );

  suite.test(
    "invoke() refuses a used key and a spent tool budget without running the tool or creating a record",
    async (ctx) => {
      const { names } = ctx.kit;
      const run = await ctx.run({ calls: 50, perTool: { [names.noEvidence]: 1 } });
      assert.equal((await ctx.call(run, "call_dup", names.noEvidence)).status, "READY");
      assertError(await ctx.call(run, "call_dup", names.noEvidence), "DUPLICATE_TOOL_CALL");
      assertError(await ctx.call(run, "call_dup", names.success), "TOOL_CALL_CONFLICT");
      assertError(await ctx.call(run, "call_budget", names.noEvidence), "TOOL_BUDGET_EXHAUSTED");
      await assertAbsent(ctx, run.runId, "call_budget");
      assert.equal(executed(ctx, names.success), 0);
      assert.equal(executed(ctx, names.noEvidence), 1);
    },
  );

  suite.test("invoke() refuses a call past the run budget with no record", async (ctx) => {
    const small = await ctx.run({ calls: 1 });
    assert.equal((await ctx.call(small, "call_1", ctx.kit.names.success)).status, "READY");
    assertError(await ctx.call(small, "call_2", ctx.kit.names.success), "RUN_BUDGET_EXHAUSTED");
    await assertAbsent(ctx, small.runId, "call_2");
    assert.equal(executed(ctx, ctx.kit.names.success), 1, "only the call within budget ran");
  });

  suite.test(
    "invoke() refuses an envelope of another run with RUN_MISMATCH: no record in either run, tool not run",
    async (ctx) => {
      const runA = await ctx.run();
      const runB = await ctx.run();
      const result = await ctx.boundary.invoke(runA, {
        toolCallId: "call_cross",
        runId: runB.runId,
        toolName: ctx.kit.names.success,
        input: { query: "disk" },
      });
      assertError(result, "RUN_MISMATCH");
      assertSafe(result);
      await assertAbsent(ctx, runA.runId, "call_cross");
      await assertAbsent(ctx, runB.runId, "call_cross");
      assert.equal(executed(ctx, ctx.kit.names.success), 0);
    },
  );

  suite.test(
    "invoke() refuses a denied or writable tool before execution, without echoing the input",
    async (ctx) => {
      const { names } = ctx.kit;
      const secretInput = { query: `needle ${CANARY_SECRET}` };
      const deniedAll = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        authorize: () => false,
      });
      const run = await deniedAll.startRun({ runId: uniqueId("run"), ttlMs: 60_000 });
      const denied = await deniedAll.invoke(run, {
        toolCallId: "call_denied",
        runId: run.runId,
        toolName: names.success,
        input: secretInput,
      });
      assertError(denied, "UNAUTHORIZED");
      assertSafe(denied);
      const open = await ctx.run();
      const writable = await ctx.call(open, "call_write", names.writable, secretInput);
      assertError(writable, "NOT_READ_ONLY");
      assertSafe(writable);
      await assertAbsent(ctx, run.runId, "call_denied");
      await assertAbsent(ctx, open.runId, "call_write");
      assert.equal(executed(ctx, names.success) + executed(ctx, names.writable), 0);
    },
  );

  suite.test(
    "invoke() refuses only the calls authorize() denies, with no record",
    async (ctx) => {
      const { names } = ctx.kit;
      const guarded = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        authorize: (_run, call) => call.tool.name !== names.success,
      });
      const run = await guarded.startRun({ runId: uniqueId("run"), ttlMs: 60_000 });
      const envelope = { runId: run.runId, input: { query: "disk" } };
      const denied = await guarded.invoke(run, {
        ...envelope,
        toolCallId: "call_denied",
        toolName: names.success,
      });
      assertError(denied, "UNAUTHORIZED");
      await assertAbsent(ctx, run.runId, "call_denied");
      const allowed = await guarded.invoke(run, {
        ...envelope,
        toolCallId: "call_allowed",
        toolName: names.noEvidence,
      });
      assert.equal(allowed.status, "READY");
      assert.equal(executed(ctx, names.success), 0);
      assert.equal(executed(ctx, names.noEvidence), 1);
    },
  );

  suite.test(
    "invoke() refuses calls after the run ended or past its deadline, with no record",
    async (ctx) => {
      const ended = await ctx.run();
      await ctx.boundary.endRun(ended);
      assertError(await ctx.call(ended, "call_late", ctx.kit.names.success), "RUN_INACTIVE");
      const short = await ctx.boundary.startRun({ runId: uniqueId("run"), ttlMs: 50 });
      await ctx.advance(80);
      assertError(await ctx.call(short, "call_after", ctx.kit.names.success), "DEADLINE_EXCEEDED");
      await assertAbsent(ctx, ended.runId, "call_late");
      await assertAbsent(ctx, short.runId, "call_after");
      assert.equal(executed(ctx, ctx.kit.names.success), 0);
    },
  );
}
