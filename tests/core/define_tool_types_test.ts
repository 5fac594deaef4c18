/**
 * What `defineTool` infers: the input type from a valibot schema reaches `execute`, `project`
 * gets the raw type `execute` returns, and a tool without a schema gets a `JsonObject`. Each
 * mistyped use below carries `@ts-expect-error`, which `deno check` (and so `deno test` and
 * `task check`) holds both ways: the error must be there, and a directive with no error under it
 * is an error of its own. The tests also run the tools, so the types are those of what happens.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  type AnyToolDefinition,
  defineTool,
  type JsonObject,
  type JsonValue,
  type ProjectContext,
  rawJson,
  ToolBoundary,
  type ToolDefinition,
  toolError,
} from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";

/** `true` when A and B are the same type (not merely assignable to each other). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

/** Compiles only when its type argument is `true`. */
function holds<_ extends true>(): void {}

/** Runs one call of a tool through a boundary on a MemoryStore and returns its result. */
async function callOnce(tool: AnyToolDefinition, input: JsonObject) {
  const boundary = new ToolBoundary({ store: new MemoryStore(), tools: [tool] });
  const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 1 } });
  return await boundary.invoke(run, {
    runId: run.runId,
    toolCallId: "call_1",
    toolName: tool.name,
    input,
  });
}

Deno.test("defineTool() with a schema: its output is execute's input, and execute's return is project's raw", async () => {
  const searchLogs = defineTool({
    name: "search_logs",
    readOnly: true,
    input: v.object({ query: v.string(), limit: v.optional(v.number(), 5) }),
    execute: (input) => {
      holds<Equal<typeof input, { query: string; limit: number }>>();
      return { query: input.query, hits: ["12:01 upstream timeout"].slice(0, input.limit) };
    },
    project: (raw, ctx) => {
      holds<Equal<typeof raw, { query: string; hits: string[] }>>();
      holds<Equal<typeof ctx, ProjectContext>>();
      holds<Equal<typeof ctx.input, JsonObject>>();
      return { evidence: "EVIDENCE_FOUND", scope: `logs: ${raw.query}`, content: raw.hits };
    },
  });
  holds<
    Equal<
      typeof searchLogs,
      ToolDefinition<{ query: string; limit: number }, { query: string; hits: string[] }>
    >
  >();
  const result = await callOnce(searchLogs, { query: "timeout" });
  assert.equal(result.status, "READY");
  assert.deepEqual(result.status === "READY" && result.content, ["12:01 upstream timeout"]);
});

Deno.test("defineTool() takes a schema's transformed output, and an async execute's awaited return without its toolError", async () => {
  const tool = defineTool({
    name: "count_words",
    readOnly: true,
    input: v.object({ text: v.pipe(v.string(), v.transform((text) => text.split(" "))) }),
    execute: async ({ text }) => {
      holds<Equal<typeof text, string[]>>();
      await Promise.resolve();
      return text.length > 10 ? toolError({ tooLong: true }) : { words: text.length };
    },
    project: (raw) => {
      holds<Equal<typeof raw, { words: number }>>();
      return { evidence: "EVIDENCE_FOUND", scope: "the text", content: raw.words };
    },
  });
  const result = await callOnce(tool, { text: "one two three" });
  assert.equal(result.status === "READY" && result.content, 3);
});

Deno.test("defineTool() without a schema gives execute a JsonObject", async () => {
  const echo = defineTool({
    name: "echo",
    readOnly: true,
    execute: (input) => {
      holds<Equal<typeof input, JsonObject>>();
      return { echoed: input };
    },
    project: (raw) => {
      holds<Equal<typeof raw, { echoed: JsonObject }>>();
      return { evidence: "EVIDENCE_FOUND", scope: "the input", content: raw.echoed };
    },
  });
  holds<Equal<typeof echo, ToolDefinition<JsonObject, { echoed: JsonObject }>>>();
  const result = await callOnce(echo, { a: [1, "x"] });
  assert.deepEqual(result.status === "READY" && result.content, { a: [1, "x"] });
});

Deno.test("defineTool() types a tool that only ever fails with raw unknown, and it fits a tool list", async () => {
  const project = () => ({ evidence: "NO_EVIDENCE" as const, scope: "nothing", content: null });
  const failing = defineTool({
    name: "failing",
    readOnly: true,
    execute: () => toolError({ status: 502 }),
    project,
  });
  const throwing = defineTool({
    name: "throwing",
    readOnly: true,
    execute: () => {
      throw new Error("upstream down");
    },
    project,
  });
  holds<Equal<typeof failing, ToolDefinition<JsonObject, unknown>>>();
  holds<Equal<typeof throwing, ToolDefinition<JsonObject, unknown>>>();
  const tools: ToolDefinition<JsonObject, unknown>[] = [failing, throwing];
  for (const tool of tools) {
    const result = await callOnce(tool, {});
    assert.equal(result.status === "ERROR" && result.code, "EXECUTION_FAILED", tool.name);
  }
});

Deno.test("defineTool() refuses mistyped uses at compile time (and the worst of them at run time)", () => {
  const input = v.object({ query: v.string() });
  const project = () => ({ evidence: "NO_EVIDENCE" as const, scope: "s", content: null });
  // Each definition below is wrong in one way; its `@ts-expect-error` fails `deno check` the day
  // the mistake compiles. Those that are valid JavaScript are defined, and are frozen tools.
  const defined = [
    defineTool({
      name: "unknown_field",
      readOnly: true,
      input,
      // @ts-expect-error: the schema has no `limit`
      execute: (args) => ({ limit: args.limit }),
      project,
    }),
    defineTool({
      name: "field_of_another_type",
      readOnly: true,
      input,
      // @ts-expect-error: `query` is a string
      execute: ({ query }) => ({ fixed: query.toFixed(2) }),
      project,
    }),
    defineTool({
      name: "annotation_against_schema",
      readOnly: true,
      // @ts-expect-error: the schema's output is not what execute says it takes
      input,
      execute: (args: { query: number }) => ({ query: args.query }),
      project,
    }),
    defineTool({
      name: "raw_field_execute_never_returned",
      readOnly: true,
      input,
      execute: ({ query }) => ({ query }),
      project: (raw) => ({
        evidence: "EVIDENCE_FOUND",
        scope: "s",
        // @ts-expect-error: execute returns no `hits`
        content: raw.hits,
      }),
    }),
    defineTool({
      name: "no_schema_input_is_json",
      readOnly: true,
      execute: (args) => ({
        // @ts-expect-error: without a schema, a member is any JSON value, not a string
        upper: args.query.toUpperCase(),
      }),
      project,
    }),
    defineTool({
      name: "evidence_not_a_status",
      readOnly: true,
      execute: () => ({}),
      project: () => ({
        // @ts-expect-error: evidence is EVIDENCE_FOUND or NO_EVIDENCE
        evidence: "FOUND",
        scope: "s",
        content: null,
      }),
    }),
  ];
  for (const tool of defined) assert.ok(Object.isFrozen(tool), tool.name);

  assert.throws(
    // @ts-expect-error: a tool needs a projector
    () => defineTool({ name: "no_project", readOnly: true, execute: () => ({}) }),
    TypeError,
  );
  assert.throws(
    // @ts-expect-error: readOnly is a boolean
    () => defineTool({ name: "read_only_text", readOnly: "yes", execute: () => ({}), project }),
    TypeError,
  );
  assert.throws(
    // @ts-expect-error: a name is a string
    () => defineTool({ name: 7, readOnly: true, execute: () => ({}), project }),
    TypeError,
  );
});

Deno.test("defineTool() takes rawJson<T>'s T as the raw type, and a Response's from the projector", async () => {
  interface Hits {
    hits: string[];
  }
  const fromText = defineTool({
    name: "from_text",
    readOnly: true,
    execute: async () => {
      await Promise.resolve();
      return Math.random() > 2 ? toolError("never") : rawJson<Hits>('{"hits":["a"]}');
    },
    project: (raw) => {
      holds<Equal<typeof raw, Hits>>();
      return { evidence: "EVIDENCE_FOUND", scope: "text", content: raw.hits };
    },
  });
  holds<Equal<typeof fromText, ToolDefinition<JsonObject, Hits>>>();
  const untyped = defineTool({
    name: "untyped_text",
    readOnly: true,
    execute: () => rawJson("[1]"),
    project: (raw) => {
      holds<Equal<typeof raw, JsonValue>>();
      return { evidence: "EVIDENCE_FOUND", scope: "text", content: raw };
    },
  });
  const named = defineTool({
    name: "from_response",
    readOnly: true,
    execute: () => Response.json({ hits: ["b"] }),
    project: (raw: Hits) => ({ evidence: "EVIDENCE_FOUND", scope: "body", content: raw.hits }),
  });
  holds<Equal<typeof named, ToolDefinition<JsonObject, Hits>>>();
  const unnamed = defineTool({
    name: "unnamed_response",
    readOnly: true,
    execute: () => Promise.resolve(Response.json([2])),
    project: (raw) => {
      // TypeScript cannot type a body: unnamed, the projector's raw is typed as what execute
      // returned, and the tool as JsonValue, what the projector gets.
      holds<Equal<typeof raw, Response>>();
      return { evidence: "EVIDENCE_FOUND", scope: "body", content: raw as unknown };
    },
  });
  holds<Equal<typeof unnamed, ToolDefinition<JsonObject, JsonValue>>>();
  defineTool({
    name: "text_of_another_type",
    readOnly: true,
    // @ts-expect-error: the text is typed as something the projector does not take
    execute: () => rawJson<{ n: number }>('{"n":1}'),
    project: (raw: Hits) => ({ evidence: "EVIDENCE_FOUND", scope: "s", content: raw.hits }),
  });
  const contents = [];
  for (const tool of [fromText, untyped, named, unnamed]) {
    const result = await callOnce(tool, {});
    contents.push(result.status === "READY" && result.content);
  }
  assert.deepEqual(contents, [["a"], [1], ["b"], [2]]);
});
