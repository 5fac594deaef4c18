import assert from "node:assert/strict";
import { defineTool, ToolBoundary } from "../src/mod.ts";

Deno.test("invoke() refuses a raw response with a hidden throwing toJSON: SERIALIZATION_FAILED, record ERROR", async () => {
  const raw = Object.defineProperty({ hits: [] }, "toJSON", {
    enumerable: false,
    value: () => {
      throw new Error("toJSON ran");
    },
  });
  const boundary = new ToolBoundary({
    tools: [defineTool({
      name: "hidden",
      readOnly: true,
      execute: () => raw,
      project: () => ({ evidence: "NO_EVIDENCE", scope: "s", content: null }),
    })],
  });
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const result = await boundary.invoke(run, {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: "hidden",
    input: {},
  });
  assert.equal(result.status === "ERROR" && result.code, "SERIALIZATION_FAILED");
  const record = await boundary.inspect(run.runId, "call_1");
  assert.equal(record?.status, "ERROR");
  assert.equal(record?.errorCode, "SERIALIZATION_FAILED");
});
