/**
 * `Store` contract: the progress index and `readFacts`, which resolves it to READY records of
 * the run and nothing else.
 *
 * @module
 */
import assert from "node:assert/strict";
import { MIN_FACT_BYTES } from "../../core/limits.ts";
import { CANARY_SECRET } from "../fakes.ts";
import type { StoreContext, Suite } from "./context.ts";
import {
  assertRowOfRecord,
  beginAndComplete,
  endRunIndex,
  FAILED,
  NO_EVIDENCE,
  readRows,
  READY,
  seedIdentities,
  storeRun,
} from "./helpers.ts";

/** Registers the progress and fact cases of the `Store` contract. */
export function storeFactCases(suite: Suite<StoreContext>): void {
  suite.test(
    "readFacts() skips missing, expired, other-run, PROJECTING and ERROR identities",
    async (ctx) => {
      const { runId, identities } = await seedIdentities(ctx);
      const { rows, omitted } = await ctx.store.readFacts({
        runId,
        identities,
        maxFacts: 10,
        maxBytes: 100_000,
      });
      assert.deepEqual(rows.map((r) => r.toolCallId), ["call_ready"]);
      assert.equal(omitted, 0, "a skipped identity is not an omitted fact");
    },
  );

  suite.test(
    "endRun() indexes completed calls in completion order, READY and ERROR, never PROJECTING",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      await beginAndComplete(ctx, runId, "call_1", READY);
      await beginAndComplete(ctx, runId, "call_2", FAILED);
      await beginAndComplete(ctx, runId, "call_3", NO_EVIDENCE);
      const { toolCallIds } = await endRunIndex(ctx, runId);
      assert.deepEqual(toolCallIds, ["call_1", "call_2", "call_3"]);
    },
  );

  suite.test(
    "readFacts() rows carry the record's agent result, never its raw response or request",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const secret = { ...READY, rawJson: JSON.stringify({ credential: CANARY_SECRET }) };
      await beginAndComplete(ctx, runId, "call_secret", secret);
      const rows = await readRows(ctx, runId, ["call_secret"]);
      assert.equal(rows.length, 1);
      const row = rows[0]!;
      assert.deepEqual(
        [row.runId, row.toolCallId, row.toolName, row.status, row.evidence],
        [runId, "call_secret", "fake_success", "READY", "EVIDENCE_FOUND"],
      );
      await assertRowOfRecord(ctx, row);
    },
  );

  suite.test(
    "readFacts() keeps the given order and stops at maxFacts and maxBytes, counting the rest",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const ids = ["call_c", "call_a", "call_b"];
      for (const id of ids) await beginAndComplete(ctx, runId, id, READY);
      const identities = ids.map((toolCallId) => ({ runId, toolCallId }));
      const read = async (maxFacts: number, maxBytes: number) => {
        const { rows, omitted, unread = 0 } = await ctx.store.readFacts({
          runId,
          identities,
          maxFacts,
          maxBytes,
        });
        // A store may read past where the caps are full (counting in omitted), or stop.
        return [rows.map((r) => r.toolCallId), omitted + unread];
      };
      assert.deepEqual(await read(10, 100_000), [ids, 0]);
      assert.deepEqual(await read(2, 100_000), [ids.slice(0, 2), 1]);
      const size = new TextEncoder().encode(READY.agentResultJson).length;
      assert.deepEqual(await read(10, size * 2 - 1), [ids.slice(0, 1), 2]);
    },
  );

  suite.test(
    "readFacts() reads no identity once the caps can take no more, and counts those it left unread",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const ids = ["call_1", "call_2", "call_3", "call_4"];
      for (const id of ids) await beginAndComplete(ctx, runId, id, READY);
      const size = new TextEncoder().encode(READY.agentResultJson).length;
      const identities = [
        ...ids.map((toolCallId) => ({ runId, toolCallId })),
        { runId: "another-run", toolCallId: "call_1" },
      ];
      const read = (maxFacts: number, maxBytes: number) =>
        ctx.store.readFacts({ runId, identities, maxFacts, maxBytes });
      const rowIds = (reply: { rows: { toolCallId: string }[] }) =>
        reply.rows.map((r) => r.toolCallId);
      // Two rows and fewer bytes left than the smallest agent result: the rest is not read.
      const byBytes = await read(10, 2 * size + MIN_FACT_BYTES - 1);
      assert.deepEqual([rowIds(byBytes), byBytes.omitted, byBytes.unread], [ids.slice(0, 2), 0, 3]);
      // Room for one more agent result of the smallest size, not for this one: read, omitted.
      const roomy = await read(10, 2 * size + MIN_FACT_BYTES);
      assert.deepEqual([rowIds(roomy), roomy.omitted, roomy.unread], [ids.slice(0, 2), 2, 0]);
      const byCount = await read(3, 100_000);
      assert.deepEqual([rowIds(byCount), byCount.omitted, byCount.unread], [ids.slice(0, 3), 0, 2]);
      const none = await read(0, 100_000);
      assert.deepEqual([rowIds(none), none.omitted, none.unread], [[], 0, identities.length]);
    },
  );

  suite.test(
    "endRun() with a page lists READY calls from its start and counts the live ones after it",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      await beginAndComplete(ctx, runId, "call_1", READY);
      await beginAndComplete(ctx, runId, "call_2", FAILED);
      await beginAndComplete(ctx, runId, "call_3", NO_EVIDENCE);
      await beginAndComplete(ctx, runId, "call_4", READY);
      // The suite's short TTL, not a fixed one: a store on real time must get to complete first.
      await beginAndComplete(ctx, runId, "call_5", READY, ctx.ttlMs);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      const page = async (from: number, limit: number) => {
        const now = ctx.clock();
        const ended = await ctx.store.endRun({ runId, now, page: { from, limit } });
        assert.ok(ended.ok);
        return ended;
      };
      const first = await page(0, 2);
      assert.deepEqual([first.toolCallIds, first.page], [["call_1", "call_3"], {
        next: 2,
        left: 1, // call_4; call_5 expired
      }]);
      const second = await page(2, 5);
      assert.deepEqual([second.toolCallIds, second.page], [["call_4", "call_5"], {
        next: null,
        left: 0,
      }]);
      const past = await page(9, 1);
      assert.deepEqual([past.toolCallIds, past.page], [[], { next: null, left: 0 }]);
      // A page of 0 only counts: the live READY calls from its start on.
      const counted = await page(1, 0);
      assert.deepEqual([counted.toolCallIds, counted.page], [[], { next: 1, left: 2 }]);
      const all = await ctx.store.endRun({ runId, now: ctx.clock() });
      assert.ok(all.ok);
      assert.deepEqual(all.toolCallIds, ["call_1", "call_2", "call_3", "call_4", "call_5"]);
      for (const bad of [{ from: -1, limit: 1 }, { from: 0, limit: -1 }, { from: 0.5, limit: 1 }]) {
        await assert.rejects(
          ctx.store.endRun({ runId, now: ctx.clock(), page: bad }),
          RangeError,
        );
      }
    },
  );
}
