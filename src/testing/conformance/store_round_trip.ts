/**
 * `Store` contract: IDs and JSON text come back exactly as they went in.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { CompleteOutcome } from "../../core/store.ts";
import type { StoreContext, Suite } from "./context.ts";
import { beginRequest, storeRun } from "./helpers.ts";

/** Registers the round-trip cases of the `Store` contract. */
export function storeRoundTripCases(suite: Suite<StoreContext>): void {
  suite.test(
    "IDs and payloads that look like JSON scalars round-trip exactly, as strings",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const awkward = ["123", "true", "null", "007", "1e3", '{"a":1}', '"quoted"', "[1,2]", "-0"];
      for (const [i, text] of awkward.entries()) {
        const toolCallId = /^[A-Za-z0-9_.:-]+$/.test(text) ? text : `call_${i}`;
        const request = beginRequest(runId, toolCallId, clock, {
          requestJson: JSON.stringify({ value: text }),
          toolName: text.replace(/[^a-z0-9]/gi, "_") || "t",
        });
        assert.ok((await store.begin(request)).ok, text);
        const outcome: CompleteOutcome = {
          status: "READY",
          evidence: "NO_EVIDENCE",
          rawJson: text,
          agentResultJson: JSON.stringify({ evidence: "NO_EVIDENCE", scope: text, content: text }),
        };
        const done = await store.complete({
          runId,
          toolCallId,
          attemptId: request.attemptId,
          outcome,
          now: clock(),
        });
        assert.ok(done.ok, text);
        const stored = await store.get(runId, toolCallId);
        assert.equal(stored?.toolCallId, toolCallId);
        assert.equal(typeof stored?.toolCallId, "string");
        assert.equal(stored?.rawJson, text);
        assert.equal(stored?.requestJson, request.requestJson);
        assert.equal(stored?.toolName, request.toolName);
        assert.equal(typeof stored?.createdAt, "number");
      }
    },
  );

  suite.test(
    "request JSON with non-ASCII text, escapes and lone surrogates round-trips byte for byte",
    async ({ store, clock }) => {
      const runId = await storeRun(store, clock);
      const unicode = '{"text":"naïve 日本 😀 \\u0000 \\ud800"}';
      const request = beginRequest(runId, "call_unicode", clock, { requestJson: unicode });
      assert.ok((await store.begin(request)).ok);
      assert.equal((await store.get(runId, "call_unicode"))?.requestJson, unicode);
    },
  );
}
