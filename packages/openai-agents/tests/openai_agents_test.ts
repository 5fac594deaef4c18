import assert from "node:assert/strict";
import {
  Agent,
  type AgentInputItem,
  ModelBehaviorError,
  RunContext as AgentsRunContext,
  Runner,
  RunState,
  tool,
} from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents-core/testing";
import { defineTool, type RunContext, ToolBoundary } from "@tool-boundary/core";
import { openaiAgentsTools } from "@tool-boundary/openai-agents";
import { agentFixture, CANARY_SECRET, THROWN_TEXT } from "../../../tests/support/agent_tools.ts";

const runner = () => new Runner({ tracingDisabled: true });
const startRun = (fixture: ReturnType<typeof agentFixture>) =>
  fixture.boundary.startRun({ ttlMs: 60_000, budget: { calls: 50 } });

/** What the model got back for each call ID: the function_call_result texts, JSON parsed. */
function toolResults(input: string | AgentInputItem[] | undefined): Map<string, unknown> {
  const results = new Map<string, unknown>();
  for (const item of Array.isArray(input) ? input : []) {
    if (item.type !== "function_call_result") continue;
    const output = item.output;
    assert.ok(typeof output === "object" && !Array.isArray(output) && output.type === "text");
    results.set(item.callId, output.text.startsWith("{") ? JSON.parse(output.text) : output.text);
  }
  return results;
}

/** Everything every model call received, as one text for the leak checks. */
function everythingTheModelSaw(model: ScriptedModel): string {
  return JSON.stringify(model.calls.map((call) => call.request));
}

Deno.test("openaiAgentsTools answers one step of six concurrent calls, each with its own code", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const ids = {
    ready: "call_Rdy-9f2Kx1",
    thrown: "call_Thr.1",
    writable: "call_W:2",
    invalid: "call_Inv-3",
    left: "call_left",
    right: "call_right",
  };
  const model = new ScriptedModel([
    [
      functionCall("search_logs", { query: "timeout" }, { callId: ids.ready }),
      functionCall("read_config", {}, { callId: ids.thrown }),
      functionCall("restart_service", { service: "api" }, { callId: ids.writable }),
      functionCall("search_logs", { query: 7 }, { callId: ids.invalid }),
      functionCall("pair_left", {}, { callId: ids.left }),
      functionCall("pair_right", {}, { callId: ids.right }),
    ],
    [assistantMessage("done")],
  ]);
  const agent = new Agent({ name: "ops", model, tools: openaiAgentsTools(fixture.boundary, run) });
  const result = await runner().run(agent, "Why did the API fail?");
  assert.equal(result.finalOutput, "done");
  model.assertComplete();

  const results = toolResults(model.calls[1]?.request.input);
  assert.deepEqual(results.get(ids.ready), {
    evidence: "EVIDENCE_FOUND",
    scope: 'logs matching "timeout", last 24 hours',
    content: ["api 12:01:07 upstream timeout after 30s"],
  });
  assert.deepEqual(results.get(ids.thrown), {
    code: "EXECUTION_FAILED",
    message: "The tool failed while running.",
  });
  assert.equal((results.get(ids.writable) as { code: string }).code, "NOT_READ_ONLY");
  assert.deepEqual(results.get(ids.invalid), {
    code: "INVALID_INPUT",
    message: "The tool input must be a JSON object that matches the tool's input schema.",
    issues: [{ path: "query", expected: "string" }],
  });
  // Each of the pair finishes only while the other runs: sequential calls would time out.
  assert.equal((results.get(ids.left) as { evidence: string }).evidence, "EVIDENCE_FOUND");
  assert.equal((results.get(ids.right) as { evidence: string }).evidence, "EVIDENCE_FOUND");
  assert.equal(results.size, 6);

  // The records carry the SDK's call IDs byte for byte.
  const record = (id: string) => fixture.boundary.inspect(run.runId, id);
  assert.equal((await record(ids.ready))?.status, "READY");
  assert.deepEqual((await record(ids.ready))?.request, { query: "timeout" });
  assert.equal((await record(ids.thrown))?.errorCode, "EXECUTION_FAILED");
  assert.equal((await record(ids.left))?.status, "READY");
  assert.equal((await record(ids.right))?.status, "READY");
  // Refused in preflight: no record, and the writable tool never ran.
  assert.equal(await record(ids.writable), null);
  assert.equal(await record(ids.invalid), null);
  assert.deepEqual(fixture.executions, {
    search_logs: 1,
    read_config: 1,
    pair_left: 1,
    pair_right: 1,
  });

  const seen = everythingTheModelSaw(model);
  assert.ok(!seen.includes(CANARY_SECRET), "raw data or exception text reached the model");
  assert.ok(!seen.includes(THROWN_TEXT));
  assert.ok(!seen.includes('"token"'));
});

Deno.test("openaiAgentsTools sends each tool's JSON Schema unchanged, non-strict, writable ones too", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = new ScriptedModel([[assistantMessage("nothing to do")]]);
  const tools = openaiAgentsTools(fixture.boundary, run);
  await runner().run(new Agent({ name: "ops", model, tools }), "hi");

  const sent = model.calls[0]?.request.tools ?? [];
  const described = fixture.boundary.describeTools();
  assert.deepEqual(sent.map((t) => t.name), described.map((d) => d.name));
  for (const d of described) {
    const t = sent.find((s) => s.name === d.name);
    assert.ok(t !== undefined && t.type === "function");
    assert.equal(t.strict, false);
    assert.deepEqual(t.parameters, d.inputSchema);
    assert.equal(t.description, d.description ?? "");
  }
  assert.deepEqual(described.find((d) => d.name === "search_logs")?.inputSchema, {
    type: "object",
    properties: { query: { type: "string" } },
    required: ["query"],
  });
});

Deno.test("openaiAgentsTools reads the run from the run context across a RunState round trip", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  let approvals = 0;
  const confirm = tool({
    name: "confirm_plan",
    description: "Asks a human to confirm.",
    parameters: { type: "object", properties: {}, required: [], additionalProperties: true },
    strict: false,
    needsApproval: true,
    execute: () => {
      approvals++;
      return "confirmed";
    },
  });
  const model = new ScriptedModel([
    [functionCall("confirm_plan", {}, { callId: "call_confirm" })],
    [functionCall("search_logs", { query: "timeout" }, { callId: "call_after_resume" })],
    [assistantMessage("done")],
  ]);
  const runsSeen: RunContext[] = [];
  const makeAgent = () =>
    new Agent<{ run: RunContext }>({
      name: "ops",
      model,
      tools: [
        confirm,
        ...openaiAgentsTools<{ run: RunContext }>(fixture.boundary, (ctx) => {
          runsSeen.push(ctx.context.run);
          return ctx.context.run;
        }),
      ],
    });

  const first = await runner().run(makeAgent(), "Check the logs once confirmed.", {
    context: { run },
  });
  assert.equal(first.interruptions.length, 1);
  const saved = first.state.toString();
  assert.ok(saved.includes(run.runId));

  // A new agent and runner, as another process would build them; the run is only in the state.
  const state = await RunState.fromString(makeAgent(), saved);
  const interruption = state.getInterruptions()[0];
  assert.ok(interruption !== undefined);
  state.approve(interruption);
  const resumed = await runner().run(makeAgent(), state);
  assert.equal(resumed.finalOutput, "done");
  assert.equal(approvals, 1);

  // The tool got the run back from the serialized state: a copy, not the object passed in.
  assert.equal(runsSeen.length, 1);
  assert.notEqual(runsSeen[0], run);
  assert.deepEqual(runsSeen[0], { ...run });
  const record = await fixture.boundary.inspect(run.runId, "call_after_resume");
  assert.equal(record?.status, "READY");
  assert.equal(record?.runId, run.runId);
  const results = toolResults(model.calls[2]?.request.input);
  assert.equal(
    (results.get("call_after_resume") as { evidence: string }).evidence,
    "EVIDENCE_FOUND",
  );
});

Deno.test("openaiAgentsTools: an abort during a slow tool ends its record CANCELLED", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = new ScriptedModel([
    [functionCall("wait_for_abort", {}, { callId: "call_slow" })],
    [assistantMessage("never reached")],
  ]);
  const agent = new Agent({ name: "ops", model, tools: openaiAgentsTools(fixture.boundary, run) });
  const controller = new AbortController();
  fixture.slowStarted.then(() => controller.abort(new Error("user pressed stop")));

  await assert.rejects(runner().run(agent, "go", { signal: controller.signal }));
  const finished = await fixture.finished("call_slow");
  assert.equal(finished.type === "call.finished" && finished.code, "CANCELLED");
  const record = await fixture.boundary.inspect(run.runId, "call_slow");
  assert.equal(record?.status, "ERROR");
  assert.equal(record?.errorCode, "CANCELLED");
  assert.equal(model.calls.length, 1);
});

Deno.test("openaiAgentsTools: the SDK answers a reused call ID itself, the boundary runs it once", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  // Same ID and arguments in a later step: the SDK reuses its committed output.
  const model = new ScriptedModel([
    [functionCall("search_logs", { query: "timeout" }, { callId: "call_dup" })],
    [functionCall("search_logs", { query: "timeout" }, { callId: "call_dup" })],
    [assistantMessage("done")],
  ]);
  const agent = new Agent({ name: "ops", model, tools: openaiAgentsTools(fixture.boundary, run) });
  assert.equal((await runner().run(agent, "go")).finalOutput, "done");
  assert.equal(fixture.executions.search_logs, 1);
  assert.equal(fixture.events.filter((e) => e.type === "call.refused").length, 0);

  // Same ID, other arguments: the SDK fails the run before any tool runs.
  const other = new ScriptedModel([
    [functionCall("search_logs", { query: "timeout" }, { callId: "call_dup2" })],
    [functionCall("search_logs", { query: "disk" }, { callId: "call_dup2" })],
    [assistantMessage("done")],
  ]);
  const agent2 = new Agent({
    name: "ops",
    model: other,
    tools: openaiAgentsTools(fixture.boundary, run),
  });
  await assert.rejects(runner().run(agent2, "go"), ModelBehaviorError);
  assert.equal(fixture.executions.search_logs, 2);
  assert.deepEqual((await fixture.boundary.inspect(run.runId, "call_dup2"))?.request, {
    query: "timeout",
  });
});

Deno.test("openaiAgentsTools: the SDK folds one ID sent twice in a step into one call", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = new ScriptedModel([
    [
      functionCall("search_logs", { query: "timeout" }, { callId: "call_twice" }),
      functionCall("search_logs", { query: "timeout" }, { callId: "call_twice" }),
    ],
    [assistantMessage("done")],
  ]);
  const agent = new Agent({ name: "ops", model, tools: openaiAgentsTools(fixture.boundary, run) });
  assert.equal((await runner().run(agent, "go")).finalOutput, "done");
  const input = model.calls[1]?.request.input;
  const items = Array.isArray(input) ? input.map((i) => i.type) : [];
  assert.deepEqual(items, ["message", "function_call", "function_call_result"]);
  assert.equal(fixture.executions.search_logs, 1);
  assert.deepEqual(fixture.events.map((e) => e.type), ["run.started", "call.finished"]);

  // With other arguments, the SDK fails the run before any tool runs.
  const other = new ScriptedModel([[
    functionCall("search_logs", { query: "timeout" }, { callId: "call_twice2" }),
    functionCall("search_logs", { query: "disk" }, { callId: "call_twice2" }),
  ]]);
  const agent2 = new Agent({
    name: "ops",
    model: other,
    tools: openaiAgentsTools(fixture.boundary, run),
  });
  await assert.rejects(runner().run(agent2, "go"), ModelBehaviorError);
  assert.equal(fixture.executions.search_logs, 1);
});

Deno.test("openaiAgentsTools: malformed JSON and unknown names are answered by the SDK, not the boundary", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const model = new ScriptedModel([
    [functionCall("search_logs", "{not json", { callId: "call_bad_json" })],
    [functionCall("no_such_tool", {}, { callId: "call_unknown" })],
    [assistantMessage("done")],
  ]);
  const agent = new Agent({ name: "ops", model, tools: openaiAgentsTools(fixture.boundary, run) });
  const result = await runner().run(agent, "go", { toolNotFoundBehavior: "return_error_to_model" });
  assert.equal(result.finalOutput, "done");

  const last = model.calls[2]?.request.input;
  const texts = Array.isArray(last)
    ? last.filter((i) => i.type === "function_call_result").map((i) => JSON.stringify(i.output))
    : [];
  assert.equal(texts.length, 2);
  assert.ok(texts[0]?.includes("An error occurred while parsing tool arguments"));
  assert.ok(texts[1]?.includes("not found"));
  assert.deepEqual(fixture.events.filter((e) => e.type !== "run.started"), []);
  assert.equal(await fixture.boundary.inspect(run.runId, "call_bad_json"), null);

  // Without that option an unknown name fails the run.
  const strictModel = new ScriptedModel([[
    functionCall("no_such_tool", {}, { callId: "call_u2" }),
  ]]);
  const agent2 = new Agent({
    name: "ops",
    model: strictModel,
    tools: openaiAgentsTools(fixture.boundary, run),
  });
  await assert.rejects(runner().run(agent2, "go"), ModelBehaviorError);
  assert.deepEqual(fixture.events.filter((e) => e.type !== "run.started"), []);
});

Deno.test("openaiAgentsTools: a call without the SDK's details has no call ID and is refused", async () => {
  const fixture = agentFixture();
  const run = await startRun(fixture);
  const search = openaiAgentsTools(fixture.boundary, run).find((t) => t.name === "search_logs");
  assert.ok(search !== undefined);
  const output = await search.invoke(new AgentsRunContext({}), '{"query":"timeout"}');
  assert.equal(JSON.parse(String(output)).code, "INVALID_TOOL_CALL_ID");
  assert.equal(fixture.executions.search_logs, undefined);
});

Deno.test("openaiAgentsTools: a run that cannot be resolved gets a fixed text, never the exception", async () => {
  const fixture = agentFixture();
  const model = new ScriptedModel([
    [functionCall("search_logs", { query: "timeout" }, { callId: "call_no_run" })],
    [assistantMessage("done")],
  ]);
  const tools = openaiAgentsTools(fixture.boundary, () => {
    throw new Error(`no run in context ${CANARY_SECRET}`);
  });
  await runner().run(new Agent({ name: "ops", model, tools }), "go");
  assert.deepEqual(toolResults(model.calls[1]?.request.input).get("call_no_run"), {
    code: "EXECUTION_FAILED",
    message: "The tool failed while running.",
  });
  assert.ok(!everythingTheModelSaw(model).includes(CANARY_SECRET));
  assert.equal(fixture.executions.search_logs, undefined);
});

Deno.test("openaiAgentsTools refuses two tool names that the SDK would make the same", async () => {
  const make = (name: string) =>
    defineTool({
      name,
      readOnly: true,
      execute: () => ({}),
      project: () => ({ evidence: "NO_EVIDENCE", scope: name, content: null }),
    });
  const boundary = new ToolBoundary({ tools: [make("logs.search"), make("logs_search")] });
  const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 1 } });
  assert.throws(() => openaiAgentsTools(boundary, run), TypeError);
});
