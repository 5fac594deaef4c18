/**
 * The closed set of error codes the boundary can report, each with a fixed message that
 * carries no data from the call.
 *
 * @module
 */

/**
 * Every error code, in a stable order. The strings never change once published.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ERROR_CODES } from "@tool-boundary/core";
 * assert.ok(ERROR_CODES.includes("DUPLICATE_TOOL_CALL"));
 * ```
 */
export const ERROR_CODES = [
  "INVALID_TOOL_CALL_ID",
  "INVALID_RUN_ID",
  "RUN_MISMATCH",
  "UNKNOWN_TOOL",
  "INVALID_INPUT",
  "REQUEST_TOO_LARGE",
  "UNAUTHORIZED",
  "NOT_READ_ONLY",
  "RUN_NOT_FOUND",
  "RUN_ALREADY_EXISTS",
  "RUN_INACTIVE",
  "DEADLINE_EXCEEDED",
  "DUPLICATE_TOOL_CALL",
  "TOOL_BUDGET_EXHAUSTED",
  "RUN_BUDGET_EXHAUSTED",
  "EXECUTION_FAILED",
  "TOOL_TIMEOUT",
  "SERIALIZATION_FAILED",
  "RESULT_TOO_LARGE",
  "PROJECTION_FAILED",
  "INVALID_PROJECTION",
  "STORE_UNAVAILABLE",
  "RECORD_EXPIRED",
  "ILLEGAL_TRANSITION",
  "CANCELLED",
  "TOOL_CALL_CONFLICT",
  "OUTCOME_UNKNOWN",
  "RECORD_NOT_FOUND",
  "TIMESTAMP_UNAVAILABLE",
  "ARCHIVE_UNAVAILABLE",
  "BUDGET_EXHAUSTED",
  "INVALID_COST",
] as const;

/** One of {@linkcode ERROR_CODES}. */
export type ErrorCode = typeof ERROR_CODES[number];

/**
 * The fixed, human-readable message for each code. Messages never contain data from the call,
 * so they are safe to show to an agent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ERROR_MESSAGES } from "@tool-boundary/core";
 * assert.equal(ERROR_MESSAGES.TOOL_TIMEOUT, "The tool did not finish in time.");
 * ```
 */
export const ERROR_MESSAGES: Readonly<Record<ErrorCode, string>> = Object.freeze({
  INVALID_TOOL_CALL_ID: "The tool call ID is missing or not in the accepted format.",
  INVALID_RUN_ID: "The run ID is missing or not in the accepted format.",
  RUN_MISMATCH: "The tool call belongs to a different run.",
  UNKNOWN_TOOL: "No tool with that name is available.",
  INVALID_INPUT: "The tool input must be a JSON object that matches the tool's input schema.",
  REQUEST_TOO_LARGE: "The tool input is larger than the request limit.",
  UNAUTHORIZED: "This tool call is not authorized.",
  NOT_READ_ONLY: "Only read-only tools may be called through this boundary.",
  RUN_NOT_FOUND: "The run does not exist or has expired.",
  RUN_ALREADY_EXISTS: "A run with that ID already exists.",
  RUN_INACTIVE: "The run has ended; no further tool calls are accepted.",
  DEADLINE_EXCEEDED: "The run's deadline has passed.",
  DUPLICATE_TOOL_CALL: "A tool call with this ID was already submitted in this run.",
  TOOL_BUDGET_EXHAUSTED: "The call budget for this tool in this run is used up.",
  RUN_BUDGET_EXHAUSTED: "The call budget for this run is used up.",
  EXECUTION_FAILED: "The tool failed while running.",
  TOOL_TIMEOUT: "The tool did not finish in time.",
  SERIALIZATION_FAILED: "The tool returned data that cannot be stored as JSON.",
  RESULT_TOO_LARGE: "The tool result is larger than the allowed limit.",
  PROJECTION_FAILED: "The tool result could not be projected for the agent.",
  INVALID_PROJECTION: "The projected result is not valid.",
  STORE_UNAVAILABLE: "The invocation store is unavailable; the outcome was not recorded.",
  RECORD_EXPIRED: "The invocation record expired before it could be completed.",
  ILLEGAL_TRANSITION: "The invocation record is not in a state that allows this change.",
  CANCELLED: "The tool call was cancelled by its caller.",
  TOOL_CALL_CONFLICT: "A tool call with this ID was already submitted with a different request.",
  OUTCOME_UNKNOWN: "The tool call began but its outcome was not recorded.",
  RECORD_NOT_FOUND: "No tool call with this ID was begun in this run.",
  TIMESTAMP_UNAVAILABLE: "The time stamping authority gave no timestamp; the run was not sealed.",
  ARCHIVE_UNAVAILABLE: "The archive did not keep the sealed run; ending the run again writes it.",
  BUDGET_EXHAUSTED: "The cost budget for this run does not cover this call.",
  INVALID_COST: "The tool's cost for this call is not a whole number of units in range.",
});

const CODE_SET: ReadonlySet<string> = new Set(ERROR_CODES);

/**
 * Tells whether a value is one of the {@linkcode ERROR_CODES}.
 *
 * @param value Anything.
 * @returns `true` when `value` is a known error code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isErrorCode } from "@tool-boundary/core";
 * assert.equal(isErrorCode("RESULT_TOO_LARGE"), true);
 * assert.equal(isErrorCode("nope"), false);
 * ```
 */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && CODE_SET.has(value);
}

/**
 * Thrown by harness-side operations (`startRun`, `endRun`, store adapters) when they fail for
 * a reason a caller may want to handle. The message is the fixed message of the code; internal
 * detail, if any, is kept in `cause` and must not be shown to an agent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BoundaryError } from "@tool-boundary/core";
 * const err = new BoundaryError("RUN_NOT_FOUND");
 * assert.equal(err.code, "RUN_NOT_FOUND");
 * assert.equal(err.message, "The run does not exist or has expired.");
 * ```
 */
export class BoundaryError extends Error {
  /** The stable error code. */
  readonly code: ErrorCode;

  /**
   * Creates the error for a code.
   *
   * @param code The error code; the message is the code's fixed message.
   * @param options `cause`: internal detail for logs, never for an agent.
   */
  constructor(code: ErrorCode, options?: { cause?: unknown }) {
    super(ERROR_MESSAGES[code], options);
    this.name = "BoundaryError";
    this.code = code;
  }
}
