/**
 * `Store` contract: cost budgets. Begin reserves a call's cost atomically with the call counts,
 * complete settles it (the rest of the reservation back, any excess kept), a reservation whose
 * call never completed stays held, and nothing changes for calls without a cost.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Store } from "../../core/store.ts";
import type { StoreContext, Suite } from "./context.ts";
import { beginRequest, FAILED, READY, storeRun } from "./helpers.ts";

/** Starts a run with a cost budget of `cost` (and 100 calls). */
function costRun(store: Store, clock: () => number, cost: number): Promise<string> {
  return storeRun(store, clock, { calls: 100, perTool: {}, cost });
}

/** Begins a call of `cost` and answers its attempt, asserting it began. */
async function reserve(
  ctx: StoreContext,
  runId: string,
  toolCallId: string,
  cost: number | undefined,
): Promise<string> {
  const request = beginRequest(runId, toolCallId, ctx.clock, cost === undefined ? {} : { cost });
  const begun = await ctx.store.begin(request);
  assert.equal(begun.ok, true, `begin ${toolCallId}: ${JSON.stringify(begun)}`);
  return request.attemptId;
}

/** The run's `cost` as `getRun` reads it. */
async function runCost(ctx: StoreContext, runId: string) {
  return (await ctx.store.getRun(runId))?.cost;
}

/** Registers the cost cases of the `Store` contract. */
export function storeCostCases(suite: Suite<StoreContext>): void {
  suite.test(
    "startRun() keeps budget.cost and counts from nothing; a run without one has no cost",
    async ({ store, clock }) => {
      const runId = await costRun(store, clock, 250);
      const state = await store.getRun(runId);
      assert.deepEqual(state?.budget, { calls: 100, perTool: {}, cost: 250 });
      assert.deepEqual(state?.cost, { reserved: 0, spent: 0 });
      const plain = await store.getRun(await storeRun(store, clock));
      assert.equal(plain !== null && "cost" in plain, false, "no cost without a cost budget");
      assert.equal(plain !== null && "cost" in plain.budget, false);
    },
  );

  suite.test(
    "begin() with a cost reserves it on the record and the run; without one nothing changes",
    async (ctx) => {
      const runId = await costRun(ctx.store, ctx.clock, 100);
      const request = beginRequest(runId, "call_costed", ctx.clock, { cost: 30 });
      const begun = await ctx.store.begin(request);
      assert.ok(begun.ok);
      assert.deepEqual(begun.record.cost, { reserved: 30, spent: null });
      assert.deepEqual((await ctx.store.get(runId, "call_costed"))?.cost, {
        reserved: 30,
        spent: null,
      });
      assert.deepEqual(await runCost(ctx, runId), { reserved: 30, spent: 0 });
      // A repeat of the attempt is the same begin: the record as stored, nothing reserved again.
      assert.deepEqual(await ctx.store.begin(request), begun);
      assert.deepEqual(await runCost(ctx, runId), { reserved: 30, spent: 0 });
      await reserve(ctx, runId, "call_free", undefined);
      const free = await ctx.store.get(runId, "call_free");
      assert.equal(free !== null && "cost" in free, false, "a call without a cost has none");
      assert.deepEqual(await runCost(ctx, runId), { reserved: 30, spent: 0 });
      // A run without a cost budget still counts the costs of its calls, and refuses none.
      const open = await storeRun(ctx.store, ctx.clock);
      await reserve(ctx, open, "call_big", 1_000_000_000_000);
      assert.deepEqual(await runCost(ctx, open), { reserved: 1_000_000_000_000, spent: 0 });
    },
  );

  suite.test(
    "begin() refuses BUDGET_EXHAUSTED when reserved + spent + cost passes budget.cost, writing nothing",
    async (ctx) => {
      const runId = await costRun(ctx.store, ctx.clock, 10);
      await reserve(ctx, runId, "call_6", 6);
      assert.deepEqual(
        await ctx.store.begin(beginRequest(runId, "call_5", ctx.clock, { cost: 5 })),
        { ok: false, code: "BUDGET_EXHAUSTED" },
      );
      assert.equal(await ctx.store.get(runId, "call_5"), null, "a refusal writes nothing");
      const state = await ctx.store.getRun(runId);
      assert.equal(state?.used.calls, 1, "a refused call is not counted");
      assert.deepEqual(state?.cost, { reserved: 6, spent: 0 });
      await reserve(ctx, runId, "call_5", 4); // the same key, now within the budget: it fits
      await reserve(ctx, runId, "call_0", 0); // exactly at the budget, a cost of 0 still fits
      assert.deepEqual(
        await ctx.store.begin(beginRequest(runId, "call_1", ctx.clock, { cost: 1 })),
        { ok: false, code: "BUDGET_EXHAUSTED" },
      );
      await reserve(ctx, runId, "call_free", undefined); // no cost: no cost budget refuses it
      assert.deepEqual(await runCost(ctx, runId), { reserved: 10, spent: 0 });
    },
  );

  suite.test(
    "complete() settles a call: what it spent is counted, the rest of its reservation given back",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await costRun(store, clock, 10);
      const a = await reserve(ctx, runId, "call_a", 6);
      const b = await reserve(ctx, runId, "call_b", 4);
      const done = await store.complete({
        runId,
        toolCallId: "call_a",
        attemptId: a,
        outcome: READY,
        now: clock(),
        spent: 2,
      });
      assert.ok(done.ok);
      assert.deepEqual(done.record.cost, { reserved: 6, spent: 2 });
      assert.deepEqual((await store.get(runId, "call_a"))?.cost, { reserved: 6, spent: 2 });
      assert.deepEqual(await runCost(ctx, runId), { reserved: 4, spent: 2 });
      // No spent named: the call spent its reservation. An ERROR settles as READY does.
      const failed = await store.complete({
        runId,
        toolCallId: "call_b",
        attemptId: b,
        outcome: FAILED,
        now: clock(),
      });
      assert.ok(failed.ok);
      assert.deepEqual(failed.record.cost, { reserved: 4, spent: 4 });
      assert.deepEqual(await runCost(ctx, runId), { reserved: 0, spent: 6 });
      await reserve(ctx, runId, "call_c", 4); // 6 spent + 4 fits 10 exactly
      assert.deepEqual(await runCost(ctx, runId), { reserved: 4, spent: 6 });
      const ended = await store.endRun({ runId, now: clock() });
      assert.ok(ended.ok);
      assert.deepEqual(ended.run.cost, { reserved: 4, spent: 6 });
    },
  );

  suite.test(
    "a begin or complete resent by its attempt reserves and settles once",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await costRun(store, clock, 20);
      const request = beginRequest(runId, "call_resent", clock, { cost: 8 });
      const begun = await store.begin(request);
      const again = await store.begin(request);
      assert.ok(begun.ok && again.ok, JSON.stringify(again));
      assert.deepEqual(again.record, begun.record);
      assert.deepEqual(await runCost(ctx, runId), { reserved: 8, spent: 0 });
      const complete = {
        runId,
        toolCallId: "call_resent",
        attemptId: request.attemptId,
        outcome: READY,
        now: clock(),
        spent: 3,
      };
      const done = await store.complete(complete);
      const repeated = await store.complete(complete);
      assert.ok(done.ok && repeated.ok, JSON.stringify(repeated));
      assert.deepEqual(repeated.record, done.record);
      assert.deepEqual(done.record.cost, { reserved: 8, spent: 3 });
      assert.deepEqual(await runCost(ctx, runId), { reserved: 0, spent: 3 });
      // Without a spent named, a repeat settles the reservation once too.
      const plain = beginRequest(runId, "call_plain", clock, { cost: 5 });
      assert.ok((await store.begin(plain)).ok);
      const completePlain = {
        runId,
        toolCallId: "call_plain",
        attemptId: plain.attemptId,
        outcome: FAILED,
        now: clock(),
      };
      assert.ok((await store.complete(completePlain)).ok);
      assert.ok((await store.complete(completePlain)).ok);
      assert.deepEqual(await runCost(ctx, runId), { reserved: 0, spent: 8 });
    },
  );

  suite.test(
    "complete() keeps an excess: costed calls are refused until it fits, calls without a cost are not",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await costRun(store, clock, 10);
      const attemptId = await reserve(ctx, runId, "call_over", 3);
      const done = await store.complete({
        runId,
        toolCallId: "call_over",
        attemptId,
        outcome: READY,
        now: clock(),
        spent: 12,
      });
      assert.ok(done.ok);
      assert.deepEqual(done.record.cost, { reserved: 3, spent: 12 }, "the excess is recorded");
      assert.deepEqual(await runCost(ctx, runId), { reserved: 0, spent: 12 });
      assert.deepEqual(
        await store.begin(beginRequest(runId, "call_zero", clock, { cost: 0 })),
        { ok: false, code: "BUDGET_EXHAUSTED" },
        "over the budget, even a cost of 0 does not fit",
      );
      await reserve(ctx, runId, "call_free", undefined);
    },
  );

  suite.test(
    "complete() refuses a spent for a call without a cost, and a repeat that names another spent",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await costRun(store, clock, 50);
      const free = await reserve(ctx, runId, "call_free", undefined);
      const freeDone = { runId, toolCallId: "call_free", attemptId: free, outcome: READY };
      assert.deepEqual(await store.complete({ ...freeDone, now: clock(), spent: 1 }), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      assert.equal((await store.get(runId, "call_free"))?.status, "PROJECTING");
      assert.equal((await store.complete({ ...freeDone, now: clock() })).ok, true);
      const costed = await reserve(ctx, runId, "call_costed", 20);
      const request = {
        runId,
        toolCallId: "call_costed",
        attemptId: costed,
        outcome: READY,
        now: clock(),
        spent: 5,
      };
      const first = await store.complete(request);
      assert.ok(first.ok);
      // A repeat is the same complete: the stored record, and no counter moves again.
      assert.deepEqual(await store.complete(request), first);
      assert.deepEqual(await runCost(ctx, runId), { reserved: 0, spent: 5 });
      assert.deepEqual(await store.complete({ ...request, spent: 6 }), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      const { spent: _settled, ...unsettled } = request;
      assert.deepEqual(await store.complete(unsettled), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      }, "no spent is the reservation, 20: not what was settled");
      assert.deepEqual(await runCost(ctx, runId), { reserved: 0, spent: 5 });
    },
  );

  suite.test(
    "a reservation whose call never completed stays held, also once its record expired",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await costRun(store, clock, 10);
      const request = beginRequest(runId, "call_crashed", clock, { cost: 7, ttlMs: ctx.ttlMs });
      assert.equal((await store.begin(request)).ok, true);
      assert.deepEqual(
        await store.complete({
          runId,
          toolCallId: "call_crashed",
          attemptId: "another-attempt",
          outcome: READY,
          now: clock(),
          spent: 0,
        }),
        { ok: false, code: "ILLEGAL_TRANSITION" },
        "only the attempt that began it settles it",
      );
      assert.deepEqual(await runCost(ctx, runId), { reserved: 7, spent: 0 });
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      assert.equal(await store.get(runId, "call_crashed"), null);
      assert.deepEqual(await runCost(ctx, runId), { reserved: 7, spent: 0 }, "never refunded");
      assert.deepEqual(
        await store.begin(beginRequest(runId, "call_next", clock, { cost: 4 })),
        { ok: false, code: "BUDGET_EXHAUSTED" },
      );
    },
  );

  suite.test(
    "begin() lets exactly 14 of 60 concurrent calls of cost 7 reserve against a budget of 100",
    async (ctx) => {
      const runId = await costRun(ctx.store, ctx.clock, 100);
      const results = await Promise.all(
        Array.from(
          { length: 60 },
          (_, i) => ctx.store.begin(beginRequest(runId, `call_${i}`, ctx.clock, { cost: 7 })),
        ),
      );
      assert.equal(results.filter((r) => r.ok).length, 14);
      for (const r of results) if (!r.ok) assert.equal(r.code, "BUDGET_EXHAUSTED");
      const state = await ctx.store.getRun(runId);
      assert.deepEqual(state?.cost, { reserved: 98, spent: 0 });
      assert.equal(state?.used.calls, 14);
    },
  );

  suite.test(
    "complete() settles 30 concurrent calls exactly: the run's spend is the sum of its records'",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await costRun(store, clock, 1_000);
      const attempts = await Promise.all(
        Array.from({ length: 30 }, (_, i) => reserve(ctx, runId, `call_${i}`, 20)),
      );
      const done = await Promise.all(attempts.map((attemptId, i) =>
        store.complete({
          runId,
          toolCallId: `call_${i}`,
          attemptId,
          outcome: i % 3 === 0 ? FAILED : READY,
          now: clock(),
          ...(i % 2 === 0 ? { spent: i } : {}),
        })
      ));
      let spent = 0;
      for (const reply of done) {
        assert.ok(reply.ok);
        spent += reply.record.cost!.spent!;
      }
      // The odd calls spent their 20 each, the even ones their index: 300 + (0 + 2 + ... + 28).
      assert.equal(spent, 510);
      assert.deepEqual(await runCost(ctx, runId), { reserved: 0, spent });
    },
  );

  suite.test(
    "begin(), startRun() and complete() reject a cost that is not an integer from 0 to 1e12",
    async (context) => {
      const { store, clock } = context;
      const runId = await costRun(store, clock, 10);
      for (const cost of [-1, 1.5, 1e12 + 1, Number.NaN, -0]) {
        await assert.rejects(
          () => store.begin(beginRequest(runId, "call_bad", clock, { cost })),
          RangeError,
          `cost ${cost}`,
        );
        await assert.rejects(
          () => storeRun(store, clock, { calls: 10, perTool: {}, cost }),
          RangeError,
          `budget.cost ${cost}`,
        );
      }
      assert.equal(await store.get(runId, "call_bad"), null);
      const attemptId = await reserve(context, runId, "call_ok", 1);
      await assert.rejects(
        () =>
          store.complete({
            runId,
            toolCallId: "call_ok",
            attemptId,
            outcome: READY,
            now: clock(),
            spent: 2.5,
          }),
        RangeError,
      );
      assert.equal((await store.get(runId, "call_ok"))?.status, "PROJECTING");
    },
  );
}
