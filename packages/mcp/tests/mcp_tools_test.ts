/**
 * `mcpTools` against clients built to trick it: options behind getters, tools named after
 * Object.prototype keys, listings that repeat or never end, results that are no result, errors a
 * client throws. The client here is a plain object with `listTools` and `callTool`, the interface
 * the gateway takes; the real servers are in gateway_test.ts.
 */
import assert from "node:assert/strict";
import { type BoundaryResult, ToolBoundary } from "@tool-boundary/core";
import { MAX_TIMER_MS } from "@tool-boundary/core/harness";
import {
  MAX_TIMEOUT_MS,
  type McpClient,
  type McpToolInfo,
  mcpTools,
  type McpToolsOptions,
} from "../mod.ts";

const tool = (name: string, readOnlyHint?: boolean): McpToolInfo => ({
  name,
  inputSchema: { type: "object" },
  ...(readOnlyHint === undefined ? {} : { annotations: { readOnlyHint } }),
});

/** A client over fixed tools; `answer` decides each call's result. */
function clientOf(
  tools: McpToolInfo[],
  answer: (name: string) => unknown = () => ({ content: [{ type: "text", text: "ok" }] }),
): McpClient & { called: string[] } {
  const called: string[] = [];
  return {
    called,
    listTools: () => Promise.resolve({ tools: structuredClone(tools) }),
    callTool: (params) => {
      called.push(params.name);
      return Promise.resolve().then(() => answer(params.name));
    },
  };
}

async function callAll(
  client: McpClient,
  options: McpToolsOptions,
  names: string[],
): Promise<[string, string][]> {
  const boundary = new ToolBoundary({ tools: await mcpTools(client, options) });
  const run = await boundary.startRun({ ttlMs: 60_000 });
  // Pairs, not an object: "__proto__" is one of the names.
  const codes: [string, string][] = [];
  for (const [i, name] of names.entries()) {
    const result: BoundaryResult = await boundary.invoke(run, {
      toolCallId: `call_${i}`,
      runId: run.runId,
      toolName: name,
      input: {},
    });
    codes.push([name, result.status === "ERROR" ? result.code : result.status]);
  }
  return codes;
}

Deno.test("tools named after Object.prototype keys keep their own policy", async () => {
  const names = ["constructor", "__proto__", "toString", "hasOwnProperty"];
  const client = clientOf(names.map((name) => tool(name, true)));
  // JSON.parse makes "__proto__" an own key, as a configuration file would.
  const readOnly = JSON.parse('{"constructor":false,"__proto__":false}');
  assert.deepEqual(await callAll(client, { trusted: true, readOnly }, names), [
    ["constructor", "NOT_READ_ONLY"],
    ["__proto__", "NOT_READ_ONLY"],
    ["toString", "READY"],
    ["hasOwnProperty", "READY"],
  ]);
  assert.deepEqual(client.called, ["toString", "hasOwnProperty"]);
  // Untrusted, an inherited name in readOnly is not an override: nothing runs.
  const none = clientOf(names.map((name) => tool(name, true)));
  assert.deepEqual(
    (await callAll(none, { readOnly: {} }, names)).map(([, code]) => code),
    names.map(() => "NOT_READ_ONLY"),
  );
  assert.deepEqual(none.called, []);
});

Deno.test("options are read once, before the server is asked", async () => {
  let reads = 0;
  const options = {
    get trusted() {
      reads++;
      return reads === 1; // true the first time only
    },
  } as McpToolsOptions;
  let listed = false;
  const client: McpClient = {
    listTools: () => {
      listed = true;
      return Promise.resolve({ tools: [tool("a", true), tool("b", true)] });
    },
    callTool: () => Promise.resolve({ content: [] }),
  };
  const tools = await mcpTools(client, options);
  assert.equal(reads, 1);
  assert.ok(listed);
  assert.deepEqual(tools.map((t) => t.readOnly), [true, true]);
});

Deno.test("what the server lists is copied: later changes to its objects change nothing", async () => {
  const shared = [tool("search", true)];
  const client: McpClient = {
    listTools: () => Promise.resolve({ tools: shared }),
    callTool: () => Promise.resolve({ content: [] }),
  };
  const [wrapped] = await mcpTools(client, { trusted: true });
  shared[0]!.name = "renamed";
  shared[0]!.annotations = { readOnlyHint: false };
  assert.equal(wrapped?.name, "search");
  assert.equal(wrapped?.readOnly, true);
});

Deno.test("a listing that repeats a name, or never ends, is refused", async () => {
  await assert.rejects(mcpTools(clientOf([tool("a"), tool("a")])), /lists "a" twice/);
  let pages = 0;
  const endless: McpClient = {
    listTools: () => Promise.resolve({ tools: [tool(`t${pages++}`)], nextCursor: "again" }),
    callTool: () => Promise.resolve({}),
  };
  await assert.rejects(mcpTools(endless), /did not end within 100 pages/);
  assert.equal(pages, 100);
  // Pages are followed with their cursor.
  const cursors: unknown[] = [];
  const paged: McpClient = {
    listTools: (params) => {
      cursors.push(params?.cursor);
      return Promise.resolve(
        params?.cursor === undefined
          ? { tools: [tool("one")], nextCursor: "p2" }
          : { tools: [tool("two")] },
      );
    },
    callTool: () => Promise.resolve({}),
  };
  assert.deepEqual((await mcpTools(paged)).map((t) => t.name), ["one", "two"]);
  assert.deepEqual(cursors, [undefined, "p2"]);
});

Deno.test("bad options are refused with a TypeError naming the option", async () => {
  const client = clientOf([tool("a", true)]);
  await assert.rejects(mcpTools(client, { readOnly: { b: true } }), /readOnly names "b"/);
  await assert.rejects(
    mcpTools(client, { project: { b: () => null as never } }),
    /project names "b"/,
  );
  await assert.rejects(
    mcpTools(client, { project: { a: "no" as never } }),
    /project\["a"\] must be a function/,
  );
  await assert.rejects(mcpTools(client, { prefix: 1 as never }), /prefix must be a string/);
  for (const timeoutMs of [0, -1, 1.5, NaN, "30000" as never, MAX_TIMEOUT_MS + 1, 2 ** 31]) {
    await assert.rejects(mcpTools(client, { timeoutMs }), {
      name: "TypeError",
      message: `Cannot wrap MCP tools: timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`,
    });
  }
});

Deno.test("what the client gives back: results, errors and look-alikes", async () => {
  const answers: Record<string, () => unknown> = {
    plain: () => ({ content: [{ type: "text", text: "fine" }] }),
    empty: () => ({ content: [] }),
    failed: () => ({ isError: true, content: [{ type: "text", text: "secret path /srv/x" }] }),
    rpc: () => {
      throw Object.assign(new Error("MCP error -32602: Invalid arguments"), { code: -32602 });
    },
    broken: () => {
      throw new TypeError("fetch failed");
    },
    nothing: () => "not a result",
    fakeError: () => ({ isError: "true", content: [{ type: "text", text: "still a result" }] }),
  };
  const client = clientOf(
    Object.keys(answers).map((name) => tool(name, true)),
    (name) => answers[name]!(),
  );
  const boundary = new ToolBoundary({ tools: await mcpTools(client, { trusted: true }) });
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const results: Record<string, unknown> = {};
  const raws: Record<string, unknown> = {};
  for (const name of Object.keys(answers)) {
    const result = await boundary.invoke(run, {
      toolCallId: name,
      runId: run.runId,
      toolName: name,
      input: {},
    });
    results[name] = result.status === "ERROR" ? result.code : result.evidence;
    raws[name] = (await boundary.inspect(run.runId, name))?.raw;
  }
  assert.deepEqual(results, {
    plain: "EVIDENCE_FOUND",
    empty: "NO_EVIDENCE",
    failed: "EXECUTION_FAILED",
    rpc: "EXECUTION_FAILED",
    broken: "EXECUTION_FAILED",
    nothing: "EXECUTION_FAILED",
    fakeError: "EVIDENCE_FOUND", // only `isError: true` is an error
  });
  // The server's own words are the raw; a failure with no answer has none.
  assert.deepEqual(raws.failed, {
    isError: true,
    content: [{ type: "text", text: "secret path /srv/x" }],
  });
  assert.deepEqual(raws.rpc, {
    error: { code: -32602, message: "MCP error -32602: Invalid arguments" },
  });
  assert.equal(raws.broken, undefined);
  assert.deepEqual(raws.nothing, {
    error: { message: "tools/call gave no result object" },
    result: "not a result",
  });
});

Deno.test("the longest timeoutMs gives the client exactly a timer's limit", async () => {
  const given: unknown[] = [];
  const client: McpClient = {
    listTools: () => Promise.resolve({ tools: [tool("a", true)] }),
    callTool: (_params, _schema, options) => {
      given.push(options?.timeout);
      return Promise.resolve({ content: [] });
    },
  };
  const tools = await mcpTools(client, { trusted: true, timeoutMs: MAX_TIMEOUT_MS });
  assert.equal(tools[0]?.timeoutMs, MAX_TIMEOUT_MS);
  assert.deepEqual(await callAll(client, { trusted: true, timeoutMs: MAX_TIMEOUT_MS }, ["a"]), [
    ["a", "READY"],
  ]);
  assert.deepEqual(given, [MAX_TIMER_MS]);
});

Deno.test("a client with getProtocolEra is given its request options second", async () => {
  const given: unknown[][] = [];
  const client: McpClient = {
    listTools: () => Promise.resolve({ tools: [tool("a", true)] }),
    callTool: (...args: unknown[]) => {
      given.push(args.slice(1).map((arg) => Object.keys(arg ?? {}).sort()));
      return Promise.resolve({ content: [] });
    },
    getProtocolEra: () => "legacy",
  };
  assert.deepEqual(await callAll(client, { trusted: true }, ["a"]), [["a", "READY"]]);
  assert.deepEqual(given, [[["signal", "timeout"]]]);
});

Deno.test("a listed tool whose name is not a non-empty string is refused at setup", async () => {
  for (const name of [5, {}, "", null, undefined, ["a"]]) {
    const client: McpClient = {
      listTools: () =>
        Promise.resolve({ tools: [{ name, inputSchema: { type: "object" } }] as never }),
      callTool: () => Promise.resolve({ content: [] }),
    };
    await assert.rejects(mcpTools(client, { prefix: "p_" }), {
      name: "TypeError",
      message: "Cannot wrap MCP tools: the server lists a tool whose name is no string",
    });
  }
  const noList: McpClient = {
    listTools: () => Promise.resolve({ tools: "search" as never }),
    callTool: () => Promise.resolve({}),
  };
  await assert.rejects(mcpTools(noList), /tools\/list gave no list of tools/);
});

Deno.test("listed schemas that are not objects are refused; a description that is no string is left out", async () => {
  const listing = (fields: Record<string, unknown>): McpClient => ({
    listTools: () => Promise.resolve({ tools: [{ name: "t", ...fields }] as never }),
    callTool: () => Promise.resolve({ content: [] }),
  });
  for (const inputSchema of [undefined, null, "object", ["object"], 1]) {
    await assert.rejects(mcpTools(listing({ inputSchema })), /"t" lists no inputSchema object/);
  }
  for (const outputSchema of [null, "object", [], true]) {
    await assert.rejects(
      mcpTools(listing({ inputSchema: { type: "object" }, outputSchema })),
      /"t" lists an outputSchema that is no object/,
    );
  }
  const [described] = await mcpTools(
    listing({ inputSchema: { type: "object" }, description: { text: "no" } }),
  );
  assert.equal(described?.description, undefined);
  assert.ok(!("description" in described!));
});

Deno.test("a schema the validator cannot use is refused at setup", async () => {
  const listing = (fields: Record<string, unknown>): McpClient => ({
    listTools: () => Promise.resolve({ tools: [{ name: "t", ...fields }] as never }),
    callTool: () => Promise.resolve({ content: [] }),
  });
  const unusable = [
    { type: "object", properties: { q: { type: "string", pattern: "([" } } },
    { type: "object", patternProperties: { "(": { type: "string" } } },
    { type: "object", properties: { q: { $ref: "#/$defs/missing" } } },
  ];
  for (const schema of unusable) {
    await assert.rejects(
      mcpTools(listing({ inputSchema: schema })),
      /the inputSchema of "t" cannot be used/,
    );
    await assert.rejects(
      mcpTools(listing({ inputSchema: { type: "object" }, outputSchema: schema })),
      /the outputSchema of "t" cannot be used/,
    );
  }
  // A pattern inside data (a const) is data, not a pattern.
  await mcpTools(listing({ inputSchema: { type: "object", const: { pattern: "([" } } }));
});

Deno.test("arguments are checked against the inputSchema: issues say where and what, never the values", async () => {
  const inputSchema = {
    type: "object",
    $defs: { level: { enum: ["info", "error"] } },
    properties: {
      query: { type: "string", minLength: 2 },
      limit: { type: "integer", minimum: 1 },
      level: { $ref: "#/$defs/level" },
      tags: { type: "array", items: { type: "string" } },
      range: { anyOf: [{ type: "string" }, { type: "number" }] },
    },
    required: ["query"],
    additionalProperties: false,
  };
  const client = clientOf([{ name: "search", inputSchema, annotations: { readOnlyHint: true } }]);
  const tools = await mcpTools(client, { trusted: true });
  const boundary = new ToolBoundary({ tools });
  // The listing is shown as the server sent it.
  assert.deepEqual(boundary.describeTools()[0]?.inputSchema, inputSchema);
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const invoke = (toolCallId: string, input: Record<string, unknown>) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName: "search", input });

  const bad = await invoke("c1", {
    limit: 0.5,
    level: "secret-level",
    tags: ["ok", 7],
    range: true,
    "secret-key": "secret-value",
  });
  assert.equal(bad.status === "ERROR" && bad.code, "INVALID_INPUT");
  assert.deepEqual(
    bad.status === "ERROR" && bad.issues,
    [
      { path: "query", expected: "required" },
      { path: "limit", expected: "integer" },
      { path: "limit", expected: "minimum 1" },
      { path: "level", expected: 'enum ["info","error"]' },
      { path: "tags.1", expected: "string" },
      { path: "range", expected: "anyOf" },
      { path: "secret-key", expected: "never" },
    ],
  );
  assert.doesNotMatch(JSON.stringify(bad), /secret-value|secret-level|0\.5/);
  assert.equal(await boundary.inspect(run.runId, "c1"), null);

  const short = await invoke("c2", { query: "a" });
  assert.deepEqual(short.status === "ERROR" && short.issues, [
    { path: "query", expected: "minLength 2" },
  ]);
  assert.deepEqual(client.called, [], "no call reached the client");

  const good = await invoke("c3", { query: "timeout", limit: 5, level: "error", range: 2 });
  assert.equal(good.status, "READY");
  assert.deepEqual(client.called, ["search"]);
});

Deno.test("the projector gets the whole result; structured content that fails the outputSchema is never projected", async () => {
  const outputSchema = {
    type: "object",
    properties: { celsius: { type: "number" } },
    required: ["celsius"],
  };
  const answers: Record<string, unknown> = {
    good: { content: [{ type: "text", text: "21" }], structuredContent: { celsius: 21 } },
    wrong: { content: [], structuredContent: { celsius: "warm" } },
    missing: { content: [{ type: "text", text: "21" }] },
  };
  const client = clientOf(
    Object.keys(answers).map((name) => ({
      name,
      inputSchema: { type: "object" },
      outputSchema,
      annotations: { readOnlyHint: true },
    })),
    (name) => answers[name],
  );
  const projected: unknown[] = [];
  const boundary = new ToolBoundary({
    tools: await mcpTools(client, {
      trusted: true,
      project: (raw, ctx) => {
        projected.push({ raw, outputSchema: ctx.outputSchema, checked: ctx.structuredChecked });
        return { evidence: "EVIDENCE_FOUND", scope: ctx.tool.name, content: raw.structuredContent };
      },
    }),
  });
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const codes: Record<string, string> = {};
  for (const name of Object.keys(answers)) {
    const result = await boundary.invoke(run, {
      toolCallId: name,
      runId: run.runId,
      toolName: name,
      input: {},
    });
    codes[name] = result.status === "ERROR" ? result.code : result.status;
  }
  assert.deepEqual(codes, {
    good: "READY",
    wrong: "EXECUTION_FAILED",
    missing: "EXECUTION_FAILED",
  });
  assert.deepEqual(projected, [{ raw: answers.good, outputSchema: true, checked: true }]);
  // The record keeps the server's result and what did not match.
  assert.deepEqual((await boundary.inspect(run.runId, "wrong"))?.raw, {
    error: {
      message: "structuredContent does not match the tool's outputSchema",
      issues: [{ path: "celsius", expected: "number" }],
    },
    result: answers.wrong,
  });
  assert.deepEqual((await boundary.inspect(run.runId, "missing"))?.raw, {
    error: {
      message: "structuredContent does not match the tool's outputSchema",
      issues: [{ path: "structuredContent", expected: "required" }],
    },
    result: answers.missing,
  });
});
