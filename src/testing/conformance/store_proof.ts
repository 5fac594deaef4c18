/**
 * `Store` contract: the record's proof. A complete keeps its proof exactly and every read gives
 * it back; a proof of the wrong shape is refused. Sealing a run is `RunSeal`'s (`run_seal.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { RecordProof } from "../../core/types.ts";
import type { StoreContext, Suite } from "./context.ts";
import { beginAndComplete, beginRequest, FAILED, READY, sampleProof, storeRun } from "./helpers.ts";

/** Registers the proof cases of the `Store` contract. */
export function storeProofCases(suite: Suite<StoreContext>): void {
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
}
