/**
 * A Worker that runs one agent turn per request: the AI SDK's mock model calls three tools in one
 * step (READY, a throwing tool, a writable one) through `aiSdkTools`, then answers. It replies
 * with what the model received and the records, for tests/runtime/workerd_test.ts.
 */
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ToolBoundary } from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import { aiSdkTools } from "../mod.ts";
import { callStep, testTools, textStep, toolCall } from "./support.ts";

export default {
  async fetch(): Promise<Response> {
    const boundary = new ToolBoundary({ store: new MemoryStore(), tools: testTools() });
    const run = await boundary.startRun({ runId: "run-workerd", ttlMs: 60_000 });
    const model = new MockLanguageModelV4({
      doGenerate: [
        callStep(
          toolCall("call_w1", "search_logs", '{"query":"edge"}'),
          toolCall("call_w2", "crash", "{}"),
          toolCall("call_w3", "restart_service", "{}"),
        ),
        textStep("answered in workerd"),
      ],
    });
    const { text } = await generateText({
      model,
      tools: aiSdkTools(boundary, run),
      prompt: "p",
      stopWhen: isStepCount(3),
    });
    const records = [];
    for (const id of ["call_w1", "call_w2", "call_w3"]) {
      const record = await boundary.inspect(run.runId, id);
      records.push(record === null ? null : [record.status, record.errorCode]);
    }
    const toolMessage = model.doGenerateCalls[1]?.prompt.at(-1);
    return Response.json({
      text,
      outputs: toolMessage?.role === "tool"
        ? toolMessage.content.map((part) => part.type === "tool-result" ? part.output : null)
        : null,
      records,
      prompts: JSON.stringify(model.doGenerateCalls.map((call) => call.prompt)),
    });
  },
};
