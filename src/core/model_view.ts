/**
 * What a model is shown for a tool call: the one home of that view. Every adapter, the MCP route
 * and the tracing observer hand the model (or a span) exactly this, each in its own framework's
 * envelope.
 *
 * @module
 */
import { ERROR_MESSAGES, type ErrorCode, isErrorCode } from "./errors.ts";
import type { JsonValue } from "./json.ts";
import type { InputIssue, ProjectedEvidence } from "./types.ts";

/**
 * What a model is shown for one call: for a READY call the bounded projection, nothing else; for
 * an ERROR the code, its fixed message, and schema issues if any.
 */
export type ModelView =
  | {
    /** EVIDENCE_FOUND, or NO_EVIDENCE for a scoped negative observation. */
    evidence: ProjectedEvidence;
    /** What was searched, where and when. */
    scope: string;
    /** The bounded content. */
    content: JsonValue;
  }
  | {
    /** The stable error code. */
    code: ErrorCode;
    /** The fixed message of the code. */
    message: string;
    /** For INVALID_INPUT from a schema: each failing path and what was expected (no values). */
    issues?: InputIssue[];
  };

/** The view of an ERROR. */
type ErrorView = Extract<ModelView, { code: ErrorCode }>;

/** The view of anything that is not a boundary result: nothing foreign reaches a model. */
const FAILED: ErrorView = Object.freeze({
  code: "EXECUTION_FAILED",
  message: ERROR_MESSAGES.EXECUTION_FAILED,
});

/**
 * What a model is shown for a boundary result: READY's `{ evidence, scope, content }`, ERROR's
 * `{ code, message }` with the code's fixed message (plus `issues`, each only `{ path, expected }`,
 * for INVALID_INPUT). The
 * status, tool call ID and `replayed` mark are the harness's and are left out. Anything that is
 * not a boundary result (a framework that lost the result, a thrown value) is shown as
 * EXECUTION_FAILED with its fixed message, never as itself.
 *
 * @param result A `BoundaryResult`, as `invoke` or `recall` returned it.
 * @returns A fresh object, safe to serialize for the model.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ERROR_MESSAGES, modelView } from "@tool-boundary/core";
 *
 * assert.deepEqual(
 *   modelView({
 *     status: "READY", toolCallId: "call_1", replayed: true,
 *     evidence: "NO_EVIDENCE", scope: "logs of api, last hour", content: [],
 *   }),
 *   { evidence: "NO_EVIDENCE", scope: "logs of api, last hour", content: [] },
 * );
 * assert.deepEqual(
 *   modelView({
 *     status: "ERROR", toolCallId: "call_2", code: "INVALID_INPUT", message: "ignored",
 *     issues: [{ path: "query", expected: "string" }],
 *   }),
 *   {
 *     code: "INVALID_INPUT",
 *     message: ERROR_MESSAGES.INVALID_INPUT,
 *     issues: [{ path: "query", expected: "string" }],
 *   },
 * );
 * assert.deepEqual(modelView(new Error("secret")), {
 *   code: "EXECUTION_FAILED",
 *   message: "The tool failed while running.",
 * });
 * ```
 */
export function modelView(result: unknown): ModelView {
  if (typeof result !== "object" || result === null) return { ...FAILED };
  const { status } = result as { status?: unknown };
  if (status === "READY") {
    const { evidence, scope, content } = result as Extract<ModelView, { evidence: unknown }>;
    return { evidence, scope, content };
  }
  if (status !== "ERROR") return { ...FAILED };
  const { code, issues } = result as ErrorView;
  if (!isErrorCode(code)) return { ...FAILED };
  // The code's own fixed message, whatever the object says: it can carry nothing from the call.
  const message = ERROR_MESSAGES[code];
  return !Array.isArray(issues) ? { code, message } : {
    code,
    message,
    issues: issues.map(({ path, expected }) => ({ path, expected })),
  };
}

/**
 * The model view as JSON text, for frameworks whose tool results are strings.
 *
 * @param result A `BoundaryResult`.
 * @returns `JSON.stringify(modelView(result))`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modelViewText } from "@tool-boundary/core";
 *
 * const text = modelViewText({
 *   status: "READY", toolCallId: "call_1", evidence: "EVIDENCE_FOUND", scope: "s", content: 1,
 * });
 * assert.equal(text, '{"evidence":"EVIDENCE_FOUND","scope":"s","content":1}');
 * ```
 */
export function modelViewText(result: unknown): string {
  return JSON.stringify(modelView(result));
}
