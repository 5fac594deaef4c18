/**
 * Tampering with an exported bundle: every field of every record, a record deleted, inserted or
 * moved, the facts, the receipt, another key. Each is caught with its reason and the call it
 * names; a clean bundle verifies. On both stores.
 */
import assert from "node:assert/strict";
import type { RunBundle } from "../../src/harness/mod.ts";
import { verifyRun } from "./_verify.ts";
import { STORES } from "../support/stores.ts";
import { CALLS, changed, keys, otherKeys, sealedRun } from "./_run.ts";

const ids = CALLS.map((call) => call.toolCallId);

for (const { name, open } of STORES) {
  Deno.test(`${name}: a clean sealed bundle verifies, also after a JSON round trip`, async () => {
    const { store, close } = await open();
    try {
      const { boundary, runId } = await sealedRun(store);
      const bundle = await boundary.exportRun(runId);
      assert.equal(bundle.format, "tool-boundary.run/1");
      assert.deepEqual(bundle.records.map((r) => r.toolCallId), ids);
      for (const record of bundle.records) {
        assert.deepEqual(record, { ...await boundary.inspect(runId, record.toolCallId) });
      }
      assert.equal(bundle.records[1]?.status, "ERROR");
      assert.deepEqual(bundle.records[1]?.raw, {
        failed: true,
        note: 'ünïcode \u2028 "quoted"',
      });
      assert.deepEqual(bundle.facts, await boundary.endRun(runId));
      assert.deepEqual(
        bundle.receipt?.calls,
        bundle.records.map((r) => ({ toolCallId: r.toolCallId, hash: r.proof!.hash })),
      );
      const ok = { ok: true, sealed: true, calls: 3 };
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), ok);
      assert.deepEqual(await verifyRun(JSON.parse(JSON.stringify(bundle)), keys.publicKey), ok);
      // The same receipt on every later end and export.
      assert.deepEqual((await boundary.endRunReport(runId)).receipt, bundle.receipt);
      assert.deepEqual(await boundary.exportRun(runId), bundle);
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: any field of any record changed in the bundle is ALTERED, naming the call`, async () => {
    const { store, close } = await open();
    try {
      const { boundary, runId } = await sealedRun(store);
      const clean = await boundary.exportRun(runId);
      let cases = 0;
      for (let i = 0; i < clean.records.length; i++) {
        const fields = Object.keys(clean.records[i]!).filter((f) => f !== "proof");
        assert.ok(fields.length >= 11);
        for (const field of [...fields, "raw", "added"]) {
          const bundle = structuredClone(clean);
          const record = bundle.records[i] as unknown as Record<string, unknown>;
          if (field === "raw" && fields.includes("raw")) delete record.raw;
          else record[field] = changed(record[field]);
          assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
            ok: false,
            toolCallId: ids[i],
            reason: "ALTERED",
          }, `${ids[i]}.${field}`);
          cases++;
        }
        for (
          const [field, reason] of [["hash", "ALTERED"], ["sig", "BAD_SIGNATURE"], [
            "keyId",
            "BAD_SIGNATURE",
          ]] as const
        ) {
          const bundle = structuredClone(clean);
          const proof = bundle.records[i]!.proof as unknown as Record<string, unknown>;
          proof[field] = field === "sig" ? flip(proof.sig as string) : changed(proof[field]);
          assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
            ok: false,
            toolCallId: ids[i],
            reason,
          }, `${ids[i]}.proof.${field}`);
        }
        const stripped = structuredClone(clean);
        delete stripped.records[i]!.proof;
        assert.deepEqual(await verifyRun(stripped, keys.publicKey), {
          ok: false,
          toolCallId: ids[i],
          reason: "UNSIGNED",
        });
      }
      assert.ok(cases >= 36);
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: a record deleted, inserted or moved in the bundle is caught`, async () => {
    const { store, close } = await open();
    try {
      const { boundary, runId } = await sealedRun(store);
      const other = await sealedRun(store);
      const clean = await boundary.exportRun(runId);
      const elsewhere = (await other.boundary.exportRun(other.runId)).records;
      const verdict = async (edit: (records: RunBundle["records"]) => void) => {
        const bundle = structuredClone(clean);
        edit(bundle.records);
        return await verifyRun(bundle, keys.publicKey);
      };
      const fail = (toolCallId: string, reason: string) => ({ ok: false, toolCallId, reason });
      for (let i = 0; i < ids.length; i++) {
        assert.deepEqual(
          await verifyRun(
            { ...clean, records: clean.records.filter((_, j) => j !== i) },
            keys.publicKey,
          ),
          fail(ids[i]!, "MISSING"),
        );
      }
      // Inserted: a record of another run signed by the same key, under a new ID or the same.
      const foreign = { ...elsewhere[0]!, toolCallId: "call_new" };
      assert.deepEqual(await verdict((r) => r.splice(1, 0, foreign)), fail("call_new", "INSERTED"));
      assert.deepEqual(await verdict((r) => r.push(elsewhere[0]!)), fail("call_a", "INSERTED"));
      assert.deepEqual(await verdict((r) => r.splice(1, 0, r[0]!)), fail("call_a", "INSERTED"));
      // A record of another run in its place: its hash is not the receipt's.
      assert.deepEqual(await verdict((r) => (r[0] = elsewhere[0]!)), fail("call_a", "ALTERED"));
      // Moved.
      assert.deepEqual(await verdict((r) => r.reverse()), fail("call_a", "REORDERED"));
      assert.deepEqual(await verdict((r) => r.push(r.shift()!)), fail("call_a", "REORDERED"));
      assert.deepEqual(
        await verdict((r) => ([r[1], r[2]] = [r[2]!, r[1]!])),
        fail("call_boom", "REORDERED"),
      );
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: facts or receipt changed, or another key, are caught`, async () => {
    const { store, close } = await open();
    try {
      const { boundary, runId } = await sealedRun(store);
      const clean = await boundary.exportRun(runId);
      const factsAltered = { ok: false, toolCallId: null, reason: "FACTS_ALTERED" };
      const badReceipt = { ok: false, toolCallId: null, reason: "BAD_SIGNATURE" };
      const withFacts = async (facts: unknown) =>
        await verifyRun({ ...structuredClone(clean), facts }, keys.publicKey);
      assert.equal(clean.facts?.length, 2);
      assert.deepEqual(await withFacts(clean.facts!.slice(1)), factsAltered);
      assert.deepEqual(await withFacts([...clean.facts!].reverse()), factsAltered);
      assert.deepEqual(await withFacts(null), factsAltered);
      for (const field of ["toolCallId", "toolName", "kind", "scope", "content", "observedAt"]) {
        const facts = structuredClone(clean.facts!) as unknown as Record<string, unknown>[];
        facts[0]![field] = changed(facts[0]![field]);
        assert.deepEqual(await withFacts(facts), factsAltered, field);
      }
      for (const field of ["runId", "calls", "factsHash", "keyId", "sig"] as const) {
        const bundle = structuredClone(clean);
        const receipt = bundle.receipt as unknown as Record<string, unknown>;
        receipt[field] = field === "sig" ? flip(receipt.sig as string) : changed(receipt[field]);
        assert.deepEqual(await verifyRun(bundle, keys.publicKey), badReceipt, field);
      }
      const calls = structuredClone(clean);
      (calls.receipt!.calls[1] as { hash: string | null }).hash = null;
      assert.deepEqual(await verifyRun(calls, keys.publicKey), badReceipt);
      // The run's own ID must be the receipt's.
      const moved = structuredClone(clean);
      moved.run.runId = "run_elsewhere";
      assert.deepEqual(await verifyRun(moved, keys.publicKey), badReceipt);
      // Another key: the auditor's key does not check an attacker's signatures.
      assert.deepEqual(await verifyRun(clean, otherKeys.publicKey), badReceipt);
      const resigned = await sealedRun(store, { ledgerKey: otherKeys.privateKey });
      const forged = await resigned.boundary.exportRun(resigned.runId);
      assert.deepEqual(await verifyRun(forged, keys.publicKey), badReceipt);
      assert.deepEqual(await verifyRun(forged, otherKeys.publicKey), {
        ok: true,
        sealed: true,
        calls: 3,
      });
      // An attacker's record, with its own valid proof, in place of a real one.
      const swapped = structuredClone(clean);
      swapped.records[1] = { ...forged.records[1]!, runId };
      assert.deepEqual(await verifyRun(swapped, keys.publicKey), {
        ok: false,
        toolCallId: "call_boom",
        reason: "ALTERED",
      });
      // An explicit keyId must match the one the proofs name.
      assert.deepEqual(
        await verifyRun(clean, keys.publicKey, { keyId: "another-id" }),
        badReceipt,
      );
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: a run not yet ended verifies each record's own signature`, async () => {
    const { store, close } = await open();
    try {
      const { boundary, runId } = await sealedRun(store, { end: false });
      const bundle = await boundary.exportRun(runId);
      assert.equal(bundle.receipt, null);
      assert.equal(bundle.facts, null);
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
        ok: true,
        sealed: false,
        calls: 3,
      });
      const altered = structuredClone(bundle);
      altered.records[2]!.createdAt++;
      assert.deepEqual(await verifyRun(altered, keys.publicKey), {
        ok: false,
        toolCallId: "call_b",
        reason: "ALTERED",
      });
      const twice = structuredClone(bundle);
      twice.records.push(twice.records[0]!);
      assert.deepEqual(await verifyRun(twice, keys.publicKey), {
        ok: false,
        toolCallId: "call_a",
        reason: "INSERTED",
      });
      const unsigned = structuredClone(bundle);
      delete unsigned.records[0]!.proof;
      assert.deepEqual(await verifyRun(unsigned, keys.publicKey), {
        ok: false,
        toolCallId: "call_a",
        reason: "UNSIGNED",
      });
      assert.deepEqual(await verifyRun({ ...bundle, facts: [] }, keys.publicKey), {
        ok: false,
        toolCallId: null,
        reason: "FACTS_ALTERED",
      });
      // Before the seal, each record's signed position shows a gap or a move.
      const middle = { ...bundle, records: bundle.records.filter((_, i) => i !== 1) };
      assert.deepEqual(await verifyRun(middle, keys.publicKey), {
        ok: false,
        toolCallId: null,
        reason: "MISSING",
        seq: 2,
      });
      const swapped = {
        ...bundle,
        records: [bundle.records[0]!, bundle.records[2]!, bundle.records[1]!],
      };
      assert.deepEqual(await verifyRun(swapped, keys.publicKey), {
        ok: false,
        toolCallId: "call_boom",
        reason: "REORDERED",
      });
      const renumbered = structuredClone(bundle);
      renumbered.records[2]!.seq = 4;
      assert.deepEqual(await verifyRun(renumbered, keys.publicKey), {
        ok: false,
        toolCallId: "call_b",
        reason: "ALTERED",
      });
    } finally {
      await close();
    }
  });
}

/** A signature with one character changed, still of the right length and alphabet. */
function flip(sig: string): string {
  return (sig[0] === "A" ? "B" : "A") + sig.slice(1);
}
