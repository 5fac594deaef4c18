/**
 * Through the boundary: byte limits in UTF-8 fail closed, at the input, the raw response and the
 * agent result; nothing is ever truncated.
 *
 * @module
 */
import assert from "node:assert/strict";
import { BOUNDARY_RECORD_TTL_MS, type BoundaryContext, type Suite } from "./context.ts";
import { assertAbsent, assertError, assertSafe, wideRawBoundary } from "./helpers.ts";

/** Registers the limit cases that go through a `ToolBoundary`. */
export function boundaryLimitCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "input over requestBytes in UTF-8 is refused with no record, while the same length in ASCII runs with a TTL fixed at creation",
    async (ctx) => {
      const run = await ctx.run();
      // 400 three-byte characters: 400 UTF-16 units but 1,200+ bytes, over the 1,024-byte limit.
      const wide = await ctx.call(run, "call_wide", ctx.kit.names.success, { q: "日".repeat(400) });
      assertError(wide, "REQUEST_TOO_LARGE");
      await assertAbsent(ctx, run.runId, "call_wide");
      const narrow = await ctx.call(run, "call_narrow", ctx.kit.names.noEvidence, {
        q: "a".repeat(400),
      });
      assert.equal(narrow.status, "READY", "the same length in ASCII fits");
      // The record TTL is fixed at creation.
      const stored = await ctx.store.get(run.runId, "call_narrow");
      assert.ok(stored);
      assert.equal(stored.expiresAt - stored.createdAt, BOUNDARY_RECORD_TTL_MS);
    },
  );

  suite.test(
    "a raw response over the limit in UTF-8 bytes gives RESULT_TOO_LARGE, stores no raw, and the projector never runs",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_huge", ctx.kit.names.oversized, { bytes: 200_000 });
      assertError(result, "RESULT_TOO_LARGE");
      assertSafe(result);
      assert.equal(
        ctx.kit.counts.project[ctx.kit.names.oversized] ?? 0,
        0,
        "projector not invoked",
      );
      const stored = await ctx.store.get(run.runId, "call_huge");
      assert.equal(stored?.status, "ERROR");
      assert.equal(stored?.errorCode, "RESULT_TOO_LARGE");
      assert.equal(stored?.rawJson, null, "the raw payload is not stored truncated");
      // Just over the raw limit in UTF-8 bytes but not in UTF-16 units is refused too.
      const wide = wideRawBoundary(ctx);
      const wideResult = await wide.boundary.invoke(run, {
        toolCallId: "call_wide_raw",
        runId: run.runId,
        toolName: "wide_raw",
        input: {},
      });
      assertError(wideResult, "RESULT_TOO_LARGE");
      assert.equal(wide.projected(), 0);
      assert.equal((await ctx.store.get(run.runId, "call_wide_raw"))?.rawJson, null);
    },
  );

  suite.test(
    "an agent result over agentResultBytes gives RESULT_TOO_LARGE and is not returned, while the raw response stays in the record",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_big_view", ctx.kit.names.oversizedProjection, {
        bytes: 4096,
      });
      assertError(result, "RESULT_TOO_LARGE");
      assert.ok(JSON.stringify(result).length < 400, "the oversized result is not returned");
      const stored = await ctx.store.get(run.runId, "call_big_view");
      assert.equal(stored?.status, "ERROR");
      assert.equal(stored?.errorCode, "RESULT_TOO_LARGE");
      assert.equal(stored?.agentResultJson, null);
      assert.ok(stored?.rawJson, "the raw response, within limits, stays in the record");
      const fits = await ctx.call(run, "call_small_view", ctx.kit.names.oversizedProjection, {
        bytes: 1500,
      });
      assert.equal(fits.status, "READY", "a projection within the limit passes");
    },
  );
}
