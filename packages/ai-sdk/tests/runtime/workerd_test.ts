/**
 * The AI SDK adapter with the SDK's mock model, bundled, inside workerd (through miniflare).
 */
import assert from "node:assert/strict";
import { ERROR_MESSAGES } from "@tool-boundary/core";
import { CANARY_SECRET } from "@tool-boundary/core/testing";
import { serveWorker } from "../../../../tests/runtime/setup.ts";

Deno.test("workerd: generateText with aiSdkTools runs a step of tool calls through the boundary", async () => {
  await serveWorker("packages/ai-sdk/tests/worker.ts", {}, async (base) => {
    const res = await fetch(base);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.text, "answered in workerd");
    assert.deepEqual(body.outputs, [
      {
        type: "json",
        value: { evidence: "EVIDENCE_FOUND", scope: 'logs, query "edge"', content: ["12:01 edge"] },
      },
      {
        type: "error-json",
        value: { code: "EXECUTION_FAILED", message: ERROR_MESSAGES.EXECUTION_FAILED },
      },
      {
        type: "error-json",
        value: { code: "NOT_READ_ONLY", message: ERROR_MESSAGES.NOT_READ_ONLY },
      },
    ]);
    assert.deepEqual(body.records, [["READY", null], ["ERROR", "EXECUTION_FAILED"], null]);
    assert.ok(!body.prompts.includes(CANARY_SECRET));
    console.log(
      `workerd: ai ${body.outputs.length} tool results, records ${JSON.stringify(body.records)}`,
    );
  });
});
