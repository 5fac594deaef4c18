/**
 * The page of plain WebCrypto code in docs/proof.md, run exactly as written against real bundles:
 * it accepts a clean one and refuses an edited one, as verifyRun does.
 */
import assert from "node:assert/strict";
import { MemoryStore } from "../../src/memory/mod.ts";
import { verifyRun } from "../../src/verify/mod.ts";
import { keys, sealedRun } from "./_run.ts";

const doc = await Deno.readTextFile(new URL("../../docs/proof.md", import.meta.url));
const code = /<!-- verify-by-hand -->\s*```js\n([\s\S]*?)```/.exec(doc)?.[1];
assert.ok(code, "docs/proof.md has the verify-by-hand block");
const { auditRun } = await import(`data:text/javascript,${encodeURIComponent(code)}`);

Deno.test("the docs' hand-written verifier agrees with verifyRun on real bundles", async () => {
  const { boundary, runId } = await sealedRun(new MemoryStore(), { end: false });
  const open = JSON.parse(JSON.stringify(await boundary.exportRun(runId)));
  assert.equal(await auditRun(open, keys.publicKey), "OK (not sealed)");
  await boundary.endRun(runId);
  const bundle = JSON.parse(JSON.stringify(await boundary.exportRun(runId)));
  assert.equal(await auditRun(bundle, keys.publicKey), "OK");
  assert.equal((await verifyRun(bundle, keys.publicKey)).ok, true);

  const edited = structuredClone(bundle);
  edited.records[1].raw.note = "edited";
  assert.equal(await auditRun(edited, keys.publicKey), "ALTERED call_boom");
  const moved = structuredClone(bundle);
  moved.records.reverse();
  assert.equal(await auditRun(moved, keys.publicKey), "CALLS DIFFER");
  const facts = structuredClone(bundle);
  facts.facts.pop();
  assert.equal(await auditRun(facts, keys.publicKey), "FACTS_ALTERED");
  const receipt = structuredClone(bundle);
  receipt.receipt.calls.pop();
  assert.equal(await auditRun(receipt, keys.publicKey), "BAD_SIGNATURE receipt");
  const stripped = structuredClone(bundle);
  delete stripped.records[2].proof;
  assert.equal(await auditRun(stripped, keys.publicKey), "UNSIGNED call_b");
  assert.deepEqual(await verifyRun(stripped, keys.publicKey), {
    ok: false,
    toolCallId: "call_b",
    reason: "UNSIGNED",
  });
  // Another instance of the run ID: the signatures name the start.
  const restarted = structuredClone(bundle);
  restarted.run.startedAt++;
  restarted.receipt.startedAt++;
  assert.equal(await auditRun(restarted, keys.publicKey), "BAD_SIGNATURE call_a");
  assert.deepEqual(await verifyRun(restarted, keys.publicKey), {
    ok: false,
    toolCallId: null,
    reason: "BAD_SIGNATURE",
  });
});
