import assert from "node:assert/strict";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import type { BoundaryResult, RunContext } from "@tool-boundary/core";
import { langchainTools } from "@tool-boundary/langchain";
import { langchainMiddleware } from "@tool-boundary/langchain/middleware";
import { agentFixture, CANARY_SECRET, THROWN_TEXT } from "../../../tests/support/agent_tools.ts";

const startRun = (fixture: ReturnType<typeof agentFixture>) =>
  fixture.boundary.startRun({ ttlMs: 60_000, budget: { calls: 50 } });
const ask = (content: string) => ({ messages: [{ role: "user", content }] });

/** The ToolMessages among messages, by tool_call_id. */
function toolMessages(messages: readonly BaseMessage[] | undefined): Map<string, ToolMessage> {
  const found = new Map<string, ToolMessage>();
  for (const message of messages ?? []) {
    if (ToolMessage.isInstance(message)) found.set(message.tool_call_id, message);
  }
  return found;
}

/** The parsed content of a ToolMessage. */
const body = (message: ToolMessage | undefined) => JSON.parse(String(message?.content));

/** Asserts that nothing the model received carries raw data or exception text. */
function assertNoLeak(model: { calls: readonly { messages: readonly BaseMessage[] }[] }): void {
  const seen = JSON.stringify(model.calls.map((call) => call.messages));
  assert.ok(!seen.includes(CANARY_SECRET), "raw data or exception text reached the model");
  assert.ok(!seen.includes(THROWN_TEXT));
  assert.ok(!seen.includes('"token"'));
  assert.ok(!seen.includes("    at "), "a stack trace reached the model");
}

const SIX_CALLS = [
  { name: "search_logs", args: { query: "timeout" }, id: "call_Rdy-9f2Kx1" },
  { name: "read_config", args: {}, id: "toolu_01Thr.1" },
  { name: "restart_service", args: { service: "api" }, id: "call_W:2" },
  { name: "search_logs", args: { query: 7 }, id: "call_Inv-3" },
  { name: "pair_left", args: {}, id: "call_left" },
  { name: "pair_right", args: {}, id: "call_right" },
];

Deno.test("langchainTools in createAgent answer one step of six concurrent calls with ToolMessages", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = fakeModel().respondWithTools(SIX_CALLS).respond(new AIMessage("done"));
  const agent = createAgent({ model, tools: langchainTools(fixture.boundary, run) });
  const out = await agent.invoke(ask("Why did the API fail?"));
  assert.equal(out.messages.at(-1)?.content, "done");

  const answers = toolMessages(model.calls[1]?.messages);
  assert.deepEqual([...answers.keys()].sort(), SIX_CALLS.map((c) => c.id).sort());
  const ready = answers.get("call_Rdy-9f2Kx1");
  assert.equal(ready?.status, "success");
  assert.equal(ready?.name, "search_logs");
  assert.deepEqual(body(ready), {
    evidence: "EVIDENCE_FOUND",
    scope: 'logs matching "timeout", last 24 hours',
    content: ["api 12:01:07 upstream timeout after 30s"],
  });
  assert.deepEqual(
    ready?.artifact,
    {
      status: "READY",
      toolCallId: "call_Rdy-9f2Kx1",
      evidence: "EVIDENCE_FOUND",
      scope: 'logs matching "timeout", last 24 hours',
      content: ["api 12:01:07 upstream timeout after 30s"],
    } satisfies BoundaryResult,
  );

  const codes = (id: string) => {
    const message = answers.get(id);
    return [message?.status, body(message).code, (message?.artifact as BoundaryResult).status];
  };
  assert.deepEqual(codes("toolu_01Thr.1"), ["error", "EXECUTION_FAILED", "ERROR"]);
  assert.deepEqual(codes("call_W:2"), ["error", "NOT_READ_ONLY", "ERROR"]);
  assert.deepEqual(codes("call_Inv-3"), ["error", "INVALID_INPUT", "ERROR"]);
  assert.deepEqual(body(answers.get("call_Inv-3")).issues, [{ path: "query", expected: "string" }]);
  // Each of the pair finishes only while the other runs: sequential calls would time out.
  assert.equal(body(answers.get("call_left")).evidence, "EVIDENCE_FOUND");
  assert.equal(body(answers.get("call_right")).evidence, "EVIDENCE_FOUND");

  const record = (id: string) => fixture.boundary.inspect(run.runId, id);
  assert.equal((await record("call_Rdy-9f2Kx1"))?.status, "READY");
  assert.equal((await record("toolu_01Thr.1"))?.errorCode, "EXECUTION_FAILED");
  assert.equal((await record("call_left"))?.status, "READY");
  assert.equal(await record("call_W:2"), null);
  assert.equal(await record("call_Inv-3"), null);
  assert.deepEqual(fixture.executions, {
    search_logs: 1,
    read_config: 1,
    pair_left: 1,
    pair_right: 1,
  });
  assertNoLeak(model);
});

Deno.test("langchainTools bind each tool's JSON Schema unchanged, writable ones too", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const described = fixture.boundary.describeTools();
  const tools = langchainTools(fixture.boundary, run);
  assert.deepEqual(tools.map((t) => t.name), described.map((d) => d.name));
  for (const [i, t] of tools.entries()) {
    assert.deepEqual(convertToOpenAITool(t), {
      type: "function",
      function: {
        name: described[i]?.name,
        description: described[i]?.description ?? "",
        parameters: described[i]?.inputSchema,
      },
    });
  }
});

Deno.test("langchainTools never validate before the boundary, through invoke or the old call()", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const search = langchainTools(fixture.boundary, run)[0];
  assert.equal(search?.name, "search_logs");
  const viaInvoke = await search.invoke({
    type: "tool_call",
    id: "call_typed",
    name: "search_logs",
    args: { query: ["not", "a", "string"] },
  });
  assert.ok(ToolMessage.isInstance(viaInvoke));
  assert.equal(body(viaInvoke).code, "INVALID_INPUT");
  const viaCall = await search.call({
    type: "tool_call",
    id: "call_old",
    name: "search_logs",
    args: { query: "timeout", extra: 1 },
  });
  assert.ok(ToolMessage.isInstance(viaCall));
  assert.equal(viaCall.status, "success");
  assert.deepEqual(await fixture.boundary.inspect(run.runId, "call_old").then((r) => r?.request), {
    query: "timeout",
  });

  // Plain arguments carry no call ID: the content alone, refused.
  const plain = await search.invoke({ query: "timeout" });
  assert.equal(typeof plain, "string");
  assert.equal(JSON.parse(String(plain)).code, "INVALID_TOOL_CALL_ID");
  assert.equal(fixture.executions.search_logs, 1);
});

Deno.test("LangGraph's ToolNode runs langchainTools and skips a call whose ID already has an answer", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const node = new ToolNode(langchainTools(fixture.boundary, run));
  const asked = new AIMessage({
    content: "",
    tool_calls: [
      { id: "call_node_1", name: "search_logs", args: { query: "timeout" } },
      { id: "call_node_2", name: "read_config", args: {} },
    ],
  });
  const first = await node.invoke({ messages: [asked] });
  const answers = toolMessages(first.messages);
  assert.equal(answers.get("call_node_1")?.status, "success");
  assert.equal(answers.get("call_node_2")?.status, "error");
  assert.equal(body(answers.get("call_node_2")).code, "EXECUTION_FAILED");

  // The same ID again after its answer: ToolNode drops it; the boundary never sees it.
  const again = await node.invoke({
    messages: [
      asked,
      ...first.messages,
      new AIMessage({
        content: "",
        tool_calls: [{ id: "call_node_1", name: "search_logs", args: { query: "disk" } }],
      }),
    ],
  });
  assert.deepEqual(again.messages, []);
  assert.equal(fixture.executions.search_logs, 1);
  assert.equal(fixture.events.filter((e) => e.type === "call.refused").length, 0);
});

Deno.test("createAgent sends a reused ID of a later step to the boundary, which answers DUPLICATE_TOOL_CALL", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = fakeModel()
    .respondWithTools([{ name: "search_logs", args: { query: "timeout" }, id: "call_dup" }])
    .respondWithTools([{ name: "search_logs", args: { query: "timeout" }, id: "call_dup" }])
    .respond(new AIMessage("done"));
  const agent = createAgent({ model, tools: langchainTools(fixture.boundary, run) });
  await agent.invoke(ask("go"));
  const last = model.calls[2]?.messages.filter(ToolMessage.isInstance) ?? [];
  assert.equal(last.length, 2);
  assert.equal(last[0]?.status, "success");
  assert.equal(last[1]?.status, "error");
  assert.equal(body(last[1]).code, "DUPLICATE_TOOL_CALL");
  assert.equal(fixture.executions.search_logs, 1);
  assert.equal((await fixture.boundary.inspect(run.runId, "call_dup"))?.status, "READY");
});

Deno.test("createAgent sends one ID twice in a step to the boundary: one runs, one is DUPLICATE_TOOL_CALL", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = fakeModel()
    .respondWithTools([
      { name: "search_logs", args: { query: "timeout" }, id: "call_twice" },
      { name: "search_logs", args: { query: "timeout" }, id: "call_twice" },
    ])
    .respond(new AIMessage("done"));
  const agent = createAgent({ model, tools: langchainTools(fixture.boundary, run) });
  await agent.invoke(ask("go"));
  const answers = model.calls[1]?.messages.filter(ToolMessage.isInstance) ?? [];
  assert.deepEqual(answers.map((m) => m.tool_call_id), ["call_twice", "call_twice"]);
  assert.deepEqual(answers.map((m) => body(m).code ?? m.status).sort(), [
    "DUPLICATE_TOOL_CALL",
    "success",
  ]);
  assert.equal(fixture.executions.search_logs, 1);
});

Deno.test("createAgent: an abort during a slow tool ends its record CANCELLED", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = fakeModel()
    .respondWithTools([{ name: "wait_for_abort", args: {}, id: "call_slow" }])
    .respond(new AIMessage("never reached"));
  const agent = createAgent({ model, tools: langchainTools(fixture.boundary, run) });
  const controller = new AbortController();
  fixture.slowStarted.then(() => controller.abort(new Error("user pressed stop")));

  await assert.rejects(agent.invoke(ask("go"), { signal: controller.signal }));
  const finished = await fixture.finished("call_slow");
  assert.equal(finished.type === "call.finished" && finished.code, "CANCELLED");
  assert.equal((await fixture.boundary.inspect(run.runId, "call_slow"))?.errorCode, "CANCELLED");
  assert.equal(model.calls.length, 1);
});

Deno.test("createAgent answers unknown names and malformed calls itself; the boundary never sees them", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = fakeModel()
    .respondWithTools([{ name: "no_such_tool", args: {}, id: "call_unknown" }])
    .respond(
      // Raw OpenAI-style calls: the AIMessage parses their arguments itself.
      new AIMessage({
        content: "",
        additional_kwargs: {
          tool_calls: [{
            id: "call_bad_json",
            type: "function",
            function: { name: "search_logs", arguments: "{not json" },
          }],
        },
      }),
    );
  const agent = createAgent({ model, tools: langchainTools(fixture.boundary, run) });
  const out = await agent.invoke(ask("go"));

  const unknown = toolMessages(model.calls[1]?.messages).get("call_unknown");
  assert.equal(unknown?.status, "error");
  assert.match(String(unknown?.content), /no_such_tool is not a valid tool/);
  // A call whose arguments do not parse is an invalid_tool_call, never dispatched: the turn ends.
  const last = out.messages.at(-1) as AIMessage;
  assert.deepEqual(last.tool_calls, []);
  assert.deepEqual(last.invalid_tool_calls?.map((c) => c.id), ["call_bad_json"]);
  assert.equal(model.calls.length, 2);
  assert.equal(toolMessages(out.messages).has("call_bad_json"), false);
  assert.deepEqual(fixture.events.filter((e) => e.type !== "run.started"), []);
});

Deno.test("langchainTools report tool start and end to the config's callbacks", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const seen: unknown[] = [];
  const search = langchainTools(fixture.boundary, run)[0];
  assert.ok(search !== undefined);
  await search.invoke(
    { type: "tool_call", id: "call_cb", name: "search_logs", args: { query: "timeout" } },
    {
      callbacks: [{
        handleToolStart: (_tool, input, _runId, _parent, _tags, _metadata, _name, toolCallId) => {
          seen.push(["start", input, toolCallId]);
        },
        handleToolEnd: (output) => {
          seen.push(["end", ToolMessage.isInstance(output) && output.tool_call_id]);
        },
      }],
    },
  );
  assert.deepEqual(seen, [["start", '{"query":"timeout"}', "call_cb"], ["end", "call_cb"]]);
});

Deno.test("langchainTools: a run that cannot be resolved gets a fixed answer, never the exception", async () => {
  const fixture = agentFixture();
  const model = fakeModel()
    .respondWithTools([{ name: "search_logs", args: { query: "timeout" }, id: "call_no_run" }])
    .respond(new AIMessage("done"));
  const tools = langchainTools(fixture.boundary, () => {
    throw new Error(`no run in context ${CANARY_SECRET}`);
  });
  await createAgent({ model, tools }).invoke(ask("go"));
  const answer = toolMessages(model.calls[1]?.messages).get("call_no_run");
  assert.equal(answer?.status, "error");
  assert.deepEqual(body(answer), {
    code: "EXECUTION_FAILED",
    message: "The tool failed while running.",
  });
  assertNoLeak(model);
  assert.equal(fixture.executions.search_logs, undefined);
});

Deno.test("langchainMiddleware routes every call, unknown and foreign names too, through the boundary", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  let foreignRuns = 0;
  const foreign = tool(() => {
    foreignRuns++;
    return "ran outside the boundary";
  }, { name: "local_notes", description: "Not a boundary tool.", schema: { type: "object" } });
  const model = fakeModel()
    .respondWithTools([
      { name: "search_logs", args: { query: "timeout" }, id: "call_mw_ready" },
      { name: "search_logs", args: { query: 7 }, id: "call_mw_invalid" },
      { name: "restart_service", args: {}, id: "call_mw_write" },
      { name: "read_config", args: {}, id: "call_mw_thrown" },
      { name: "local_notes", args: {}, id: "call_mw_foreign" },
      { name: "no_such_tool", args: {}, id: "call_mw_unknown" },
    ])
    .respond(new AIMessage("done"));
  const agent = createAgent({
    model,
    tools: [foreign],
    middleware: [
      langchainMiddleware<{ run: RunContext }>(fixture.boundary, ({ context }) => context!.run),
    ],
  });
  await agent.invoke(ask("go"), { context: { run } });

  const answers = toolMessages(model.calls[1]?.messages);
  const code = (id: string) => [answers.get(id)?.status, body(answers.get(id)).code];
  assert.equal(answers.get("call_mw_ready")?.status, "success");
  assert.equal(body(answers.get("call_mw_ready")).evidence, "EVIDENCE_FOUND");
  assert.deepEqual(code("call_mw_invalid"), ["error", "INVALID_INPUT"]);
  assert.deepEqual(code("call_mw_write"), ["error", "NOT_READ_ONLY"]);
  assert.deepEqual(code("call_mw_thrown"), ["error", "EXECUTION_FAILED"]);
  assert.deepEqual(code("call_mw_foreign"), ["error", "UNKNOWN_TOOL"]);
  assert.deepEqual(code("call_mw_unknown"), ["error", "UNKNOWN_TOOL"]);
  assert.equal(foreignRuns, 0);
  assert.equal((await fixture.boundary.inspect(run.runId, "call_mw_ready"))?.status, "READY");
  assert.equal(
    (await fixture.boundary.inspect(run.runId, "call_mw_thrown"))?.errorCode,
    "EXECUTION_FAILED",
  );
  assertNoLeak(model);
});

Deno.test("langchainMiddleware: an abort during a slow tool ends its record CANCELLED", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = fakeModel()
    .respondWithTools([{ name: "wait_for_abort", args: {}, id: "call_mw_slow" }])
    .respond(new AIMessage("never reached"));
  const agent = createAgent({
    model,
    tools: [],
    middleware: [langchainMiddleware(fixture.boundary, run)],
  });
  const controller = new AbortController();
  fixture.slowStarted.then(() => controller.abort(new Error("user pressed stop")));

  await assert.rejects(agent.invoke(ask("go"), { signal: controller.signal }));
  await fixture.finished("call_mw_slow");
  assert.equal((await fixture.boundary.inspect(run.runId, "call_mw_slow"))?.errorCode, "CANCELLED");
});

Deno.test("langchainMiddleware: a reused ID of a later step reaches the boundary as DUPLICATE_TOOL_CALL", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = fakeModel()
    .respondWithTools([{ name: "search_logs", args: { query: "timeout" }, id: "call_mw_dup" }])
    .respondWithTools([{ name: "search_logs", args: { query: "timeout" }, id: "call_mw_dup" }])
    .respond(new AIMessage("done"));
  const agent = createAgent({
    model,
    tools: [],
    middleware: [langchainMiddleware(fixture.boundary, run)],
  });
  await agent.invoke(ask("go"));
  const last = model.calls[2]?.messages.filter(ToolMessage.isInstance) ?? [];
  assert.deepEqual(last.map((m) => [m.tool_call_id, m.status]), [
    ["call_mw_dup", "success"],
    ["call_mw_dup", "error"],
  ]);
  assert.equal(body(last[1]).code, "DUPLICATE_TOOL_CALL");
  assert.equal(fixture.executions.search_logs, 1);
});
