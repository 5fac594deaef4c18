/**
 * `Store` contract: begin, the one atomic step before a tool runs.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type StoreContext, type Suite, uniqueId } from "./context.ts";
import { assertAbsent, beginRequest, READY, storeRun } from "./helpers.ts";

/** Registers the begin cases of the `Store` contract. */
export function storeBeginCases(suite: Suite<StoreContext>): void {
  suite.test(
    "begin() creates one PROJECTING record with the exact request and counts both budgets",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const request = beginRequest(runId, "call_new", clock, {
        requestJson: '{"query":"disk ✓"}',
      });
      const begun = await store.begin(request);
      assert.ok(begun.ok);
      assert.deepEqual(await store.get(runId, "call_new"), begun.record);
      const { record } = begun;
      assert.deepEqual(
        [record.runId, record.toolCallId, record.toolName, record.status, record.evidence],
        [runId, "call_new", "fake_success", "PROJECTING", null],
      );
      assert.equal(record.requestJson, request.requestJson);
      assert.deepEqual([record.rawJson, record.agentResultJson, record.errorCode], [
        null,
        null,
        null,
      ]);
      assert.equal(record.attemptId, request.attemptId);
      assert.equal(record.expiresAt - record.createdAt, request.ttlMs);
      const used = (await store.getRun(runId))?.used;
      assert.deepEqual(used, { calls: 1, perTool: { fake_success: 1 } });
    },
  );

  suite.test(
    "begin() numbers a run's calls 1, 2, 3 in begin order; a refusal takes no number, a repeat and a complete keep it",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const first = beginRequest(runId, "call_a", clock);
      const a = await store.begin(first);
      assert.ok(a.ok);
      assert.equal(a.record.seq, 1);
      const refused = await store.begin(beginRequest(runId, "call_a", clock));
      assert.deepEqual(refused, { ok: false, code: "DUPLICATE_TOOL_CALL" });
      const b = await store.begin(beginRequest(runId, "call_b", clock));
      assert.ok(b.ok);
      assert.equal(b.record.seq, 2, "the refusal took no number");
      const repeat = await store.begin(first);
      assert.ok(repeat.ok);
      assert.equal(repeat.record.seq, 1, "a repeat of the attempt is the same begin");
      const done = await store.complete({
        runId,
        toolCallId: "call_a",
        attemptId: first.attemptId,
        outcome: READY,
        now: clock(),
      });
      assert.ok(done.ok);
      assert.equal(done.record.seq, 1);
      assert.equal((await store.get(runId, "call_a"))?.seq, 1);
      assert.equal((await store.get(runId, "call_b"))?.seq, 2);
      const c = await store.begin(beginRequest(runId, "call_c", clock));
      assert.equal(c.ok && c.record.seq, 3);
      const otherRun = await storeRun(store, clock);
      const other = await store.begin(beginRequest(otherRun, "call_a", clock));
      assert.equal(other.ok && other.record.seq, 1, "each run counts from 1");
    },
  );

  suite.test(
    "begin() refuses an unknown run, a used key, a late call and an ended run, and writes nothing",
    async (ctx) => {
      const { store, clock } = ctx;
      assert.deepEqual(await store.begin(beginRequest("run-unknown", "call_1", clock)), {
        ok: false,
        code: "RUN_NOT_FOUND",
      });
      const runId = await storeRun(store, clock, { calls: 2, perTool: {} });
      assert.equal((await store.begin(beginRequest(runId, "call_1", clock))).ok, true);
      assert.deepEqual(await store.begin(beginRequest(runId, "call_1", clock)), {
        ok: false,
        code: "DUPLICATE_TOOL_CALL",
      });
      const late = await store.begin(
        beginRequest(runId, "call_late", clock, { now: clock() + 700_000 }),
      );
      assert.deepEqual(late, { ok: false, code: "DEADLINE_EXCEEDED" });
      const ended = await store.endRun({ runId, now: clock() });
      assert.equal(ended.ok, true);
      assert.deepEqual(await store.begin(beginRequest(runId, "call_2", clock)), {
        ok: false,
        code: "RUN_INACTIVE",
      });
      const state = await store.getRun(runId);
      assert.equal(state?.status, "ENDED");
      assert.equal(state?.used.calls, 1);
      for (const id of ["call_late", "call_2"]) await assertAbsent(ctx, runId, id);
    },
  );

  suite.test(
    "begin() refuses a used key and keeps the first record",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const first = await store.begin(beginRequest(runId, "call_used", clock));
      assert.ok(first.ok);
      const second = await store.begin(
        beginRequest(runId, "call_used", clock, {
          toolName: "fake_no_evidence",
          requestJson: '{"query":"other"}',
        }),
      );
      assert.deepEqual(second, { ok: false, code: "DUPLICATE_TOOL_CALL" });
      assert.deepEqual(await store.get(runId, "call_used"), first.record);
      assert.deepEqual((await store.getRun(runId))?.used, {
        calls: 1,
        perTool: { fake_success: 1 },
      });
    },
  );

  suite.test(
    "begin() answers the run's deadline and start with the record, and again for a repeat of its attempt",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const state = await store.getRun(runId);
      assert.ok(state !== null);
      const instance = { deadline: state.deadline, startedAt: state.startedAt };
      const request = beginRequest(runId, "call_run", clock);
      const begun = await store.begin(request);
      assert.ok(begun.ok);
      assert.deepEqual(begun.run, instance);
      assert.deepEqual(begun.record, await store.get(runId, "call_run"));
      // Named by its instance, and resent: the same answer.
      const again = await store.begin({ ...request, startedAt: state.startedAt });
      assert.deepEqual(again, { ok: true, record: begun.record, run: instance });
      assert.equal((await store.getRun(runId))?.used.calls, 1);
    },
  );

  suite.test(
    "begin() for another instance of the run ID (another startedAt) is RUN_NOT_FOUND and writes nothing",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const state = await store.getRun(runId);
      assert.ok(state !== null);
      const first = beginRequest(runId, "call_first", clock, { startedAt: state.startedAt });
      assert.equal((await store.begin(first)).ok, true);
      for (const startedAt of [state.startedAt - 1, state.startedAt + 1, 0]) {
        const other = beginRequest(runId, "call_other", clock, { startedAt });
        assert.deepEqual(await store.begin(other), { ok: false, code: "RUN_NOT_FOUND" });
        // Not even a repeat of an attempt the run began: the instance is checked first.
        assert.deepEqual(await store.begin({ ...first, startedAt }), {
          ok: false,
          code: "RUN_NOT_FOUND",
        });
      }
      await assertAbsent(ctx, runId, "call_other");
      assert.deepEqual((await store.getRun(runId))?.used, {
        calls: 1,
        perTool: { fake_success: 1 },
      });
      // A start that is not an integer epoch ms is refused before anything is read.
      for (const startedAt of [-1, 0.5, Number.NaN, "1" as unknown as number]) {
        await assert.rejects(
          () => store.begin(beginRequest(runId, "call_bad", clock, { startedAt })),
          RangeError,
          String(startedAt),
        );
      }
      await assertAbsent(ctx, runId, "call_bad");
    },
  );

  suite.test(
    "a run ID started again after its state expired is another instance: a begin for the earlier one finds no run",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = uniqueId("run");
      const start = (attemptId: string) =>
        store.startRun({
          runId,
          deadline: clock() + ctx.ttlMs,
          budget: { calls: 10, perTool: {} },
          ttlMs: ctx.ttlMs,
          attemptId,
          now: clock(),
        });
      const earlier = await start("start-earlier");
      assert.ok(earlier.ok);
      const old = earlier.run.startedAt;
      assert.equal((await store.begin(beginRequest(runId, "call_1", clock))).ok, true);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.5));
      assert.equal(await store.getRun(runId), null);
      const later = await start("start-later");
      assert.ok(later.ok);
      assert.notEqual(later.run.startedAt, old);
      const stale = beginRequest(runId, "call_2", clock, { startedAt: old });
      assert.deepEqual(await store.begin(stale), { ok: false, code: "RUN_NOT_FOUND" });
      assert.deepEqual((await store.getRun(runId))?.used.calls, 0);
      // The later instance, named or not.
      const named = await store.begin({ ...stale, startedAt: later.run.startedAt });
      assert.ok(named.ok);
      assert.deepEqual(named.run, {
        deadline: later.run.deadline,
        startedAt: later.run.startedAt,
      });
      assert.equal((await store.begin(beginRequest(runId, "call_3", clock))).ok, true);
      assert.equal((await store.get(runId, "call_2"))?.status, "PROJECTING");
      assert.equal((await store.getRun(runId))?.used.calls, 2);
    },
  );

  suite.test(
    "begin() treats a repeat of the same attempt as the same begin: not a duplicate, counted once",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock, { calls: 1, perTool: {} });
      const request = beginRequest(runId, "call_retry", clock);
      const first = await store.begin(request);
      const again = await store.begin(request);
      assert.equal(first.ok && again.ok, true);
      assert.deepEqual(again, first);
      assert.equal((await store.getRun(runId))?.used.calls, 1);
    },
  );
}
