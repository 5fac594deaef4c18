/**
 * `Store` contract: what the ledger needs of a store. A complete keeps its proof exactly and
 * every read gives it back; `endRun({ seal: true })` lists the begun calls with their proof
 * hashes; `sealRun` keeps the first seal; `exportRun` reads a run whole.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { RecordProof } from "../../core/types.ts";
import type { StoreContext, Suite } from "./context.ts";
import { beginAndComplete, beginRequest, FAILED, READY, storeRun } from "./helpers.ts";

/** A proof of the right shape (a store checks the shape only, never the signature). */
export function sampleProof(mark: string, keyId = "key-1"): RecordProof {
  const hash = (mark + "h".repeat(43)).slice(0, 43);
  const sig = (mark + "s".repeat(86)).slice(0, 86);
  return { hash, sig, keyId };
}

/** Registers the ledger cases of the `Store` contract. */
export function storeLedgerCases(suite: Suite<StoreContext>): void {
  suite.test("complete() keeps the proof it carries exactly, and every read gives it back", async (ctx) => {
    const { store, clock } = ctx;
    const runId = await storeRun(store, clock);
    const proof = sampleProof("A-_9", "ed25519:2026-01");
    const request = beginRequest(runId, "call_p", clock);
    assert.equal((await store.begin(request)).ok, true);
    const projecting = await store.get(runId, "call_p");
    assert.equal(projecting !== null && "proof" in projecting, false);
    const complete = { runId, toolCallId: "call_p", attemptId: request.attemptId, outcome: READY };
    const done = await store.complete({ ...complete, now: clock(), proof });
    assert.ok(done.ok);
    assert.deepEqual(done.record.proof, proof);
    const read = await store.get(runId, "call_p");
    assert.deepEqual(read?.proof, proof);
    assert.deepEqual(read, done.record);
    assert.deepEqual((await store.lookupCall(runId, "call_p"))?.record?.proof, proof);
    // A repeat of the complete answers the proof stored first, whatever it carries.
    const again = await store.complete({ ...complete, now: clock(), proof: sampleProof("B") });
    assert.ok(again.ok);
    assert.deepEqual(again.record.proof, proof);
    assert.deepEqual((await store.get(runId, "call_p"))?.proof, proof);
    // What a caller does to a returned proof never reaches the store.
    try {
      (read!.proof as { hash: string }).hash = "changed";
    } catch {
      // A frozen copy is as good.
    }
    assert.deepEqual((await store.get(runId, "call_p"))?.proof, proof);
    // Without a proof, no proof member at all.
    await beginAndComplete(ctx, runId, "call_q", FAILED);
    const plain = await store.get(runId, "call_q");
    assert.equal(plain !== null && "proof" in plain, false);
  });

  suite.test("complete() refuses a proof of the wrong shape with a TypeError and writes nothing", async (ctx) => {
    const { store, clock } = ctx;
    const runId = await storeRun(store, clock);
    const request = beginRequest(runId, "call_bad", clock);
    assert.equal((await store.begin(request)).ok, true);
    const complete = {
      runId,
      toolCallId: "call_bad",
      attemptId: request.attemptId,
      outcome: READY,
    };
    const bad = [
      null,
      "proof",
      { ...sampleProof("x"), hash: "short" },
      { ...sampleProof("x"), sig: 5 },
      { ...sampleProof("x"), keyId: "" },
      { hash: sampleProof("x").hash, sig: sampleProof("x").sig },
    ];
    for (const proof of bad) {
      await assert.rejects(
        store.complete({ ...complete, now: clock(), proof: proof as unknown as RecordProof }),
        TypeError,
      );
      assert.equal((await store.get(runId, "call_bad"))?.status, "PROJECTING");
    }
  });

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
    assert.equal(typeof store.sealRun, "function");
    assert.equal(typeof store.exportRun, "function");
    const runId = await storeRun(store, clock);
    await beginAndComplete(ctx, runId, "call_a", READY);
    const before = await store.getRun(runId);
    assert.ok((await store.endRun({ runId, now: clock(), seal: true })).ok);
    const first = '{"receipt":{"sig":"one"},"facts":[],"omitted":0,"text":"\\u2028 / \\""}';
    assert.deepEqual(await store.sealRun!({ runId, sealJson: first }), {
      ok: true,
      sealJson: first,
    });
    assert.deepEqual(await store.sealRun!({ runId, sealJson: "{}" }), {
      ok: true,
      sealJson: first,
    });
    const ended = await store.endRun({ runId, now: clock(), seal: true });
    assert.ok(ended.ok);
    assert.deepEqual(ended.seal, { sealJson: first, calls: [] });
    // The seal is no part of the run's state.
    const after = await store.getRun(runId);
    assert.deepEqual({ ...after, status: "ACTIVE", endedAt: null }, before);
    const exported = await store.exportRun!(runId);
    assert.equal(exported?.sealJson, first);
    assert.deepEqual(exported?.run, after);
    assert.deepEqual(exported?.calls, [
      { toolCallId: "call_a", record: await store.get(runId, "call_a") },
    ]);
    assert.deepEqual(await store.sealRun!({ runId: "run_absent_1", sealJson: first }), {
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
    const exported = await store.exportRun!(runId);
    assert.ok(exported !== null);
    assert.deepEqual(exported.calls.map((call) => call.toolCallId), ["call_z", "call_y", "call_x"]);
    assert.deepEqual(exported.calls[0]!.record, await store.get(runId, "call_z"));
    assert.equal(exported.calls[0]!.record?.rawJson, READY.rawJson);
    assert.equal(exported.calls[1]!.record?.status, "PROJECTING");
    // Expired: the call stays, its record is gone.
    assert.equal(exported.calls[2]!.record, null);
    assert.equal(exported.sealJson, null);
    assert.equal(await store.exportRun!("run_absent_2"), null);
    assert.equal(await store.exportRun!("not a run id"), null);
  });
}
