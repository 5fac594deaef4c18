/**
 * `Store` contract: a record's TTL is set once at begin; reads never renew it, complete keeps
 * what is left of it, and a key outlives its record.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { StoreContext, Suite } from "./context.ts";
import {
  assertAbsent,
  beginAndComplete,
  beginRequest,
  endRunIndex,
  READY,
  storeRun,
} from "./helpers.ts";

/** Registers the TTL cases of the `Store` contract. */
export function storeTtlCases(suite: Suite<StoreContext>): void {
  suite.test(
    "get() never renews a record's TTL: the record expires at its original time",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      await beginAndComplete(ctx, runId, "call_ttl", READY, ctx.ttlMs);
      const first = await ctx.store.get(runId, "call_ttl");
      assert.ok(first);
      // Three reads within the first half of the TTL: a store on real time keeps half the TTL as
      // slack for slow reads before the record's original expiry, which the last wait passes.
      for (let i = 0; i < 3; i++) {
        await ctx.advance(Math.floor(ctx.ttlMs * 0.15));
        const again = await ctx.store.get(runId, "call_ttl");
        assert.equal(again?.expiresAt, first.expiresAt, "a read leaves the expiry where it was");
      }
      await ctx.advance(Math.ceil(ctx.ttlMs * 0.7));
      await assertAbsent(ctx, runId, "call_ttl");
    },
  );

  suite.test(
    "complete() keeps the remaining TTL: the record expires when the PROJECTING one would have",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const request = beginRequest(runId, "call_keep", ctx.clock, { ttlMs: ctx.ttlMs });
      const begun = await ctx.store.begin(request);
      assert.ok(begun.ok);
      await ctx.advance(Math.floor(ctx.ttlMs * 0.5));
      const done = await ctx.store.complete({
        runId,
        toolCallId: "call_keep",
        attemptId: request.attemptId,
        outcome: READY,
        now: ctx.clock(),
      });
      assert.ok(done.ok);
      assert.equal(done.record.expiresAt, begun.record.expiresAt);
      await ctx.advance(Math.ceil(ctx.ttlMs * 0.75));
      await assertAbsent(ctx, runId, "call_keep");
    },
  );

  suite.test(
    "complete() after the record expired gives RECORD_EXPIRED and does not re-create or index it",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const request = beginRequest(runId, "call_gone", ctx.clock, { ttlMs: ctx.ttlMs });
      assert.equal((await ctx.store.begin(request)).ok, true);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      const done = await ctx.store.complete({
        runId,
        toolCallId: "call_gone",
        attemptId: request.attemptId,
        outcome: READY,
        now: ctx.clock(),
      });
      assert.deepEqual(done, { ok: false, code: "RECORD_EXPIRED" });
      await assertAbsent(ctx, runId, "call_gone");
      assert.deepEqual((await endRunIndex(ctx, runId)).toolCallIds, []);
    },
  );

  suite.test(
    "begin() refuses a key for the life of its run, after its record expired, counted once",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      await beginAndComplete(ctx, runId, "call_once", READY, ctx.ttlMs);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      await assertAbsent(ctx, runId, "call_once");
      assert.deepEqual(await ctx.store.begin(beginRequest(runId, "call_once", ctx.clock)), {
        ok: false,
        code: "DUPLICATE_TOOL_CALL",
      });
      assert.equal((await ctx.store.getRun(runId))?.used.calls, 1, "counted once");
    },
  );
}
