/**
 * Tool definitions: the executor, the projector, the facts the boundary checks, and how a
 * model's tool list shows a tool.
 *
 * @module
 */
import type * as v from "valibot";
import { isWellFormedName } from "./ids.ts";
import { jsonSchemaOf } from "./json_schema.ts";
import { checkCost } from "./limits.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import type { RawJson } from "./raw_json.ts";
import type { ProjectedEvidence, RunInstance } from "./types.ts";

/**
 * What a projector returns. `content` is typed loosely for convenience; the boundary checks at
 * run time that it is plain JSON data and refuses anything else with INVALID_PROJECTION.
 */
export interface ProjectorOutput {
  /** EVIDENCE_FOUND, or NO_EVIDENCE for a scoped negative observation. */
  evidence: ProjectedEvidence;
  /** What was searched, where and when. */
  scope: string;
  /** The bounded content for the agent: plain JSON data. */
  content: unknown;
}

/** What an executor receives besides its input. */
export interface ExecuteContext {
  /**
   * Fires at the earlier of the run deadline and the tool timeout (a `TimeoutError`), or when
   * the caller's `signal` given to `invoke` aborts (with the caller's reason).
   */
  signal: AbortSignal;
  /**
   * The run: its ID, deadline and start. (Given a run context, `invoke` passes that context
   * itself; given a run reference, the instance the store's begin answered.)
   */
  run: RunInstance;
  /** The framework's tool call ID. */
  toolCallId: string;
  /**
   * Reports what this call actually spent, in the units of its tool's `cost` (an integer, 0 to
   * `MAX_COST`), while the executor runs: the last value given stands. Complete records it as
   * the record's `cost.spent`, gives the rest of the reservation back to the run's cost budget,
   * and keeps any excess (later calls are refused until the budget covers them). Not called:
   * the call spent its reservation.
   *
   * @throws {RangeError} For a value out of range (nothing is settled).
   * @throws {TypeError} For a tool without a `cost`, or once the tool stage is over.
   */
  settle: (spent: number) => void;
}

/** What a projector receives besides the raw response. */
export interface ProjectContext {
  /** The run, as the executor got it. */
  run: RunInstance;
  /** The framework's tool call ID. */
  toolCallId: string;
  /** The request as recorded: what the tool received, whatever the tool did to it since. */
  input: JsonObject;
}

/**
 * A valibot schema whose output is `Input`: valibot's own `GenericSchema<unknown, Input>`, e.g.
 * `v.object({ query: v.string() })`.
 *
 * @internal Only so that `deno doc --lint` passes: it counts every npm type as private.
 */
export type InputSchema<Input> = v.GenericSchema<unknown, Input>;

/**
 * A tool as the boundary knows it. Create one with {@linkcode defineTool}.
 *
 * @typeParam Input The input type the executor receives (a JSON object).
 * @typeParam Raw The raw response type.
 */
export interface ToolDefinition<
  Input extends Record<string, unknown> = JsonObject,
  Raw = JsonValue,
> {
  /** The name agents call it by: non-empty, well-formed Unicode (no lone surrogate). */
  readonly name: string;
  /** A short description for tool listings. */
  readonly description?: string;
  /** Must be `true`: the boundary refuses writable tools with NOT_READ_ONLY. */
  readonly readOnly: boolean;
  /** Optional valibot schema the input must match (its output is what the tool receives). */
  readonly input?: InputSchema<Input>;
  /**
   * Runs the tool. Its return value must be plain JSON data, JSON text as `rawJson(text)` or a
   * `Response` (read as JSON text: see `rawJson`), or {@linkcode toolError} of what the tool got
   * when it failed (the record ends ERROR EXECUTION_FAILED, the projector is not called).
   */
  readonly execute: (
    input: Input,
    ctx: ExecuteContext,
  ) =>
    | Raw
    | RawJson<Raw>
    | Response
    | ToolError
    | Promise<Raw | RawJson<Raw> | Response | ToolError>;
  /** Turns the raw response into the bounded agent result. */
  readonly project: (raw: Raw, ctx: ProjectContext) => ProjectorOutput | Promise<ProjectorOutput>;
  /** Milliseconds the executor may take. @default 30000 */
  readonly timeoutMs?: number;
  /** Calls this tool may begin per run, unless the run's budget names it. */
  readonly budget?: number;
  /**
   * What one call costs, in units the harness chooses (cents, tokens): an integer from 0 to
   * `MAX_COST`, or a function of the call's input (a copy of the recorded request) that returns
   * one. Begin reserves it against the run's `budget.cost` atomically with the call counts
   * (BUDGET_EXHAUSTED when it does not fit: nothing runs); `ctx.settle(n)` reports what the call
   * spent. A function that throws or returns anything else refuses the call with INVALID_COST.
   * Absent: the tool's calls are not costed, and no cost budget refuses them.
   */
  readonly cost?: number | ((input: Input) => number);
}

/** A tool definition with its type parameters erased, as the boundary holds it. */
// deno-lint-ignore no-explicit-any
export type AnyToolDefinition = ToolDefinition<any, any>;

/**
 * Defines a tool. Checks the definition and returns it frozen.
 *
 * `Input` is the output type of the `input` schema; without a schema it is {@linkcode JsonObject}.
 * `Raw` is what `execute` returns or resolves to, its {@linkcode ToolError} left out, and is what
 * `project` receives: for `rawJson<T>(text)`, `T`. For a `Response` TypeScript cannot tell what
 * its body holds, so the projector names the type it takes (`project: (raw: Hits) => …`, or
 * `JsonValue`); without one, its `raw` is typed `Response` and the tool `JsonValue`.
 *
 * @param definition The tool: name, read-only flag, optional input schema, executor, projector.
 * @returns The same definition, frozen. A tool whose `execute` never returns data (it only ever
 *   fails, with `toolError` or a throw) is typed with `Raw` = `unknown`, so that it fits a
 *   boundary's tool list like any other.
 * @throws {TypeError} When the name is empty or holds a lone surrogate, or `execute`/`project`
 *   are not functions.
 * @throws {RangeError} When `timeoutMs` or `budget` is not a positive integer, or a numeric
 *   `cost` not an integer from 0 to `MAX_COST`.
 * @throws {TypeError} When `cost` is neither a number nor a function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { defineTool } from "@tool-boundary/core";
 *
 * const searchLogs = defineTool({
 *   name: "search_logs",
 *   readOnly: true,
 *   input: v.object({ query: v.string() }),
 *   execute: ({ query }) => ({ query, hits: query === "timeout" ? ["12:01 upstream timeout"] : [] }),
 *   project: (raw) => ({
 *     evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
 *     scope: `logs matching "${raw.query}"`,
 *     content: raw.hits.slice(0, 5),
 *   }),
 * });
 * assert.equal(searchLogs.name, "search_logs");
 * assert.ok(Object.isFrozen(searchLogs));
 * ```
 */
export function defineTool<Input extends Record<string, unknown> = JsonObject, Raw = JsonValue>(
  definition: ToolDefinition<Input, Raw>,
): ToolDefinition<
  Input,
  // `unknown` for an `execute` that never returns data. TypeScript infers `ToolError` (not
  // `never`) from one that only returns `toolError(...)`; ToolError is nominal, so no raw
  // response type is taken for it. A `Response` is taken as such when the projector names no
  // type: what reaches the projector is its body's JSON.
  [Raw] extends [never] ? unknown
    : [Raw] extends [ToolError] ? unknown
    : [Raw] extends [Response] ? JsonValue
    : Raw
> {
  // Read once: every check below is of this copy, and the frozen copy is what was checked.
  const tool = { ...definition };
  const name = tool.name;
  if (!isToolName(name)) {
    throw new TypeError(
      "Cannot define tool: name must be a non-empty string of well-formed Unicode",
    );
  }
  if (typeof tool.readOnly !== "boolean") {
    throw new TypeError(`Cannot define tool "${name}": readOnly must be a boolean`);
  }
  if (typeof tool.execute !== "function" || typeof tool.project !== "function") {
    throw new TypeError(`Cannot define tool "${name}": execute and project must be functions`);
  }
  for (const key of ["timeoutMs", "budget"] as const) {
    const value = tool[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      throw new RangeError(`Cannot define tool "${name}": ${key} must be a positive integer`);
    }
  }
  const cost: unknown = tool.cost;
  if (cost !== undefined && typeof cost !== "function") {
    if (typeof cost !== "number") {
      throw new TypeError(`Cannot define tool "${name}": cost must be a number or a function`);
    }
    checkCost(`cost of tool "${name}"`, cost);
  }
  // Only the never case changes: a projector that takes `never` is never called with data.
  return Object.freeze(tool) as AnyToolDefinition;
}

const TOOL_ERRORS = new WeakSet<object>();

/**
 * What {@linkcode toolError} returns: a tool's failure, with the raw response the record keeps.
 * Only values made by `toolError` (or this constructor) count; a look-alike object or a Proxy of
 * one is a raw response like any other.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolError, toolError } from "@tool-boundary/core";
 * const failure = toolError({ status: 502 });
 * assert.ok(failure instanceof ToolError);
 * assert.deepEqual(failure.raw, { status: 502 });
 * assert.ok(Object.isFrozen(failure));
 * ```
 */
export class ToolError {
  /** What the tool got, kept in the record when it is JSON data within the byte limits. */
  readonly raw: unknown;
  // Makes the type nominal, so that no plain raw response type is mistaken for it.
  readonly #brand = true;

  /**
   * Marks a tool's failure; `toolError(raw)` is the same.
   *
   * @param raw What the tool got.
   */
  constructor(raw: unknown) {
    this.raw = raw;
    Object.freeze(this);
    TOOL_ERRORS.add(this);
  }
}

/**
 * Says that a tool ran and failed, keeping what it got for the harness (an upstream 5xx, an MCP
 * `isError` result). When `execute` returns (or resolves to) it, the record ends ERROR
 * EXECUTION_FAILED with `raw` as its raw response when `raw` is JSON data within `rawBytes` and
 * `recordBytes` (else with none), the projector is not called, and the agent gets
 * EXECUTION_FAILED.
 *
 * @param raw What the tool got.
 * @returns The marked failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, toolError, ToolBoundary } from "@tool-boundary/core";
 *
 * const status = defineTool({
 *   name: "upstream_status",
 *   readOnly: true,
 *   execute: () => toolError({ status: 503, body: "upstream unavailable" }),
 *   project: () => ({ evidence: "NO_EVIDENCE", scope: "never called", content: null }),
 * });
 * const boundary = new ToolBoundary({ tools: [status] });
 * const run = await boundary.startRun();
 * const result = await boundary.invoke(run, {
 *   toolCallId: "call_1", runId: run.runId, toolName: "upstream_status", input: {},
 * });
 * assert.equal(result.status === "ERROR" && result.code, "EXECUTION_FAILED");
 * const record = await boundary.inspect(run.runId, "call_1");
 * assert.equal(record?.errorCode, "EXECUTION_FAILED");
 * assert.deepEqual(record?.raw, { status: 503, body: "upstream unavailable" });
 * ```
 */
export function toolError(raw: unknown): ToolError {
  return new ToolError(raw);
}

/**
 * Tells whether a value was made by {@linkcode toolError}: by identity, so no Proxy or copy can
 * pass for one. Internal to the boundary.
 *
 * @param value Anything.
 * @returns `true` for a marked failure.
 */
export function isToolError(value: unknown): value is ToolError {
  return TOOL_ERRORS.has(value as object);
}

/**
 * Tells whether a value can name a tool: a non-empty string without lone surrogates.
 *
 * @param value Anything.
 * @returns `true` for an acceptable tool name.
 */
export function isToolName(value: unknown): value is string {
  return isWellFormedName(value) && value.length > 0;
}

/**
 * One tool as {@linkcode ToolBoundary.describeTools} lists it, for a model's tool list.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, ToolBoundary, type ToolDescription } from "@tool-boundary/core";
 * const ping = defineTool({
 *   name: "ping",
 *   readOnly: true,
 *   execute: () => ({}),
 *   project: () => ({ evidence: "NO_EVIDENCE", scope: "ping", content: null }),
 * });
 * const [listed]: ToolDescription[] = new ToolBoundary({ tools: [ping] }).describeTools();
 * assert.deepEqual(listed, { name: "ping", readOnly: true, inputSchema: { type: "object" } });
 * ```
 */
export interface ToolDescription {
  /** The tool's name. */
  name: string;
  /** The tool's description, when it has one. */
  description?: string;
  /** Whether the tool is read-only; a writable one is listed too, and refused NOT_READ_ONLY. */
  readOnly: boolean;
  /** JSON Schema (2020-12) of the input: the tool's valibot schema, or `{ type: "object" }`. */
  inputSchema: JsonObject;
}

/**
 * Describes a tool as {@linkcode ToolDescription} says.
 *
 * @param tool A tool of the boundary.
 * @returns Its name, description, read-only flag and input schema.
 */
export function describeTool(tool: AnyToolDefinition): ToolDescription {
  let inputSchema: JsonObject = { type: "object" };
  if (tool.input !== undefined) {
    try {
      inputSchema = jsonSchemaOf(tool.input, true) as JsonObject;
    } catch {
      // A schema the converter cannot read is still checked at every call; listed as an object.
    }
  }
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    readOnly: tool.readOnly,
    inputSchema,
  };
}
