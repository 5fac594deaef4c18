/**
 * The allow-lists for tool call IDs and run IDs.
 *
 * Tool call IDs admit what agent frameworks produce: OpenAI `call_…` and `fc_…`, Anthropic
 * `toolu_…`, UUIDs, AI SDK and nanoid IDs (`-`, `_`), and dotted or colon-separated IDs such as
 * `functions.search:0`. They refuse whitespace, control characters, braces (Redis Cluster hash
 * tags), slashes, quotes and everything else. Run IDs are stricter (no colon), because the run ID
 * sits inside every storage key.
 *
 * @module
 */

/** Tool call IDs: 1 to 256 of `A-Z a-z 0-9 _ - . :`. */
export const TOOL_CALL_ID_PATTERN: RegExp = /^[A-Za-z0-9_.:-]{1,256}$/;

/** Run IDs: 1 to 128 of `A-Z a-z 0-9 _ - .`. */
export const RUN_ID_PATTERN: RegExp = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Tells whether a value is an acceptable tool call ID, exactly as given (no trimming).
 *
 * @param value Anything.
 * @returns `true` when `value` is a string matching {@linkcode TOOL_CALL_ID_PATTERN}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSafeToolCallId } from "@tool-boundary/core";
 * assert.equal(isSafeToolCallId("call_abc123"), true);
 * assert.equal(isSafeToolCallId(" call_abc123"), false);
 * ```
 */
export function isSafeToolCallId(value: unknown): value is string {
  return typeof value === "string" && TOOL_CALL_ID_PATTERN.test(value);
}

/**
 * Tells whether a value is an acceptable run ID, exactly as given.
 *
 * @param value Anything.
 * @returns `true` when `value` is a string matching {@linkcode RUN_ID_PATTERN}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSafeRunId } from "@tool-boundary/core";
 * assert.equal(isSafeRunId("run-42"), true);
 * assert.equal(isSafeRunId("run{42}"), false);
 * ```
 */
export function isSafeRunId(value: unknown): value is string {
  return typeof value === "string" && RUN_ID_PATTERN.test(value);
}
