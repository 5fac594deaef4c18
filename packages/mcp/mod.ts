/**
 * An MCP gateway for tool-boundary: the tools of an upstream MCP server as tool definitions of a
 * `ToolBoundary`, so that every call to them is preflighted, bounded and recorded like any other.
 *
 * The MCP spec says a client must treat tool annotations as untrusted unless the server is
 * trusted, so a tool counts as read-only only when `trusted` is set and the server says
 * `readOnlyHint: true`, or when `readOnly` names it; every other tool is refused NOT_READ_ONLY
 * by the boundary, before anything reaches the upstream server.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { type McpClient, mcpTools } from "@tool-boundary/mcp";
 *
 * // Any MCP client with listTools and callTool: the official SDK's `Client`, once connected.
 * const sent: unknown[] = [];
 * const client: McpClient = {
 *   listTools: () =>
 *     Promise.resolve({
 *       tools: [
 *         { name: "search", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
 *         { name: "delete", inputSchema: { type: "object" } },
 *       ],
 *     }),
 *   callTool: (params) => {
 *     sent.push(params);
 *     return Promise.resolve({ content: [{ type: "text", text: "2 hits" }] });
 *   },
 * };
 * const boundary = new ToolBoundary({ tools: await mcpTools(client, { trusted: true }) });
 * const run = await boundary.startRun({ ttlMs: 60_000 });
 * const envelope = { runId: run.runId, input: {} };
 * const found = await boundary.invoke(run, { ...envelope, toolCallId: "c1", toolName: "search" });
 * assert.deepEqual(found.status === "READY" && found.content, ["2 hits"]);
 * const refused = await boundary.invoke(run, { ...envelope, toolCallId: "c2", toolName: "delete" });
 * assert.equal(refused.status === "ERROR" && refused.code, "NOT_READ_ONLY");
 * assert.deepEqual(sent, [
 *   { name: "search", arguments: {}, _meta: { "io.tool-boundary/toolCallId": "c1" } },
 * ]);
 * ```
 *
 * @module
 */
import {
  dereference,
  type OutputUnit,
  type Schema,
  type SchemaDraft,
  validate,
} from "@cfworker/json-schema";
import * as v from "valibot";
import {
  defineTool,
  type JsonObject,
  type ProjectContext,
  type ProjectorOutput,
  type ToolDefinition,
  toolError,
} from "@tool-boundary/core";
import { MAX_TIMER_MS, TOOL_CALL_ID_META } from "@tool-boundary/core/harness";
import { COST_RULE, isCost } from "./cost.ts";

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364); these
// aliases name them for the docs.
/**
 * A JSON object (`JsonObject` of `@tool-boundary/core`): an upstream result, a tool's input.
 * @internal
 */
type Json = JsonObject;
/**
 * `ProjectContext` of `@tool-boundary/core`: the run and call a projector serves.
 * @internal
 */
type CoreProjectContext = ProjectContext;
/**
 * `ProjectorOutput` of `@tool-boundary/core`: the bounded result a projector returns.
 * @internal
 */
type Projected = ProjectorOutput;
/**
 * `ToolDefinition` of `@tool-boundary/core`, for JSON input and raw results.
 * @internal
 */
type McpToolDefinition = ToolDefinition<JsonObject, JsonObject>;

/** A tool as an MCP server lists it (`tools/list`); only these fields are read. */
export interface McpToolInfo {
  /** The tool's name on the server: a non-empty string. */
  name: string;
  /** Its description; one that is not a string is left out. */
  description?: string | undefined;
  /** JSON Schema of its arguments: an object, checked before each call. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of its `structuredContent`, when it declares one: an object. */
  outputSchema?: Record<string, unknown> | undefined;
  /** Hints; `readOnlyHint` counts only for a trusted server. */
  annotations?: { readOnlyHint?: boolean | undefined } | undefined;
}

/** What a request to the upstream server may be given. */
export interface McpRequestOptions {
  /** Aborts the request (the SDK then sends `notifications/cancelled`). */
  signal?: AbortSignal;
  /** Milliseconds before the client gives up. */
  timeout?: number;
}

/**
 * The part of an MCP client the gateway uses. Both official SDK clients fit as they are, once
 * connected: `Client` of `@modelcontextprotocol/sdk/client` (1.x), whose `callTool` takes
 * `(params, resultSchema, options)`, and `Client` of `@modelcontextprotocol/client` (2.x), whose
 * `callTool` takes `(params, options)`. A client with a `getProtocolEra` method (the 2.x one) is
 * given its options second; any other is given `(params, undefined, options)`.
 */
export interface McpClient {
  /** One page of `tools/list` (the 2.x client answers the first call with every page). */
  listTools(
    params?: { cursor?: string },
    options?: McpRequestOptions,
  ): Promise<{ tools: McpToolInfo[]; nextCursor?: string | undefined }>;
  /** `tools/call`; the result is read as JSON, whatever its declared type. */
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    resultSchemaOrOptions?: unknown,
    options?: McpRequestOptions,
  ): Promise<unknown>;
  /** The server's `serverInfo`, used in the default scope. */
  getServerVersion?(): { name: string; version?: string | undefined } | undefined;
  /** Only the 2.x SDK client has it: its `callTool` takes the request options second. */
  getProtocolEra?(): unknown;
}

/** What a gateway projector receives besides the raw result. */
export interface McpProjectContext extends CoreProjectContext {
  /** The upstream tool as the server listed it. */
  tool: Readonly<McpToolInfo>;
  /** The upstream server's name (`serverInfo.name`), or `"MCP server"` when it gave none. */
  server: string;
  /** Whether the tool declares an `outputSchema`. */
  outputSchema: boolean;
  /**
   * Whether `raw.structuredContent` was checked against the tool's `outputSchema`: by the
   * gateway itself, whichever client is in use, so it is `true` exactly when the tool declares
   * one (a result that fails the check never reaches the projector). Structured content of a
   * tool without an `outputSchema` is unchecked (`false`).
   */
  structuredChecked: boolean;
}

/**
 * Projects an upstream result: always the whole `CallToolResult` as the server sent it (what
 * the record keeps as raw), also for a tool that declares an `outputSchema`, whose checked
 * content is `raw.structuredContent`.
 */
export type McpProjector = (
  raw: Json,
  ctx: McpProjectContext,
) => Projected | Promise<Projected>;

/** How upstream tools become tool definitions. */
export interface McpToolsOptions {
  /**
   * Whether the server's `readOnlyHint: true` is believed. Without it no tool is read-only unless
   * `readOnly` says so. @default false
   */
  trusted?: boolean;
  /**
   * Read-only by name (the upstream name), overriding the server's hint in either direction:
   * `true` lets a tool run whatever the server says, `false` refuses it even when trusted. Every
   * name must be a tool the server lists.
   */
  readOnly?: Readonly<Record<string, boolean>>;
  /**
   * The projector: one for all tools, or one per upstream name (the others get
   * {@linkcode defaultProjector}). @default defaultProjector
   */
  project?: McpProjector | Readonly<Record<string, McpProjector>>;
  /** Put before each upstream name, to keep the tools of several servers apart. @default "" */
  prefix?: string;
  /**
   * Milliseconds each call may take (the tool's `timeoutMs`): an integer from 1 to
   * {@linkcode MAX_TIMEOUT_MS}. @default 30000
   */
  timeoutMs?: number;
  /**
   * What each call of every tool costs (the tool's `cost`), in the units of the runs'
   * `budget.cost`: an integer from 0 to 1e12. A run's cost budget refuses a call it cannot cover
   * with BUDGET_EXHAUSTED before anything reaches the upstream server. Without it (and without
   * `toolCosts`) the tools' calls are not costed.
   */
  cost?: number;
  /**
   * What each call costs by name (the upstream name), over `cost`: an integer from 0 to 1e12.
   * Every name must be a tool the server lists.
   */
  toolCosts?: Readonly<Record<string, number>>;
}

/** Pages of `tools/list` read at most: a server that keeps answering a cursor is refused. */
const MAX_PAGES = 100;
const DEFAULT_TIMEOUT_MS = 30_000;
/** The client waits this much longer than the boundary, so that the boundary names the timeout. */
const CLIENT_GRACE_MS = 1_000;

/**
 * The largest `timeoutMs` of {@linkcode mcpTools}: the client's own timeout, 1,000 ms longer,
 * must still fit a timer (`MAX_TIMER_MS` of the core, 2^31 - 1 ms), as a longer one fires at once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MAX_TIMER_MS } from "@tool-boundary/core/harness";
 * import { MAX_TIMEOUT_MS } from "@tool-boundary/mcp";
 * assert.equal(MAX_TIMEOUT_MS, MAX_TIMER_MS - 1_000);
 * ```
 */
export const MAX_TIMEOUT_MS: number = MAX_TIMER_MS - CLIENT_GRACE_MS;

/**
 * The tools of an upstream MCP server as tool definitions, under the trust policy of `options`.
 *
 * Each call's arguments are first checked against the tool's listed `inputSchema` (JSON Schema,
 * with `@cfworker/json-schema`, which runs no generated code): arguments that do not match are
 * refused INVALID_INPUT with the issues (where, and what was expected; never the values) and
 * never reach the upstream server. The listed `inputSchema` is what `describeTools` shows,
 * unchanged.
 *
 * Then the call goes upstream as `tools/call` with the boundary's tool call ID in
 * `_meta["io.tool-boundary/toolCallId"]` and the call's signal. The upstream result is the raw
 * response the record keeps. An `isError` result, or a JSON-RPC error the client reports (an
 * error with a numeric `code`), becomes `toolError(raw)`: the record ends ERROR EXECUTION_FAILED
 * with it, the projector is not called, and the agent sees only the code. For a tool with an
 * `outputSchema`, a result whose `structuredContent` is missing or does not match it ends the
 * same way, with `{ error: { message, issues }, result }` as the raw (an SDK client that checks
 * it itself reports a JSON-RPC error first).
 *
 * @param client A connected MCP client.
 * @param options Trust policy, overrides, projectors, name prefix, time limit.
 * @returns One definition per upstream tool, in the server's order.
 * @throws {TypeError} When an option is not of its type, `timeoutMs` is not an integer from 1
 *   to {@linkcode MAX_TIMEOUT_MS}, `cost` or a `toolCosts` value is not an integer from 0 to
 *   1e12, `readOnly`, `toolCosts` or a projector record names a tool the server does not list, or the listing is unusable: a name that is not a non-empty string of well-formed
 *   Unicode or is listed twice, an `inputSchema` that is not an object, an `outputSchema` that is
 *   present but not an object, a schema the validator cannot use (an unresolvable `$ref`, a
 *   `pattern` that is no Unicode regex), or a `tools/list` that does not end within 100 pages.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type McpClient, mcpTools } from "@tool-boundary/mcp";
 *
 * const client: McpClient = {
 *   listTools: () =>
 *     Promise.resolve({
 *       tools: [
 *         { name: "get_env", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
 *         { name: "echo", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
 *         { name: "add_note", inputSchema: { type: "object" } },
 *       ],
 *     }),
 *   callTool: () => Promise.resolve({ content: [] }),
 * };
 * // Trusted, but get_env's hint is not believed, and add_note may run although it has none.
 * const tools = await mcpTools(client, {
 *   trusted: true,
 *   readOnly: { get_env: false, add_note: true },
 *   prefix: "notes_",
 * });
 * assert.deepEqual(tools.map((tool) => [tool.name, tool.readOnly]), [
 *   ["notes_get_env", false],
 *   ["notes_echo", true],
 *   ["notes_add_note", true],
 * ]);
 * ```
 */
export async function mcpTools(
  client: McpClient,
  options: McpToolsOptions = {},
): Promise<McpToolDefinition[]> {
  // Every option is read once, before the server is asked: what is listed is what was asked for.
  const { trusted, readOnly, project, prefix = "", timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  const { cost, toolCosts } = options;
  if (typeof prefix !== "string") {
    throw new TypeError("Cannot wrap MCP tools: prefix must be a string");
  }
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new TypeError(
      `Cannot wrap MCP tools: timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`,
    );
  }
  const vetoes = new Map(Object.entries(readOnly ?? {}));
  for (const [name, value] of vetoes) {
    if (typeof value !== "boolean") {
      throw new TypeError(`Cannot wrap MCP tools: readOnly["${name}"] must be a boolean`);
    }
  }
  if (cost !== undefined && !isCost(cost)) {
    throw new TypeError(`Cannot wrap MCP tools: cost must be ${COST_RULE}`);
  }
  const costs = new Map(Object.entries(toolCosts ?? {}));
  for (const [name, value] of costs) {
    if (!isCost(value)) {
      throw new TypeError(`Cannot wrap MCP tools: toolCosts["${name}"] must be ${COST_RULE}`);
    }
  }
  const projectors = typeof project === "function" ? null : new Map(Object.entries(project ?? {}));
  for (const [name, value] of projectors ?? []) {
    if (typeof value !== "function") {
      throw new TypeError(`Cannot wrap MCP tools: project["${name}"] must be a function`);
    }
  }
  const listed = await listAll(client);
  const names = new Set(listed.map((tool) => tool.name));
  for (
    const [option, entries] of [
      ["readOnly", vetoes],
      ["toolCosts", costs],
      ["project", projectors],
    ] as const
  ) {
    for (const name of entries?.keys() ?? []) {
      if (!names.has(name)) {
        throw new TypeError(`Cannot wrap MCP tools: ${option} names "${name}", not a listed tool`);
      }
    }
  }
  const server = client.getServerVersion?.()?.name;
  const serverName = typeof server === "string" && server !== "" ? server : "MCP server";
  const optionsSecond = typeof client.getProtocolEra === "function";
  return listed.map((tool) =>
    wrap(client, tool, {
      cost: (costs.get(tool.name) as number | undefined) ?? cost,
      readOnly: (vetoes.get(tool.name) as boolean | undefined) ??
        (trusted === true && tool.annotations?.readOnlyHint === true),
      name: `${prefix}${tool.name}`,
      project: typeof project === "function"
        ? project
        : (projectors?.get(tool.name) as McpProjector | undefined) ?? defaultProjector,
      server: serverName,
      timeoutMs,
      optionsSecond,
    })
  );
}

/** Every page of `tools/list`, each tool read once into a plain, frozen copy and checked. */
async function listAll(client: McpClient): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await client.listTools(cursor === undefined ? undefined : { cursor });
    // The SDK's objects came from JSON; a copy keeps later changes to them out of the tools.
    const copy = JSON.parse(JSON.stringify(answer ?? null)) as unknown;
    const list = isObject(copy) ? copy.tools : undefined;
    if (!Array.isArray(list)) {
      throw new TypeError("Cannot wrap MCP tools: tools/list gave no list of tools");
    }
    for (const tool of list) {
      const checked = checkListed(tool);
      if (seen.has(checked.name)) {
        throw new TypeError(`Cannot wrap MCP tools: the server lists "${checked.name}" twice`);
      }
      seen.add(checked.name);
      tools.push(deepFreeze(checked));
    }
    const next = (copy as Record<string, unknown>).nextCursor;
    if (next === undefined || next === null) return tools;
    if (typeof next !== "string") {
      throw new TypeError("Cannot wrap MCP tools: tools/list gave a nextCursor that is no string");
    }
    cursor = next;
  }
  throw new TypeError(`Cannot wrap MCP tools: tools/list did not end within ${MAX_PAGES} pages`);
}

/** One listed tool (plain JSON data), or a TypeError saying what about it is unusable. */
function checkListed(tool: unknown): McpToolInfo {
  const fields = isObject(tool) ? tool : {};
  const { name, description, inputSchema, outputSchema } = fields;
  // Never the value itself in the message: it is whatever the server sent.
  if (typeof name !== "string" || name === "") {
    throw new TypeError("Cannot wrap MCP tools: the server lists a tool whose name is no string");
  }
  if (!isObject(inputSchema)) {
    throw new TypeError(`Cannot wrap MCP tools: "${name}" lists no inputSchema object`);
  }
  if (outputSchema !== undefined && !isObject(outputSchema)) {
    throw new TypeError(`Cannot wrap MCP tools: "${name}" lists an outputSchema that is no object`);
  }
  const { description: _, ...rest } = fields;
  return {
    ...rest,
    name,
    inputSchema,
    ...(typeof description === "string" ? { description } : {}),
  };
}

/** A primitive, or a list of primitives: schema data, not a subschema. */
function isPlain(value: unknown): boolean {
  return Array.isArray(value)
    ? value.every((item) => typeof item !== "object" || item === null)
    : typeof value !== "object";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/** A failed check of a JSON Schema: where in the instance, and what was expected there. */
interface SchemaIssue {
  /** Keys and indexes from the instance's root. */
  path: string[];
  expected: string;
}

/** The issues of one value against a listed schema: none when it matches. */
type SchemaCheck = (value: unknown) => SchemaIssue[];

/** At most this many issues are read from one check. */
const MAX_ISSUES = 10;
/** Keywords whose errors only say that a subschema failed: its own errors follow. */
const WRAPPERS = new Set([
  "$ref",
  "$recursiveRef",
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedItems",
  "allOf",
  "if",
  "then",
  "else",
  "dependentSchemas",
]);
/** Keywords whose failure is one issue, whatever their subschemas said. */
const ALTERNATIVES = new Set([
  "anyOf",
  "oneOf",
  "not",
  "contains",
  "propertyNames",
  "dependencies",
]);
/** Keywords whose value is data, not a schema: never walked for patterns or references. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);

/**
 * A check of values against one listed JSON Schema, with the draft its `$schema` names (2020-12
 * without one, as MCP says). Throws a TypeError when the validator cannot use the schema.
 */
function schemaCheck(tool: string, field: string, schema: Record<string, unknown>): SchemaCheck {
  // The validator marks the schema it is given: it gets its own copy, the listing stays as sent.
  const copy = structuredClone(schema) as Schema;
  const draft = draftOf(schema.$schema);
  let lookup: Record<string, unknown>;
  try {
    lookup = dereference(copy);
    usable(copy, lookup);
  } catch (error) {
    throw new TypeError(
      `Cannot wrap MCP tools: the ${field} of "${tool}" cannot be used: ${
        (error as Error).message
      }`,
    );
  }
  return (value) => {
    // Every error, not the first: the agent learns all it must change at once.
    const { valid, errors } = validate(value, copy, draft, lookup as Record<string, Schema>, false);
    return valid ? [] : issuesOf(errors, copy, lookup);
  };
}

function draftOf(dialect: unknown): SchemaDraft {
  if (typeof dialect !== "string") return "2020-12";
  if (dialect.includes("draft-04")) return "4";
  if (dialect.includes("draft-06") || dialect.includes("draft-07")) return "7";
  if (dialect.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/** Throws what checking a value would throw later: a pattern no regex, a `$ref` to nowhere. */
function usable(node: unknown, lookup: Record<string, unknown>): void {
  if (typeof node !== "object" || node === null) return;
  if (Array.isArray(node)) {
    for (const item of node) usable(item, lookup);
    return;
  }
  const fields = node as Record<string, unknown>;
  if (typeof fields.pattern === "string") new RegExp(fields.pattern, "u");
  if (isObject(fields.patternProperties)) {
    for (const pattern of Object.keys(fields.patternProperties)) new RegExp(pattern, "u");
  }
  // Set by the validator on each schema with a reference, resolved against its lookup.
  for (const mark of ["__absolute_ref__", "__absolute_recursive_ref__"]) {
    const target = fields[mark];
    if (typeof target === "string" && lookup[target] === undefined) {
      throw new Error(`unresolved reference "${target}"`);
    }
  }
  for (const [key, value] of Object.entries(fields)) {
    if (!DATA_KEYWORDS.has(key)) usable(value, lookup);
  }
}

/** The validator's errors as issues: the failures themselves, not the subschemas around them. */
function issuesOf(
  errors: readonly OutputUnit[],
  schema: Schema,
  lookup: Record<string, unknown>,
): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const within: string[] = [];
  for (const error of errors) {
    if (issues.length === MAX_ISSUES) break;
    if (within.some((prefix) => error.keywordLocation.startsWith(prefix))) continue;
    if (WRAPPERS.has(error.keyword)) continue;
    if (ALTERNATIVES.has(error.keyword)) within.push(`${error.keywordLocation}/`);
    issues.push(issueOf(error, schema, lookup));
  }
  // Wrappers only, which the validator does not give: the value as a whole failed.
  if (issues.length === 0 && errors.length > 0) issues.push({ path: [], expected: "valid" });
  return issues;
}

function issueOf(error: OutputUnit, schema: Schema, lookup: Record<string, unknown>): SchemaIssue {
  const path = pointer(error.instanceLocation);
  switch (error.keyword) {
    case "type": {
      // "Instance type "x" is invalid. Expected "a", "b"." The expected part is the schema's.
      const types = /Expected "(.*)"\.$/s.exec(error.error)?.[1];
      return { path, expected: types === undefined ? "type" : types.split('", "').join(" | ") };
    }
    case "required": {
      // The property is the schema's, not the instance's.
      const key = /required property "(.*)"\.$/s.exec(error.error)?.[1];
      return { path: key === undefined ? path : [...path, key], expected: "required" };
    }
    case "false":
      return { path, expected: "never" };
    default: {
      const value = schemaAt(error.keywordLocation, schema, lookup);
      const shown = value === undefined ? undefined : JSON.stringify(value);
      return {
        path,
        // A number, string or list of them (an enum) is shown; a subschema is not.
        expected: shown !== undefined && shown.length <= 100 && isPlain(value)
          ? `${error.keyword} ${shown}`
          : error.keyword,
      };
    }
  }
}

/** The segments of a JSON pointer fragment as the validator writes it (`#/a/0`). */
function pointer(location: string): string[] {
  return location.split("/").slice(1).map((segment) => {
    let decoded = segment;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      // Left as it is: no key of the instance is lost, the issue names it as written.
    }
    return decoded.replaceAll("~1", "/").replaceAll("~0", "~");
  });
}

/** What the schema says at a keyword location, following references; `undefined` if unclear. */
function schemaAt(location: string, schema: Schema, lookup: Record<string, unknown>): unknown {
  let node: unknown = schema;
  for (const segment of pointer(location)) {
    if (typeof node !== "object" || node === null) return undefined;
    const fields = node as Record<string, unknown>;
    node = segment === "$ref" && typeof fields.__absolute_ref__ === "string"
      ? lookup[fields.__absolute_ref__]
      : fields[segment];
  }
  return node;
}

/**
 * The upstream arguments' JSON Schema, listed as it is (valibot's metadata is merged into the
 * JSON Schema of `describeTools`, key for key), and checked: each failure an issue the boundary
 * reports as its own INVALID_INPUT issues.
 */
function inputOf(tool: McpToolInfo) {
  const check = schemaCheck(tool.name, "inputSchema", tool.inputSchema);
  return v.pipe(
    v.custom<JsonObject>((value) => typeof value === "object" && value !== null),
    v.rawCheck<JsonObject>(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      for (const issue of check(dataset.value)) {
        addIssue({
          expected: issue.expected,
          received: "a value that does not match",
          message: `Invalid argument: expected ${issue.expected}`,
          // valibot's path type wants at least one item; the root is no item.
          ...(issue.path.length === 0 ? {} : {
            path: issue.path.map((key) => ({
              type: "unknown" as const,
              origin: "value" as const,
              input: undefined,
              key,
              value: undefined,
            })) as [v.IssuePathItem, ...v.IssuePathItem[]],
          }),
        });
      }
    }),
    v.metadata(tool.inputSchema),
  );
}

/** Joins an issue path for the record: dots, as the boundary's own input issues. */
const joined = (issues: SchemaIssue[]) =>
  issues.map(({ path, expected }) => ({ path: path.join("."), expected }));

function wrap(
  client: McpClient,
  tool: McpToolInfo,
  how: {
    cost: number | undefined;
    readOnly: boolean;
    name: string;
    project: McpProjector;
    server: string;
    timeoutMs: number;
    optionsSecond: boolean;
  },
): ToolDefinition<JsonObject, JsonObject> {
  const outputCheck = tool.outputSchema === undefined
    ? undefined
    : schemaCheck(tool.name, "outputSchema", tool.outputSchema);
  return defineTool<JsonObject, JsonObject>({
    name: how.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    readOnly: how.readOnly,
    ...(how.cost === undefined ? {} : { cost: how.cost }),
    input: inputOf(tool),
    timeoutMs: how.timeoutMs,
    execute: async (input, ctx) => {
      const params = {
        name: tool.name,
        arguments: input,
        _meta: { [TOOL_CALL_ID_META]: ctx.toolCallId },
      };
      // A little past the boundary's own stop, so the boundary names the timeout.
      const options = { signal: ctx.signal, timeout: how.timeoutMs + CLIENT_GRACE_MS };
      let result: unknown;
      try {
        result = how.optionsSecond
          ? await client.callTool(params, options)
          : await client.callTool(params, undefined, options);
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        // A JSON-RPC error (or an HTTP status) is what the server answered: kept as the raw.
        const code = (error as { code?: unknown })?.code;
        if (typeof code === "number") {
          return toolError({ error: { code, message: String((error as Error).message) } });
        }
        throw error;
      }
      if (typeof result !== "object" || result === null || Array.isArray(result)) {
        return toolError({ error: { message: "tools/call gave no result object" }, result });
      }
      const answer = result as Record<string, unknown>;
      if (answer.isError === true) return toolError(answer);
      if (outputCheck !== undefined) {
        const structured = answer.structuredContent;
        const issues = structured === undefined
          ? [{ path: ["structuredContent"], expected: "required" }]
          : outputCheck(structured);
        if (issues.length > 0) {
          const message = "structuredContent does not match the tool's outputSchema";
          return toolError({ error: { message, issues: joined(issues) }, result: answer });
        }
      }
      return answer as JsonObject;
    },
    project: (raw, ctx) =>
      how.project(raw, {
        ...ctx,
        tool,
        server: how.server,
        outputSchema: outputCheck !== undefined,
        structuredChecked: outputCheck !== undefined,
      }),
  });
}

/**
 * The projector used unless `options.project` names one: the upstream result for the model,
 * without binary data.
 *
 * - With an `outputSchema`: `content` is the result's `structuredContent`, which the gateway has
 *   checked against it.
 * - Otherwise `content` is the result's content list, each item made plain: a text item is its
 *   text; an image or audio item is `{ type, mimeType }` (its data is left out); a resource link
 *   is `{ type, uri, name }`; an embedded resource is `{ type, uri, mimeType, text }` (a blob is
 *   left out).
 * - `evidence` is NO_EVIDENCE when there is nothing (no items, or empty text only, or empty
 *   structured content: `{}`, `[]`, `null`, `""`), EVIDENCE_FOUND otherwise; `scope` names the
 *   tool and the server.
 *
 * A result past the boundary's agent-result limit fails closed (RESULT_TOO_LARGE); a projector
 * of your own can shorten it instead.
 *
 * @param raw The upstream `CallToolResult`.
 * @param ctx Which tool of which server.
 * @returns The bounded result.
 * @throws {TypeError} When the tool declares an `outputSchema` and `raw` has no
 *   `structuredContent` (the gateway never calls it so).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultProjector } from "@tool-boundary/mcp";
 *
 * const ctx = { tool: { name: "get_tiny_image", inputSchema: {} }, server: "everything" };
 * const raw = {
 *   content: [
 *     { type: "text", text: "Here is an image:" },
 *     { type: "image", mimeType: "image/png", data: "iVBORw0KGgo..." },
 *   ],
 * };
 * assert.deepEqual(defaultProjector(raw, ctx), {
 *   evidence: "EVIDENCE_FOUND",
 *   scope: 'tool "get_tiny_image" of MCP server "everything"',
 *   content: ["Here is an image:", { type: "image", mimeType: "image/png" }],
 * });
 *
 * // A tool with an outputSchema: its structured content, not the text beside it.
 * const weather = { name: "weather", inputSchema: {}, outputSchema: { type: "object" } };
 * const result = {
 *   content: [{ type: "text", text: '{"celsius":21}' }],
 *   structuredContent: { celsius: 21 },
 * };
 * assert.deepEqual(defaultProjector(result, { tool: weather, server: "wx" }).content, {
 *   celsius: 21,
 * });
 * ```
 */
export function defaultProjector(
  raw: Json,
  ctx: Pick<McpProjectContext, "tool" | "server">,
): Projected {
  const scope = `tool "${ctx.tool.name}" of MCP server "${ctx.server}"`;
  if (ctx.tool.outputSchema !== undefined) {
    const content = raw.structuredContent;
    if (content === undefined) {
      throw new TypeError(
        `${ctx.tool.name} declares an outputSchema but sent no structuredContent`,
      );
    }
    const empty = content === null || content === "" ||
      (typeof content === "object" && Object.keys(content).length === 0);
    return { evidence: empty ? "NO_EVIDENCE" : "EVIDENCE_FOUND", scope, content };
  }
  const items = Array.isArray(raw.content) ? raw.content : [];
  const content = items.map(plainItem);
  const empty = content.every((item) => item === "");
  return { evidence: empty ? "NO_EVIDENCE" : "EVIDENCE_FOUND", scope, content };
}

/** One content item for the model: its text, or what it is without its bytes. */
function plainItem(item: unknown): unknown {
  if (typeof item !== "object" || item === null) return item;
  const { type, text, mimeType, uri, name, resource } = item as Record<string, unknown>;
  switch (type) {
    case "text":
      return typeof text === "string" ? text : "";
    case "image":
    case "audio":
      return strings({ type, mimeType });
    case "resource_link":
      return strings({ type, uri, name });
    case "resource": {
      const embedded = typeof resource === "object" && resource !== null
        ? resource as Record<string, unknown>
        : {};
      return strings({ type, uri: embedded.uri, mimeType: embedded.mimeType, text: embedded.text });
    }
    default:
      return strings({ type });
  }
}

/** The fields that are strings: a server may leave any of them out. */
function strings(fields: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields).filter((entry): entry is [string, string] =>
      typeof entry[1] === "string"
    ),
  );
}
