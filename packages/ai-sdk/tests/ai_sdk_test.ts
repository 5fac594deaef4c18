import assert from "node:assert/strict";
import { generateText, isStepCount, streamText, ToolLoopAgent } from "ai";
import { MockLanguageModelV4, simulateReadableStream } from "ai/test";
import {
  type BoundaryEvent,
  type BoundaryResult,
  ERROR_MESSAGES,
  ToolBoundary,
} from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import { CANARY_SECRET } from "@tool-boundary/core/testing";
import { aiSdkTools, toModelOutput } from "../mod.ts";
import { barrier, callStep, testTools, textStep, toolCall, usage } from "./support.ts";

function setup(options: Parameters<typeof testTools>[0] = {}) {
  const events: BoundaryEvent[] = [];
  let finish: (event: BoundaryEvent) => void;
  /** The first call that ends with a record. */
  const finished = new Promise<BoundaryEvent>((resolve) => (finish = resolve));
  const boundary = new ToolBoundary({
    store: new MemoryStore(),
    tools: testTools(options),
    observe: (event) => {
      events.push(event);
      if (event.type === "call.finished") finish(event);
    },
  });
  return { boundary, events, finished };
}

/** Everything the model received over all its calls, as text. */
function seenByModel(model: MockLanguageModelV4): string {
  return JSON.stringify(model.doGenerateCalls.map((call) => [call.prompt, call.tools]));
}

function assertNoLeak(text: string): void {
  assert.ok(!text.includes(CANARY_SECRET), "the canary reached the model");
  assert.ok(!text.includes("backend refused"), "exception text reached the model");
}

/** A value as JSON carries it (the SDK's messages hold `providerOptions: undefined`). */
function plain(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

const error = (code: keyof typeof ERROR_MESSAGES) => ({
  type: "error-json",
  value: { code, message: ERROR_MESSAGES[code] },
});

Deno.test("aiSdkTools: one step's calls run concurrently, each reaching the model with its code", async () => {
  // Both search calls must be in flight at once, or neither returns before its timeout.
  const { boundary } = setup({ gate: barrier(2) });
  const run = await boundary.startRun({ runId: "run-ai-1", ttlMs: 60_000 });
  const model = new MockLanguageModelV4({
    doGenerate: [
      callStep(
        toolCall("call_Ab3-x.1", "search_logs", '{"query":"timeout"}'),
        toolCall("toolu_01A09q90qw90lq917835lq9", "search_logs", '{"query":"oom","limit":5}'),
        toolCall("call_crash", "crash", "{}"),
        toolCall("call_write", "restart_service", '{"service":"api"}'),
        toolCall("call_bad", "search_logs", '{"query":42}'),
      ),
      textStep("done"),
    ],
  });
  const result = await generateText({
    model,
    tools: aiSdkTools(boundary, run),
    prompt: "Why is the api down?",
    stopWhen: isStepCount(3),
  });
  assert.equal(result.text, "done");
  assert.equal(model.doGenerateCalls.length, 2);

  const part = (toolCallId: string, toolName: string, output: unknown) => ({
    type: "tool-result",
    toolCallId,
    toolName,
    output,
  });
  assert.deepEqual(plain(model.doGenerateCalls[1]!.prompt.at(-1)), {
    role: "tool",
    content: [
      part("call_Ab3-x.1", "search_logs", {
        type: "json",
        value: {
          evidence: "EVIDENCE_FOUND",
          scope: 'logs, query "timeout"',
          content: ["12:01 timeout"],
        },
      }),
      part("toolu_01A09q90qw90lq917835lq9", "search_logs", {
        type: "json",
        value: { evidence: "EVIDENCE_FOUND", scope: 'logs, query "oom"', content: ["12:01 oom"] },
      }),
      part("call_crash", "crash", error("EXECUTION_FAILED")),
      part("call_write", "restart_service", error("NOT_READ_ONLY")),
      part("call_bad", "search_logs", {
        type: "error-json",
        value: {
          code: "INVALID_INPUT",
          message: ERROR_MESSAGES.INVALID_INPUT,
          issues: [{ path: "query", expected: "string" }],
        },
      }),
    ],
  });

  // The records carry the framework's exact IDs; refused calls have none.
  const record = (id: string) => boundary.inspect(run.runId, id);
  const ready = await record("call_Ab3-x.1");
  assert.equal(ready?.status, "READY");
  assert.equal(ready?.toolName, "search_logs");
  assert.deepEqual(ready?.request, { query: "timeout" });
  const second = await record("toolu_01A09q90qw90lq917835lq9");
  assert.equal(second?.status, "READY");
  assert.deepEqual(second?.request, { query: "oom", limit: 5 });
  const crashed = await record("call_crash");
  assert.equal(crashed?.status, "ERROR");
  assert.equal(crashed?.errorCode, "EXECUTION_FAILED");
  assert.equal(await record("call_write"), null);
  assert.equal(await record("call_bad"), null);

  // Nothing the model received, nor the SDK's results for the app, holds raw data or errors.
  assertNoLeak(seenByModel(model));
  assertNoLeak(JSON.stringify([result.steps, result.response.messages]));
});

Deno.test("aiSdkTools: the model is offered every tool with the boundary's JSON Schema", async () => {
  const { boundary } = setup();
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const model = new MockLanguageModelV4({ doGenerate: [textStep("nothing to do")] });
  await generateText({ model, tools: aiSdkTools(boundary, run), prompt: "hi" });
  const described = boundary.describeTools();
  assert.deepEqual(
    model.doGenerateCalls[0]!.tools,
    described.map(({ name, description, inputSchema }) => ({
      type: "function",
      name,
      ...(description === undefined ? {} : { description }),
      inputSchema,
    })),
  );
  assert.deepEqual(described.map((tool) => [tool.name, tool.readOnly]), [
    ["search_logs", true],
    ["crash", true],
    ["restart_service", false],
    ["wait_for_abort", true],
  ]);
});

Deno.test("aiSdkTools: an ID the model reuses in a later step answers DUPLICATE_TOOL_CALL", async () => {
  const { boundary, events } = setup();
  const run = await boundary.startRun({ runId: "run-ai-dup", ttlMs: 60_000 });
  const model = new MockLanguageModelV4({
    doGenerate: [
      callStep(toolCall("call_dup", "search_logs", '{"query":"a"}')),
      callStep(toolCall("call_dup", "search_logs", '{"query":"a"}')),
      textStep("done"),
    ],
  });
  await generateText({
    model,
    tools: aiSdkTools(boundary, run),
    prompt: "p",
    stopWhen: isStepCount(5),
  });
  assert.equal(model.doGenerateCalls.length, 3);
  assert.deepEqual(plain(model.doGenerateCalls[1]!.prompt.at(-1)?.content), [{
    type: "tool-result",
    toolCallId: "call_dup",
    toolName: "search_logs",
    output: {
      type: "json",
      value: { evidence: "EVIDENCE_FOUND", scope: 'logs, query "a"', content: ["12:01 a"] },
    },
  }]);
  assert.deepEqual(plain(model.doGenerateCalls[2]!.prompt.at(-1)?.content), [{
    type: "tool-result",
    toolCallId: "call_dup",
    toolName: "search_logs",
    output: error("DUPLICATE_TOOL_CALL"),
  }]);
  // One execution, one record, the first one.
  assert.deepEqual(events.flatMap((e) => e.type.startsWith("call.") ? [e.type] : []), [
    "call.finished",
    "call.refused",
  ]);
  assert.equal((await boundary.inspect(run.runId, "call_dup"))?.status, "READY");
});

Deno.test("aiSdkTools: the same ID twice in one step runs once; the other call is a duplicate", async () => {
  const { boundary, events } = setup();
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const model = new MockLanguageModelV4({
    doGenerate: [
      callStep(
        toolCall("call_twin", "search_logs", '{"query":"a"}'),
        toolCall("call_twin", "search_logs", '{"query":"a"}'),
      ),
      textStep("done"),
    ],
  });
  await generateText({
    model,
    tools: aiSdkTools(boundary, run),
    prompt: "p",
    stopWhen: isStepCount(3),
  });
  const outputs =
    (model.doGenerateCalls[1]!.prompt.at(-1)?.content as { output: { type: string } }[])
      .map((part) => part.output.type === "json" ? "READY" : JSON.stringify(part.output));
  assert.deepEqual(outputs.sort(), ["READY", JSON.stringify(error("DUPLICATE_TOOL_CALL"))]);
  assert.equal(events.filter((e) => e.type === "call.finished").length, 1);
});

Deno.test("aiSdkTools: unknown names and malformed JSON are answered by the SDK, never reaching the boundary", async () => {
  const { boundary, events } = setup();
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const model = new MockLanguageModelV4({
    doGenerate: [
      callStep(
        toolCall("call_unknown", "drop_tables", "{}"),
        toolCall("call_proto", "constructor", "{}"),
        toolCall("call_json", "search_logs", "{not json"),
        toolCall("call_polluted", "search_logs", '{"__proto__":{"query":"x"}}'),
      ),
      textStep("done"),
    ],
  });
  await generateText({
    model,
    tools: aiSdkTools(boundary, run),
    prompt: "p",
    stopWhen: isStepCount(3),
  });
  const parts = model.doGenerateCalls[1]!.prompt.at(-1)?.content as {
    toolCallId: string;
    output: { type: string; value: string };
  }[];
  assert.deepEqual(parts.map((p) => [p.toolCallId, p.output.type]), [
    ["call_unknown", "error-text"],
    ["call_proto", "error-text"],
    ["call_json", "error-text"],
    ["call_polluted", "error-text"],
  ]);
  assert.match(parts[0]!.output.value, /^AI_NoSuchToolError: /);
  assert.match(parts[1]!.output.value, /^AI_NoSuchToolError: /);
  assert.match(parts[2]!.output.value, /^AI_InvalidToolInputError: /);
  assert.match(parts[3]!.output.value, /^AI_InvalidToolInputError: /);
  assert.deepEqual(events.filter((e) => e.type.startsWith("call.")), []);
});

Deno.test("aiSdkTools: streamText and ToolLoopAgent go through the boundary the same way", async () => {
  const { boundary } = setup();
  const run = await boundary.startRun({ runId: "run-ai-stream", ttlMs: 60_000 });
  const finish = (unified: "tool-calls" | "stop") => ({
    type: "finish" as const,
    finishReason: { unified, raw: undefined },
    usage,
  });
  const streamed = new MockLanguageModelV4({
    doStream: [
      {
        stream: simulateReadableStream({
          chunks: [
            { type: "stream-start", warnings: [] },
            toolCall("call_s1", "search_logs", '{"query":"s"}'),
            toolCall("call_s2", "restart_service", "{}"),
            finish("tool-calls"),
          ],
        }),
      },
      {
        stream: simulateReadableStream({
          chunks: [
            { type: "stream-start", warnings: [] },
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "streamed" },
            { type: "text-end", id: "t" },
            finish("stop"),
          ],
        }),
      },
    ],
  });
  const tools = aiSdkTools(boundary, run);
  const stream = streamText({ model: streamed, tools, prompt: "p", stopWhen: isStepCount(3) });
  assert.equal(await stream.text, "streamed");
  assert.deepEqual(
    (streamed.doStreamCalls[1]!.prompt.at(-1)?.content as { output: unknown }[]).map((p) =>
      p.output
    ),
    [
      {
        type: "json",
        value: { evidence: "EVIDENCE_FOUND", scope: 'logs, query "s"', content: ["12:01 s"] },
      },
      error("NOT_READ_ONLY"),
    ],
  );

  const model = new MockLanguageModelV4({
    doGenerate: [callStep(toolCall("call_a1", "crash", "{}")), textStep("agent done")],
  });
  const agent = new ToolLoopAgent({ model, tools, instructions: "Be brief." });
  const answer = await agent.generate({ prompt: "go" });
  assert.equal(answer.text, "agent done");
  assert.deepEqual(
    (model.doGenerateCalls[1]!.prompt.at(-1)?.content as { output: unknown }[])[0]?.output,
    error("EXECUTION_FAILED"),
  );
  assert.equal((await boundary.inspect(run.runId, "call_s1"))?.status, "READY");
  assert.equal((await boundary.inspect(run.runId, "call_a1"))?.errorCode, "EXECUTION_FAILED");
  assertNoLeak(JSON.stringify([streamed.doStreamCalls.map((c) => c.prompt), seenByModel(model)]));
});

Deno.test("aiSdkTools: an abort while a tool runs ends its record CANCELLED", async () => {
  const controller = new AbortController();
  const { boundary, finished } = setup({
    onStart: () => controller.abort(new Error("user left")),
  });
  const run = await boundary.startRun({ runId: "run-ai-abort", ttlMs: 60_000 });
  const model = new MockLanguageModelV4({
    doGenerate: [callStep(toolCall("call_slow", "wait_for_abort", "{}")), textStep("never")],
  });
  await assert.rejects(
    generateText({
      model,
      tools: aiSdkTools(boundary, run),
      prompt: "p",
      stopWhen: isStepCount(3),
      abortSignal: controller.signal,
    }),
    /user left/,
  );
  // generateText rejects at once; the boundary completes the record when the tool settles.
  assert.equal((await finished).type, "call.finished");
  assert.equal(model.doGenerateCalls.length, 1);
  const record = await boundary.inspect(run.runId, "call_slow");
  assert.equal(record?.status, "ERROR");
  assert.equal(record?.errorCode, "CANCELLED");
});

Deno.test("toModelOutput takes { output } (ai 6, 7) or the result itself (Mastra)", () => {
  const ready: BoundaryResult = {
    status: "READY",
    toolCallId: "c1",
    evidence: "NO_EVIDENCE",
    scope: "index",
    content: [],
  };
  const failed: BoundaryResult = {
    status: "ERROR",
    toolCallId: "c2",
    code: "UNAUTHORIZED",
    message: ERROR_MESSAGES.UNAUTHORIZED,
  };
  const readyOutput = {
    type: "json",
    value: { evidence: "NO_EVIDENCE", scope: "index", content: [] },
  };
  assert.deepEqual(toModelOutput({ output: ready }), readyOutput);
  assert.deepEqual(toModelOutput(ready), readyOutput);
  assert.deepEqual(toModelOutput({ output: failed }), error("UNAUTHORIZED"));
  assert.deepEqual(toModelOutput(failed), error("UNAUTHORIZED"));
  // Whatever else arrives is not shown to the model.
  for (
    const foreign of [undefined, null, "text", { output: { raw: CANARY_SECRET } }, { status: "OK" }]
  ) {
    assert.deepEqual(toModelOutput(foreign as never), error("EXECUTION_FAILED"));
  }
});
