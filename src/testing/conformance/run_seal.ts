/**
 * `RunSeal`, an optional capability: a run sealed once and exported whole. `endRun({ seal: true })`
 * lists the begun calls with their proof hashes (and, with a page, every completed call);
 * `sealRun` keeps the first seal; `exportRun` reads a run whole.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { RecordProof } from "../../core/types.ts";
import { capabilitySuite, type StoreContext, type Suite } from "./context.ts";
import {
  beginAndComplete,
  beginRequest,
  FAILED,
  NO_EVIDENCE,
  READY,
  sampleProof,
  storeRun,
} from "./helpers.ts";

/** Registers the `RunSeal` cases. */
export function runSealCases(storeSuite: Suite<StoreContext>): void {
  const suite = capabilitySuite(storeSuite, "RunSeal");

  suite.test(
    "endRun({ seal: true }) lists every begun call in begin order with its proof hash",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const ids = ["call_3", "call_1", "call_2", "call_0"];
      const attempts: string[] = [];
      for (const id of ids) {
        const request = beginRequest(runId, id, clock);
        assert.equal((await store.begin(request)).ok, true);
        attempts.push(request.attemptId);
      }
      const complete = (i: number, proof?: RecordProof) =>
        store.complete({
          runId,
          toolCallId: ids[i]!,
          attemptId: attempts[i]!,
          outcome: READY,
          now: clock(),
          ...(proof === undefined ? {} : { proof }),
        });
      // call_2 first, then call_3 signed, call_1 unsigned; call_0 stays in flight.
      assert.equal((await complete(2, sampleProof("two"))).ok, true);
      assert.equal((await complete(0, sampleProof("three"))).ok, true);
      assert.equal((await complete(1)).ok, true);
      const ended = await store.endRun({ runId, now: clock(), seal: true });
      assert.ok(ended.ok);
      assert.deepEqual(ended.toolCallIds, ["call_2", "call_3", "call_1"]);
      assert.deepEqual(ended.seal, {
        sealJson: null,
        calls: [
          { toolCallId: "call_3", hash: sampleProof("three").hash },
          { toolCallId: "call_1", hash: null },
          { toolCallId: "call_2", hash: sampleProof("two").hash },
          { toolCallId: "call_0", hash: null },
        ],
      });
      // Without seal: the answer of before, no seal member.
      const plain = await store.endRun({ runId, now: clock() });
      assert.ok(plain.ok);
      assert.equal("seal" in plain, false);
      assert.deepEqual(plain.run, ended.run);
    },
  );

  suite.test("sealRun() keeps the first seal of a run; endRun and exportRun give it back", async (ctx) => {
    const { store, clock } = ctx;
    const runId = await storeRun(store, clock);
    await beginAndComplete(ctx, runId, "call_a", READY);
    const before = await store.getRun(runId);
    assert.ok((await store.endRun({ runId, now: clock(), seal: true })).ok);
    const first = '{"receipt":{"sig":"one"},"facts":[],"omitted":0,"text":"\\u2028 / \\""}';
    assert.deepEqual(await store.sealRun({ runId, sealJson: first }), {
      ok: true,
      sealJson: first,
    });
    assert.deepEqual(await store.sealRun({ runId, sealJson: "{}" }), {
      ok: true,
      sealJson: first,
    });
    const ended = await store.endRun({ runId, now: clock(), seal: true });
    assert.ok(ended.ok);
    assert.deepEqual(ended.seal, { sealJson: first, calls: [] });
    // The seal is no part of the run's state.
    const after = await store.getRun(runId);
    assert.deepEqual({ ...after, status: "ACTIVE", endedAt: null }, before);
    const exported = await store.exportRun(runId);
    assert.equal(exported?.sealJson, first);
    assert.deepEqual(exported?.run, after);
    assert.deepEqual(exported?.calls, [
      { toolCallId: "call_a", record: await store.get(runId, "call_a") },
    ]);
    assert.deepEqual(await store.sealRun({ runId: "run_absent_1", sealJson: first }), {
      ok: false,
      code: "RUN_NOT_FOUND",
    });
    assert.equal(await store.getRun("run_absent_1"), null);
  });

  suite.test("exportRun() reads every begun call's whole record in begin order", async (ctx) => {
    const { store, clock } = ctx;
    const runId = await storeRun(store, clock);
    await beginAndComplete(ctx, runId, "call_z", READY);
    await beginAndComplete(ctx, runId, "call_y", null);
    await beginAndComplete(ctx, runId, "call_x", FAILED, ctx.ttlMs);
    await ctx.advance(ctx.ttlMs * 1.5);
    const exported = await store.exportRun(runId);
    assert.ok(exported !== null);
    assert.deepEqual(exported.calls.map((call) => call.toolCallId), ["call_z", "call_y", "call_x"]);
    assert.deepEqual(exported.calls[0]!.record, await store.get(runId, "call_z"));
    assert.equal(exported.calls[0]!.record?.rawJson, READY.rawJson);
    assert.equal(exported.calls[1]!.record?.status, "PROJECTING");
    // Expired: the call stays, its record is gone.
    assert.equal(exported.calls[2]!.record, null);
    assert.equal(exported.sealJson, null);
    assert.equal(await store.exportRun("run_absent_2"), null);
    assert.equal(await store.exportRun("not a run id"), null);
  });

  suite.test(
    "endRun({ seal: true }) with a page answers every completed call for the receipt, the page in toolCallIds",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      await beginAndComplete(ctx, runId, "call_1", READY);
      await beginAndComplete(ctx, runId, "call_2", FAILED);
      await beginAndComplete(ctx, runId, "call_3", NO_EVIDENCE);
      const sealed = await store.endRun({
        runId,
        now: clock(),
        page: { from: 0, limit: 1 },
        seal: true,
      });
      assert.ok(sealed.ok);
      assert.deepEqual(sealed.toolCallIds, ["call_1"]);
      assert.deepEqual(sealed.page, { next: 1, left: 1 });
      assert.deepEqual(sealed.seal?.completed, ["call_1", "call_2", "call_3"]);
      assert.equal(sealed.seal?.sealJson, null);
    },
  );
}
