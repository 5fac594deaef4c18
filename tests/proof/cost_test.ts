/**
 * A call's cost is part of its signed record: a sealed run with costed calls verifies, and a
 * reservation or spend changed in the bundle is ALTERED, naming the call. On both stores.
 */
import assert from "node:assert/strict";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { verifyRun } from "./_verify.ts";
import { STORES, uniqueId } from "../support/stores.ts";
import { keys } from "./_run.ts";

const metered = defineTool({
  name: "metered",
  readOnly: true,
  cost: (input: { tokens: number }) => input.tokens,
  execute: (input: { tokens: number; used?: number }, { settle }) => {
    if (input.used !== undefined) settle(input.used);
    return { tokens: input.used ?? input.tokens };
  },
  project: (raw: { tokens: number }) => ({
    evidence: "EVIDENCE_FOUND",
    scope: "meter",
    content: raw,
  }),
});

for (const { name, open } of STORES) {
  Deno.test(`${name}: a sealed run's costs are signed with its records; a changed cost is ALTERED`, async () => {
    const { store, close } = await open();
    try {
      const boundary = new ToolBoundary({ store, tools: [metered], ledgerKey: keys.privateKey });
      const run = await boundary.startRun({
        runId: uniqueId("run"),
        budget: { calls: 10, cost: 100 },
      });
      const calls = [
        { toolCallId: "call_settled", input: { tokens: 40, used: 12 } },
        { toolCallId: "call_reserved", input: { tokens: 30 } },
        { toolCallId: "call_excess", input: { tokens: 5, used: 9 } },
      ];
      for (const { toolCallId, input } of calls) {
        const result = await boundary.invoke(run, {
          toolCallId,
          runId: run.runId,
          toolName: "metered",
          input,
        });
        assert.equal(result.status, "READY", toolCallId);
      }
      await boundary.endRun(run);
      const bundle = await boundary.exportRun(run.runId);
      assert.deepEqual(bundle.records.map((record) => record.cost), [
        { reserved: 40, spent: 12 },
        { reserved: 30, spent: 30 },
        { reserved: 5, spent: 9 },
      ]);
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
        ok: true,
        sealed: true,
        calls: 3,
      });
      for (const [i, field] of [[0, "spent"], [1, "reserved"], [2, "spent"]] as const) {
        const tampered = structuredClone(bundle);
        tampered.records[i]!.cost![field]! -= 1;
        assert.deepEqual(await verifyRun(tampered, keys.publicKey), {
          ok: false,
          toolCallId: calls[i]!.toolCallId,
          reason: "ALTERED",
        });
      }
      const dropped = structuredClone(bundle);
      delete dropped.records[0]!.cost;
      assert.deepEqual(await verifyRun(dropped, keys.publicKey), {
        ok: false,
        toolCallId: "call_settled",
        reason: "ALTERED",
      });
    } finally {
      await close();
    }
  });
}
