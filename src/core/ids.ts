/**
 * The allow-lists for tool call IDs and run IDs.
 *
 * Tool call IDs admit what agent frameworks produce: OpenAI `call_…` and `fc_…`, Anthropic
 * `toolu_…`, UUIDs, AI SDK and nanoid IDs (`-`, `_`), and dotted or colon-separated IDs such as
 * `functions.search:0`. They refuse whitespace, control characters, braces (Redis Cluster hash
 * tags), slashes, quotes and everything else. Run IDs are stricter (no colon), because the run ID
 * sits inside every storage key.
 *
 * Neither may be made of dots only: IDs travel in URL paths (`/v1/runs/{runId}/...`), where URL
 * parsing removes the segments `.` and `..` (also written `%2E`), so such an ID would name another
 * route. Refusing them where runs and records are created (the boundary, both stores, the HTTP
 * app) means no run or record ever has one.
 *
 * @module
 */

/** Tool call IDs: 1 to 256 of `A-Z a-z 0-9 _ - . :`, not dots only. */
export const TOOL_CALL_ID_PATTERN: RegExp = /^(?!\.+$)[A-Za-z0-9_.:-]{1,256}$/;

/** Run IDs: 1 to 128 of `A-Z a-z 0-9 _ - .`, not dots only. */
export const RUN_ID_PATTERN: RegExp = /^(?!\.+$)[A-Za-z0-9_.-]{1,128}$/;

/**
 * The `_meta` key of an MCP `tools/call` that carries the framework's tool call ID: read by the
 * app's MCP route (`@tool-boundary/core/hono`), sent upstream by the MCP gateway
 * (`@tool-boundary/mcp`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TOOL_CALL_ID_META } from "@tool-boundary/core/harness";
 * const params = { name: "search", arguments: {}, _meta: { [TOOL_CALL_ID_META]: "call_1" } };
 * assert.equal(params._meta["io.tool-boundary/toolCallId"], "call_1");
 * ```
 */
export const TOOL_CALL_ID_META = "io.tool-boundary/toolCallId";

/** A UTF-16 code unit that is half of a pair with its other half missing. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Tells whether a value is an acceptable tool call ID, exactly as given (no trimming).
 *
 * The same answer as testing {@linkcode TOOL_CALL_ID_PATTERN}, without a regular expression: one
 * loop over a table of the allowed characters (a property test holds it to the pattern). The last
 * ID accepted is kept, so that the boundary and its store checking the same call's ID ask again
 * at the cost of one string comparison: a string never changes, so an equal one is as valid.
 *
 * @param value Anything.
 * @returns `true` when `value` is a string matching {@linkcode TOOL_CALL_ID_PATTERN}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSafeToolCallId } from "@tool-boundary/core/store";
 * assert.equal(isSafeToolCallId("call_abc123"), true);
 * assert.equal(isSafeToolCallId(" call_abc123"), false);
 * ```
 */
export function isSafeToolCallId(value: unknown): value is string {
  if (typeof value !== "string") return false;
  if (value === lastToolCallId) return true;
  if (!allowedId(value, 256, TOOL_CALL_ID_UNITS)) return false;
  lastToolCallId = value;
  return true;
}

/**
 * Tells whether a value is an acceptable run ID, exactly as given.
 *
 * The same answer as testing {@linkcode RUN_ID_PATTERN} (see {@linkcode isSafeToolCallId}); the
 * last run ID accepted is kept, as every call of a run names it again.
 *
 * @param value Anything.
 * @returns `true` when `value` is a string matching {@linkcode RUN_ID_PATTERN}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSafeRunId } from "@tool-boundary/core/store";
 * assert.equal(isSafeRunId("run-42"), true);
 * assert.equal(isSafeRunId("run{42}"), false);
 * ```
 */
export function isSafeRunId(value: unknown): value is string {
  if (typeof value !== "string") return false;
  if (value === lastRunId) return true;
  if (!allowedId(value, 128, RUN_ID_UNITS)) return false;
  lastRunId = value;
  return true;
}

/** The last tool call ID and run ID accepted (a string equal to one is as valid). */
let lastToolCallId: string | null = null;
let lastRunId: string | null = null;

/**
 * A table of the UTF-16 code units below 128 that `units` lists: 1 allowed, 0 not.
 *
 * @param units The allowed characters (ASCII).
 * @returns The table, for {@linkcode allowedId}.
 */
export function unitTable(units: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < units.length; i++) table[units.charCodeAt(i)] = 1;
  return table;
}

const ID_UNITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";
/** `A-Z a-z 0-9 _ . : -`, as in {@linkcode TOOL_CALL_ID_PATTERN}. */
const TOOL_CALL_ID_UNITS = unitTable(`${ID_UNITS}:`);
/** `A-Z a-z 0-9 _ . -`, as in {@linkcode RUN_ID_PATTERN}. */
const RUN_ID_UNITS = unitTable(ID_UNITS);
const DOT = 0x2e;

/**
 * Tells whether a string has 1 to `maxLength` code units, each one `table` allows, and is not
 * dots only (which a table without `.` refuses anyway).
 *
 * @param value A string.
 * @param maxLength The most code units.
 * @param table From {@linkcode unitTable}.
 * @returns Whether the string is allowed.
 */
export function allowedId(value: string, maxLength: number, table: Uint8Array): boolean {
  const length = value.length;
  if (length < 1 || length > maxLength) return false;
  let dotsOnly = true;
  for (let i = 0; i < length; i++) {
    const unit = value.charCodeAt(i);
    if (unit > 127 || table[unit] === 0) return false;
    if (unit !== DOT) dotsOnly = false;
  }
  return !dotsOnly;
}

/**
 * Tells whether a value is a string of well-formed Unicode: no lone surrogate. A tool name must be
 * one, because on the wire (JSON to Redis, UTF-8 over HTTP) a lone surrogate becomes U+FFFD, and
 * two tools' names, and so their budgets, would become one.
 *
 * @param value Anything.
 * @returns `true` when `value` is a string without lone surrogates (the empty string included).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isWellFormedName } from "./ids.ts";
 * assert.equal(isWellFormedName("search_logs"), true);
 * assert.equal(isWellFormedName("emoji \u{1F600}"), true);
 * assert.equal(isWellFormedName("half \ud83d"), false);
 * ```
 */
export function isWellFormedName(value: unknown): value is string {
  return typeof value === "string" && !LONE_SURROGATE.test(value);
}
