/**
 * Through the boundary: what each outcome of a call records and returns. NO_EVIDENCE stays a
 * scoped READY result; failures become ERROR records and safe codes, never exception text.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import type { ErrorCode } from "../../core/errors.ts";
import type { BoundaryContext, Suite } from "./context.ts";
import { assertError, assertSafe, executed, failingStore } from "./helpers.ts";

/** Registers the outcome cases that go through a `ToolBoundary`. */
export function boundaryOutcomeCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "NO_EVIDENCE is READY with its scope, runs once, and becomes a negative observation",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_none", ctx.kit.names.noEvidence, {
        query: "kernel panic",
      });
      assert.equal(result.status, "READY");
      if (result.status !== "READY") return;
      assert.equal(result.evidence, "NO_EVIDENCE");
      assert.equal(result.scope, 'fake index, query "kernel panic"');
      assert.equal(executed(ctx, ctx.kit.names.noEvidence), 1, "NO_EVIDENCE is never retried");
      const record = await ctx.boundary.inspect(run.runId, "call_none");
      assert.equal(record?.status, "READY");
      assert.equal(record?.evidence, "NO_EVIDENCE");
      assert.equal(record?.agentResult?.scope, 'fake index, query "kernel panic"');
      const facts = await ctx.boundary.endRun(run);
      assert.equal(facts.length, 1);
      assert.equal(facts[0]?.kind, "NEGATIVE_OBSERVATION");
      assert.equal(facts[0]?.evidence, "NO_EVIDENCE");
      assert.equal(facts[0]?.scope, 'fake index, query "kernel panic"');
    },
  );

  suite.test(
    "a projector that throws or claims evidence ERROR leaves an ERROR record with raw kept and returns no agent result",
    async (ctx) => {
      const run = await ctx.run();
      const { names } = ctx.kit;
      const cases: [string, string, ErrorCode][] = [
        ["call_throw", names.secretError, "PROJECTION_FAILED"],
        ["call_invalid", names.invalidEvidence, "INVALID_PROJECTION"],
      ];
      for (const [id, tool, code] of cases) {
        const result = await ctx.call(run, id, tool);
        assertError(result, code);
        assertSafe(result);
        assert.equal(Object.hasOwn(result, "content"), false, "no agent result is returned");
        const stored = await ctx.store.get(run.runId, id);
        assert.equal(stored?.status, "ERROR");
        assert.equal(stored?.evidence, "ERROR");
        assert.equal(stored?.errorCode, code);
        assert.equal(stored?.agentResultJson, null);
        assert.ok(
          stored?.rawJson?.includes("hits"),
          "valid raw data stays harness-only in the record",
        );
      }
      assert.deepEqual(await ctx.boundary.endRun(run), []);
    },
  );

  suite.test(
    "a tool that throws leaves an ERROR record with EXECUTION_FAILED and no raw, and its projector never runs",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_throws", ctx.kit.names.throwing);
      assertError(result, "EXECUTION_FAILED");
      assertSafe(result);
      const stored = await ctx.store.get(run.runId, "call_throws");
      assert.equal(stored?.status, "ERROR");
      assert.equal(stored?.errorCode, "EXECUTION_FAILED");
      assert.equal(stored?.evidence, "ERROR");
      assert.equal(stored?.rawJson, null);
      assert.equal(ctx.kit.counts.project[ctx.kit.names.throwing] ?? 0, 0);
    },
  );

  suite.test(
    "each tool failure returns only its code and fixed message, and the record keeps the same code",
    async (ctx) => {
      const run = await ctx.run();
      const { names } = ctx.kit;
      const outcomes: [string, string, ErrorCode][] = [
        ["call_e1", names.throwing, "EXECUTION_FAILED"],
        ["call_e2", names.secretError, "PROJECTION_FAILED"],
        ["call_e3", names.notJson, "SERIALIZATION_FAILED"],
        ["call_e4", names.oversized, "RESULT_TOO_LARGE"],
        ["call_e5", names.slow, "TOOL_TIMEOUT"],
      ];
      for (const [id, tool, code] of outcomes) {
        const result = await ctx.call(run, id, tool, { query: "q", bytes: 100_000 });
        assertError(result, code, id);
        assertSafe(result);
        assert.deepEqual(Object.keys(result).sort(), ["code", "message", "status", "toolCallId"]);
        assert.equal((await ctx.store.get(run.runId, id))?.errorCode, code);
      }
    },
  );

  suite.test(
    "a store that fails at begin or complete gives STORE_UNAVAILABLE without its error text, and nothing runs when begin fails",
    async (ctx) => {
      const run = await ctx.run();
      const { names } = ctx.kit;
      const broken = new ToolBoundary({
        store: failingStore(ctx.store, new Set(["begin"])),
        tools: ctx.kit.tools,
        clock: ctx.clock,
      });
      const down = await broken.invoke(run, {
        toolCallId: "call_down",
        runId: run.runId,
        toolName: names.success,
        input: {},
      });
      assertError(down, "STORE_UNAVAILABLE");
      assertSafe(down);
      assert.ok(!JSON.stringify(down).includes("redis://"), "no store detail");
      assert.equal(executed(ctx, names.success), 0, "nothing runs when begin fails");
      const lost = new ToolBoundary({
        store: failingStore(ctx.store, new Set(["complete"])),
        tools: ctx.kit.tools,
        clock: ctx.clock,
      });
      const unrecorded = await lost.invoke(run, {
        toolCallId: "call_unrecorded",
        runId: run.runId,
        toolName: names.success,
        input: {},
      });
      assertError(unrecorded, "STORE_UNAVAILABLE");
      assertSafe(unrecorded);
      assert.ok(!JSON.stringify(unrecorded).includes("redis://"), "no store detail");
    },
  );
}
