import assert from "node:assert/strict";
import { type BoundaryResult, ERROR_MESSAGES, modelView, modelViewText } from "../../src/mod.ts";
import { toModelOutput } from "../../packages/ai-sdk/mod.ts";
import { toToolMessage } from "../../packages/langchain/tool_message.ts";

const READY: BoundaryResult = {
  status: "READY",
  toolCallId: "call_1",
  evidence: "EVIDENCE_FOUND",
  scope: "logs of api, last hour",
  content: { lines: ["12:01 timeout"] },
};
const INVALID: BoundaryResult = {
  status: "ERROR",
  toolCallId: "call_2",
  code: "INVALID_INPUT",
  message: ERROR_MESSAGES.INVALID_INPUT,
  // An issue carrying more than its path and expectation (a value) is cut down to those two.
  issues: [{ path: "query", expected: "string", value: "secret" } as never],
};

Deno.test("modelView shows READY's projection only, without status, ID or replay mark", () => {
  assert.deepEqual(modelView({ ...READY, replayed: true }), {
    evidence: "EVIDENCE_FOUND",
    scope: "logs of api, last hour",
    content: { lines: ["12:01 timeout"] },
  });
});

Deno.test("modelView shows ERROR's code, the code's fixed message and issues as path and expected", () => {
  assert.deepEqual(modelView(INVALID), {
    code: "INVALID_INPUT",
    message: ERROR_MESSAGES.INVALID_INPUT,
    issues: [{ path: "query", expected: "string" }],
  });
  const forged = {
    ...INVALID,
    code: "TOOL_TIMEOUT",
    message: "db at 10.0.0.7 refused",
    issues: undefined,
  };
  assert.deepEqual(modelView(forged), {
    code: "TOOL_TIMEOUT",
    message: ERROR_MESSAGES.TOOL_TIMEOUT,
  });
});

Deno.test("modelView shows anything that is not a boundary result as EXECUTION_FAILED", () => {
  const failed = { code: "EXECUTION_FAILED", message: ERROR_MESSAGES.EXECUTION_FAILED };
  for (const value of [null, undefined, 7, "READY", new Error("token=abc"), { status: "DONE" }]) {
    assert.deepEqual(modelView(value), failed);
  }
  assert.deepEqual(modelView({ status: "ERROR", code: "NOT_A_CODE", message: "x" }), failed);
  assert.equal(modelViewText(null), JSON.stringify(failed));
});

Deno.test("the adapters show the model exactly the model view, each in its own envelope", () => {
  for (const result of [READY, INVALID, { ...READY, replayed: true as const }]) {
    const view = modelView(result);
    const output = toModelOutput(result);
    assert.deepEqual(
      output.type === "json" || output.type === "error-json" ? output.value : null,
      view,
    );
    assert.equal(output.type, result.status === "READY" ? "json" : "error-json");
    const message = toToolMessage(result, result.toolCallId ?? "x", "search");
    assert.deepEqual(JSON.parse(String(message.content)), view);
    assert.equal(modelViewText(result), JSON.stringify(view));
  }
});
