/**
 * `Store` contract: request identity (duplicate or conflict), replay, and what a run keeps of
 * every begun call (`lookupCall`, `listCalls`).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { CallSummary, StoredRecord } from "../../core/store.ts";
import type { StoreContext, Suite } from "./context.ts";
import {
  beginAndComplete,
  beginRequest,
  DISK_DIGEST,
  FAILED,
  NO_EVIDENCE,
  OTHER_DIGEST,
  READY,
  storeRun,
} from "./helpers.ts";

/** The summary `listCalls` gives of a live record. */
function summaryOf(record: StoredRecord | null): CallSummary {
  assert.ok(record, "the record exists");
  return {
    toolCallId: record.toolCallId,
    status: record.status,
    toolName: record.toolName,
    evidence: record.evidence,
    errorCode: record.errorCode,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

const EXPIRED = (toolCallId: string): CallSummary => ({
  toolCallId,
  status: "EXPIRED",
  toolName: null,
  evidence: null,
  errorCode: null,
  createdAt: null,
  updatedAt: null,
});

/** Registers the request identity, replay and call listing cases of the `Store` contract. */
export function storeCallCases(suite: Suite<StoreContext>): void {
  suite.test(
    "begin() refuses a begun key as DUPLICATE_TOOL_CALL for the same digest and TOOL_CALL_CONFLICT for another, before budgets, keeping the first record",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 1, perTool: { fake_success: 1 } });
      await beginAndComplete(ctx, runId, "call_key", READY);
      const first = await store.get(runId, "call_key");
      const usedBefore = (await store.getRun(runId))?.used;
      // Both budgets are spent: the key's refusal still comes first. The digest alone decides
      // (the boundary's digest covers the tool): a store never compares the tool name.
      const same = beginRequest(runId, "call_key", clock, { toolName: "fake_no_evidence" });
      assert.deepEqual(await store.begin(same), { ok: false, code: "DUPLICATE_TOOL_CALL" });
      const other = beginRequest(runId, "call_key", clock, {
        requestJson: '{"query":"other"}',
        requestDigest: OTHER_DIGEST,
      });
      assert.deepEqual(await store.begin(other), { ok: false, code: "TOOL_CALL_CONFLICT" });
      assert.deepEqual(await store.begin({ ...other, attemptId: "another", replay: true }), {
        ok: false,
        code: "TOOL_CALL_CONFLICT",
      });
      assert.deepEqual(await store.get(runId, "call_key"), first, "the first record, untouched");
      assert.deepEqual((await store.getRun(runId))?.used, usedBefore, "no budget used");
      assert.deepEqual(usedBefore, { calls: 1, perTool: { fake_success: 1 } });
      // A new key is refused by the budget, not as a duplicate.
      assert.deepEqual(await store.begin(beginRequest(runId, "call_new", clock)), {
        ok: false,
        code: "TOOL_BUDGET_EXHAUSTED",
      });
    },
  );

  suite.test(
    "begin() with replay refuses a same-digest key as DUPLICATE_TOOL_CALL carrying its READY, ERROR or PROJECTING record, and only while the run is ACTIVE",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 3, perTool: {} });
      await beginAndComplete(ctx, runId, "call_ready", NO_EVIDENCE);
      await beginAndComplete(ctx, runId, "call_error", FAILED);
      await beginAndComplete(ctx, runId, "call_projecting", null);
      for (const toolCallId of ["call_ready", "call_error", "call_projecting"]) {
        const record = await store.get(runId, toolCallId);
        assert.ok(record);
        const replayed = await store.begin(
          beginRequest(runId, toolCallId, clock, { replay: true }),
        );
        assert.deepEqual(replayed, { ok: false, code: "DUPLICATE_TOOL_CALL", record }, toolCallId);
        assert.deepEqual(await store.get(runId, toolCallId), record, "never touched");
      }
      assert.equal((await store.getRun(runId))?.used.calls, 3, "no budget used");
      assert.equal((await store.endRun({ runId, now: clock() })).ok, true);
      const late = await store.begin(beginRequest(runId, "call_ready", clock, { replay: true }));
      assert.deepEqual(late, { ok: false, code: "RUN_INACTIVE" });
    },
  );

  suite.test(
    "after a record expired its key stays begun: replay carries null, lookupCall keeps the call, listCalls says EXPIRED",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const attemptId = await beginAndComplete(ctx, runId, "call_gone", READY, ctx.ttlMs);
      await beginAndComplete(ctx, runId, "call_kept", READY);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      assert.equal(await store.get(runId, "call_gone"), null);
      assert.deepEqual(
        await store.begin(beginRequest(runId, "call_gone", clock, { replay: true })),
        { ok: false, code: "DUPLICATE_TOOL_CALL", record: null },
      );
      assert.deepEqual(
        await store.begin(beginRequest(runId, "call_gone", clock, { requestDigest: OTHER_DIGEST })),
        { ok: false, code: "TOOL_CALL_CONFLICT" },
      );
      assert.deepEqual(await store.lookupCall(runId, "call_gone"), {
        call: { toolCallId: "call_gone", requestDigest: DISK_DIGEST, attemptId, seq: 1 },
        record: null,
      });
      const listed = await store.listCalls(runId);
      assert.deepEqual(listed?.calls, [
        EXPIRED("call_gone"),
        summaryOf(await store.get(runId, "call_kept")),
      ]);
      assert.equal(listed?.run.used.calls, 2, "counted once");
    },
  );

  suite.test(
    "listCalls() lists every begun call once, in begin order, with its record's status and no payloads; refusals are never listed",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 3, perTool: {} });
      const begin = (toolCallId: string, over = {}) =>
        store.begin(beginRequest(runId, toolCallId, clock, over));
      const a = beginRequest(runId, "call_a", clock);
      const b = beginRequest(runId, "call_b", clock, { toolName: "fake_no_evidence" });
      const c = beginRequest(runId, "call_c", clock);
      for (const request of [a, b, c]) assert.equal((await store.begin(request)).ok, true);
      // Completed in another order than begun.
      const complete = (request: typeof a, outcome: typeof READY | typeof FAILED) =>
        store.complete({
          runId,
          toolCallId: request.toolCallId,
          attemptId: request.attemptId,
          outcome,
          now: clock(),
        });
      assert.equal((await complete(c, FAILED)).ok, true);
      assert.equal((await complete(b, READY)).ok, true);
      // Refused: a duplicate, a conflict, over budget, an invalid ID.
      assert.equal((await begin("call_a")).ok, false);
      assert.equal((await begin("call_b", { requestDigest: OTHER_DIGEST })).ok, false);
      assert.equal((await begin("call_d")).ok, false);
      assert.equal((await begin("call d")).ok, false);
      const expected = [];
      for (const id of ["call_a", "call_b", "call_c"]) {
        expected.push(summaryOf(await store.get(runId, id)));
      }
      assert.deepEqual(expected.map((s) => [s.status, s.evidence, s.errorCode]), [
        ["PROJECTING", null, null],
        ["READY", "EVIDENCE_FOUND", null],
        ["ERROR", "ERROR", "EXECUTION_FAILED"],
      ]);
      const listed = await store.listCalls(runId);
      assert.deepEqual(listed, { run: await store.getRun(runId), calls: expected });
      // An ended run still lists its calls.
      const ended = await store.endRun({ runId, now: clock() });
      assert.ok(ended.ok);
      assert.deepEqual(await store.listCalls(runId), { run: ended.run, calls: expected });
      const fresh = await storeRun(store, clock);
      assert.deepEqual(await store.listCalls(fresh), { run: await store.getRun(fresh), calls: [] });
      assert.equal(await store.listCalls("run-never-started"), null);
    },
  );

  suite.test(
    "lookupCall() tells a never-begun key, a begun one with its digest, attempt and order, and another run's key apart; null for an absent run",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const otherRun = await storeRun(store, clock);
      await beginAndComplete(ctx, runId, "call_first", READY);
      const second = beginRequest(runId, "call_second", clock, { requestDigest: OTHER_DIGEST });
      assert.equal((await store.begin(second)).ok, true);
      await beginAndComplete(ctx, otherRun, "call_foreign", READY);
      assert.deepEqual(await store.lookupCall(runId, "call_second"), {
        call: {
          toolCallId: "call_second",
          requestDigest: OTHER_DIGEST,
          attemptId: second.attemptId,
          seq: 2,
        },
        record: await store.get(runId, "call_second"),
      });
      const first = await store.lookupCall(runId, "call_first");
      assert.equal(first?.call?.seq, 1);
      assert.equal(first?.record?.status, "READY");
      assert.deepEqual(await store.lookupCall(runId, "call_never"), { call: null, record: null });
      assert.deepEqual(await store.lookupCall(runId, "call_foreign"), { call: null, record: null });
      assert.equal(await store.lookupCall("run-never-started", "call_first"), null);
    },
  );

  suite.test(
    "lookupCall() for another instance of the run ID (another startedAt) is null, as for an absent run",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      await beginAndComplete(ctx, runId, "call_1", READY);
      const startedAt = (await store.getRun(runId))!.startedAt;
      const own = await store.lookupCall(runId, "call_1", startedAt);
      assert.deepEqual(own, await store.lookupCall(runId, "call_1"));
      assert.equal(own?.record?.status, "READY");
      assert.deepEqual(await store.lookupCall(runId, "call_never", startedAt), {
        call: null,
        record: null,
      });
      for (const other of [startedAt - 1, startedAt + 1]) {
        for (const toolCallId of ["call_1", "call_never", "not a safe ID"]) {
          assert.equal(await store.lookupCall(runId, toolCallId, other), null, toolCallId);
        }
      }
      await assert.rejects(() => store.lookupCall(runId, "call_1", -1), RangeError);
    },
  );

  suite.test(
    "a resent begin of the same attempt is the same begin, with replay or another digest too: not a duplicate, listed and counted once",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 1, perTool: {} });
      const request = beginRequest(runId, "call_resent", clock);
      const first = await store.begin(request);
      assert.ok(first.ok);
      assert.deepEqual(await store.begin({ ...request, replay: true }), first);
      assert.deepEqual(await store.begin({ ...request, requestDigest: OTHER_DIGEST }), first);
      const listed = await store.listCalls(runId);
      assert.deepEqual(listed?.calls, [summaryOf(first.record)]);
      assert.equal(listed?.run.used.calls, 1);
      assert.equal(
        (await store.lookupCall(runId, "call_resent"))?.call?.requestDigest,
        DISK_DIGEST,
      );
    },
  );
}
