/**
 * `CallIndex`, an optional capability: what a run keeps of every begun call, read back one by one
 * (`lookupCall`) or listed (`listCalls`), also after the call's record expired.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { CallSummary, StoredRecord } from "../../core/store.ts";
import { capabilitySuite, type StoreContext, type Suite } from "./context.ts";
import {
  beginAndComplete,
  beginRequest,
  DISK_DIGEST,
  FAILED,
  OTHER_DIGEST,
  READY,
  sampleProof,
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

/** Registers the `CallIndex` cases. */
export function callIndexCases(storeSuite: Suite<StoreContext>): void {
  const suite = capabilitySuite(storeSuite, "CallIndex");

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
      assert.equal(first?.record?.seq, 1, "the record holds the position its key was given");
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
    "after a record expired its key stays begun: lookupCall keeps the call, listCalls says EXPIRED",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const attemptId = await beginAndComplete(ctx, runId, "call_gone", READY, ctx.ttlMs);
      await beginAndComplete(ctx, runId, "call_kept", READY);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      assert.equal(await store.get(runId, "call_gone"), null);
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
    "a resent begin of the same attempt is listed once and keeps the digest of its first send",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 1, perTool: {} });
      const request = beginRequest(runId, "call_resent", clock);
      const first = await store.begin(request);
      assert.ok(first.ok);
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

  suite.test(
    "lookupCall() and listCalls() take an ID outside the allow-lists as naming nothing",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      await beginAndComplete(ctx, runId, "call_ok", READY);
      assert.equal(await store.lookupCall("run{x}", "call_ok"), null);
      assert.deepEqual(await store.lookupCall(runId, "call x"), { call: null, record: null });
      assert.equal(await store.listCalls("run{x}"), null);
      assert.equal((await store.listCalls(runId))?.calls.length, 1);
    },
  );

  suite.test(
    "lookupCall() gives the record exactly as get() does, its failure and proof included",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const failure = { name: "TypeError", message: 'quote " 日本 <b>' };
      await beginAndComplete(ctx, runId, "call_threw", {
        status: "ERROR",
        errorCode: "EXECUTION_FAILED",
        rawJson: null,
        failure,
      });
      const request = beginRequest(runId, "call_signed", clock);
      assert.equal((await store.begin(request)).ok, true);
      const proof = sampleProof("lookup");
      const { attemptId } = request;
      const signed = await store.complete({
        runId,
        toolCallId: "call_signed",
        attemptId,
        outcome: READY,
        now: clock(),
        proof,
      });
      assert.ok(signed.ok);
      for (const toolCallId of ["call_threw", "call_signed"]) {
        const found = await store.lookupCall(runId, toolCallId);
        assert.deepEqual(found?.record, await store.get(runId, toolCallId), toolCallId);
      }
      assert.deepEqual((await store.lookupCall(runId, "call_threw"))?.record?.failure, failure);
      assert.deepEqual((await store.lookupCall(runId, "call_signed"))?.record?.proof, proof);
    },
  );

  suite.test(
    "lookupCall() and listCalls() give a costed call's record and run with their cost",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock, { calls: 10, perTool: {}, cost: 30 });
      const request = beginRequest(runId, "call_costed", clock, { cost: 12 });
      assert.equal((await store.begin(request)).ok, true);
      const looked = await store.lookupCall(runId, "call_costed");
      assert.deepEqual(looked?.record?.cost, { reserved: 12, spent: null });
      assert.deepEqual(looked?.record, await store.get(runId, "call_costed"));
      const listed = await store.listCalls(runId);
      assert.deepEqual(listed?.run.cost, { reserved: 12, spent: 0 });
      assert.deepEqual(listed?.run.budget.cost, 30);
    },
  );
}
