/**
 * Tool definitions: the executor, the projector, and the facts the boundary checks.
 *
 * @module
 */
import type * as v from "valibot";
import { isWellFormedName } from "./ids.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import type { ProjectedEvidence, RunContext } from "./types.ts";

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
  /** Fires at the earlier of the run deadline and the tool timeout. */
  signal: AbortSignal;
  /** The run. */
  run: RunContext;
  /** The framework's tool call ID. */
  toolCallId: string;
}

/** What a projector receives besides the raw response. */
export interface ProjectContext {
  /** The run. */
  run: RunContext;
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
  /** Runs the tool. Its return value must be plain JSON data. */
  readonly execute: (input: Input, ctx: ExecuteContext) => Raw | Promise<Raw>;
  /** Turns the raw response into the bounded agent result. */
  readonly project: (raw: Raw, ctx: ProjectContext) => ProjectorOutput | Promise<ProjectorOutput>;
  /** Milliseconds the executor may take. @default 30000 */
  readonly timeoutMs?: number;
  /** Calls this tool may begin per run, unless the run's budget names it. */
  readonly budget?: number;
}

/** A tool definition with its type parameters erased, as the boundary holds it. */
// deno-lint-ignore no-explicit-any
export type AnyToolDefinition = ToolDefinition<any, any>;

/**
 * Defines a tool. Checks the definition and returns it frozen.
 *
 * @param definition The tool: name, read-only flag, optional input schema, executor, projector.
 * @returns The same definition, frozen.
 * @throws {TypeError} When the name is empty or holds a lone surrogate, or `execute`/`project`
 *   are not functions.
 * @throws {RangeError} When `timeoutMs` or `budget` is not a positive integer.
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
export function defineTool<Input extends Record<string, unknown>, Raw>(
  definition: ToolDefinition<Input, Raw>,
): ToolDefinition<Input, Raw> {
  if (!isToolName(definition?.name)) {
    throw new TypeError(
      "Cannot define tool: name must be a non-empty string of well-formed Unicode",
    );
  }
  if (typeof definition.readOnly !== "boolean") {
    throw new TypeError(`Cannot define tool "${definition.name}": readOnly must be a boolean`);
  }
  if (typeof definition.execute !== "function" || typeof definition.project !== "function") {
    throw new TypeError(
      `Cannot define tool "${definition.name}": execute and project must be functions`,
    );
  }
  for (const key of ["timeoutMs", "budget"] as const) {
    const value = definition[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      throw new RangeError(
        `Cannot define tool "${definition.name}": ${key} must be a positive integer`,
      );
    }
  }
  return Object.freeze({ ...definition });
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
