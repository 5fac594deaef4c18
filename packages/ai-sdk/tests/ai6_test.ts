/**
 * The same tool set under `ai` 6 (its own generateText and MockLanguageModelV3). The adapter is
 * built with `ai` 7's `tool` and `jsonSchema`, which ai 6 accepts at run time; its types are
 * ai 7's, hence the cast an ai 6 project needs too.
 */
import assert from "node:assert/strict";
import { generateText, stepCountIs, type ToolSet } from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { ERROR_MESSAGES, ToolBoundary } from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import { CANARY_SECRET } from "@tool-boundary/core/testing";
import { aiSdkTools } from "../mod.ts";
import { callStep, testTools, textStep, toolCall } from "./support.ts";

Deno.test("ai 6: generateText gets the boundary's results and error results the same way", async () => {
  const boundary = new ToolBoundary({ store: new MemoryStore(), tools: testTools() });
  const run = await boundary.startRun({ runId: "run-ai6", ttlMs: 60_000 });
  const model = new MockLanguageModelV3({
    doGenerate: [
      callStep(
        toolCall("call_6a", "search_logs", '{"query":"six"}'),
        toolCall("call_6b", "crash", "{}"),
        toolCall("call_6c", "search_logs", "{}"),
      ),
      textStep("done in ai 6"),
    ],
  });
  const result = await generateText({
    model,
    tools: aiSdkTools(boundary, run) as unknown as ToolSet,
    prompt: "p",
    stopWhen: stepCountIs(3),
  });
  assert.equal(result.text, "done in ai 6");
  const message = model.doGenerateCalls[1]?.prompt.at(-1);
  assert.equal(message?.role, "tool");
  const outputs = message?.role === "tool"
    ? message.content.map((part) => part.type === "tool-result" ? part.output : null)
    : [];
  assert.deepEqual(outputs, [
    {
      type: "json",
      value: { evidence: "EVIDENCE_FOUND", scope: 'logs, query "six"', content: ["12:01 six"] },
    },
    {
      type: "error-json",
      value: { code: "EXECUTION_FAILED", message: ERROR_MESSAGES.EXECUTION_FAILED },
    },
    {
      type: "error-json",
      value: {
        code: "INVALID_INPUT",
        message: ERROR_MESSAGES.INVALID_INPUT,
        issues: [{ path: "query", expected: '"query"' }],
      },
    },
  ]);
  assert.equal((await boundary.inspect(run.runId, "call_6a"))?.status, "READY");
  assert.equal((await boundary.inspect(run.runId, "call_6b"))?.errorCode, "EXECUTION_FAILED");
  assert.ok(!JSON.stringify(model.doGenerateCalls.map((c) => c.prompt)).includes(CANARY_SECRET));
});
