/**
 * The one table that maps every error code to an HTTP status, the few codes that exist only at
 * the HTTP layer, and the error bodies written with them.
 *
 * @module
 */
import type { Context } from "hono";
import { ERROR_MESSAGES, type ErrorCode } from "../core/errors.ts";
import type { BoundaryResult, InputIssue } from "../core/types.ts";

/**
 * Codes the HTTP layer adds for failures that happen before a request reaches the boundary.
 * They never collide with the boundary's {@linkcode ErrorCode}s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ERROR_CODES } from "@tool-boundary/core";
 * import { HTTP_ERROR_CODES } from "@tool-boundary/core/hono";
 * assert.ok(HTTP_ERROR_CODES.includes("METHOD_NOT_ALLOWED"));
 * assert.ok(HTTP_ERROR_CODES.every((code) => !(ERROR_CODES as readonly string[]).includes(code)));
 * ```
 */
export const HTTP_ERROR_CODES = [
  "INVALID_REQUEST",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "UNSUPPORTED_MEDIA_TYPE",
  "INTERNAL_ERROR",
] as const;

/**
 * One of {@linkcode HTTP_ERROR_CODES}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HTTP_STATUS_BY_CODE, type HttpErrorCode } from "@tool-boundary/core/hono";
 * const code: HttpErrorCode = "FORBIDDEN";
 * assert.equal(HTTP_STATUS_BY_CODE[code], 403);
 * ```
 */
export type HttpErrorCode = typeof HTTP_ERROR_CODES[number];

/**
 * {@linkcode ErrorCode} of `@tool-boundary/core` (named here for `deno doc --lint` of this entry).
 * @internal
 */
type BoundaryErrorCode = ErrorCode;

/**
 * Any code an HTTP error body may carry: the boundary's and {@linkcode HTTP_ERROR_CODES}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type AnyErrorCode, HTTP_STATUS_BY_CODE } from "@tool-boundary/core/hono";
 * const codes: AnyErrorCode[] = ["DUPLICATE_TOOL_CALL", "NOT_FOUND"];
 * assert.deepEqual(codes.map((code) => HTTP_STATUS_BY_CODE[code]), [409, 404]);
 * ```
 */
export type AnyErrorCode = BoundaryErrorCode | HttpErrorCode;

/**
 * The HTTP statuses this API answers errors with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ErrorStatus, HTTP_STATUS_BY_CODE } from "@tool-boundary/core/hono";
 * const status: ErrorStatus = HTTP_STATUS_BY_CODE.RUN_BUDGET_EXHAUSTED;
 * assert.equal(status, 429);
 * ```
 */
export type ErrorStatus =
  | 200
  | 400
  | 401
  | 403
  | 404
  | 405
  | 409
  | 410
  | 413
  | 415
  | 429
  | 500
  | 503;

/**
 * Error code -> HTTP status. Tool-side failures (the tool threw, timed out, or returned data that
 * cannot be stored or projected) are 200: the call was accepted, executed and recorded as an
 * ERROR record, exactly as a READY call is; the body's `status` says ERROR. A 4xx would tell HTTP
 * clients and retry middleware that the request itself was wrong, and a retry with the same
 * tool call ID can only ever get DUPLICATE_TOOL_CALL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HTTP_STATUS_BY_CODE } from "@tool-boundary/core/hono";
 * assert.equal(HTTP_STATUS_BY_CODE.EXECUTION_FAILED, 200); // executed and recorded as ERROR
 * assert.equal(HTTP_STATUS_BY_CODE.RUN_NOT_FOUND, 404);
 * assert.equal(HTTP_STATUS_BY_CODE.STORE_UNAVAILABLE, 503);
 * ```
 */
export const HTTP_STATUS_BY_CODE: Readonly<Record<AnyErrorCode, ErrorStatus>> = Object.freeze({
  // The request is malformed.
  INVALID_TOOL_CALL_ID: 400,
  INVALID_RUN_ID: 400,
  RUN_MISMATCH: 400,
  INVALID_INPUT: 400,
  INVALID_COST: 400,
  INVALID_REQUEST: 400,
  REQUEST_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  // Who may do what.
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  UNAUTHORIZED: 403,
  NOT_READ_ONLY: 403,
  // What does not exist.
  NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  UNKNOWN_TOOL: 404,
  RECORD_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  // Conflicts with the state of the run or record.
  DUPLICATE_TOOL_CALL: 409,
  TOOL_CALL_CONFLICT: 409,
  OUTCOME_UNKNOWN: 409,
  RUN_ALREADY_EXISTS: 409,
  RUN_INACTIVE: 409,
  ILLEGAL_TRANSITION: 409,
  DEADLINE_EXCEEDED: 410,
  RECORD_EXPIRED: 410,
  // Budgets.
  TOOL_BUDGET_EXHAUSTED: 429,
  RUN_BUDGET_EXHAUSTED: 429,
  BUDGET_EXHAUSTED: 429,
  // Tool-side failures: processed and recorded (see above).
  EXECUTION_FAILED: 200,
  TOOL_TIMEOUT: 200,
  SERIALIZATION_FAILED: 200,
  RESULT_TOO_LARGE: 200,
  PROJECTION_FAILED: 200,
  INVALID_PROJECTION: 200,
  // The caller's signal stopped the call: an outcome like the above (its record, when begun, ends
  // ERROR CANCELLED), not a fault of the request.
  CANCELLED: 200,
  // The service.
  STORE_UNAVAILABLE: 503,
  TIMESTAMP_UNAVAILABLE: 503,
  ARCHIVE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
});

/**
 * Fixed messages of the HTTP-only codes; like the boundary's, they carry no request data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { createApp, HTTP_ERROR_MESSAGES } from "@tool-boundary/core/hono";
 *
 * const app = createApp({
 *   boundary: new ToolBoundary({ tools: [] }),
 *   agentToken: "agent-token-0123456789",
 *   harnessToken: "harness-token-0123456789",
 * });
 * const res = await app.request("/v2/nothing/here");
 * assert.deepEqual(await res.json(), {
 *   status: "ERROR",
 *   code: "NOT_FOUND",
 *   message: HTTP_ERROR_MESSAGES.NOT_FOUND,
 * });
 * ```
 */
export const HTTP_ERROR_MESSAGES: Readonly<Record<HttpErrorCode, string>> = Object.freeze({
  INVALID_REQUEST: "The request body is not valid JSON of the expected shape.",
  UNAUTHENTICATED: "A valid bearer token is required.",
  FORBIDDEN: "This token may not use this route.",
  NOT_FOUND: "Not found.",
  METHOD_NOT_ALLOWED: "This method is not allowed on this route.",
  UNSUPPORTED_MEDIA_TYPE: "The request body must be sent as application/json.",
  INTERNAL_ERROR: "The server failed to handle the request.",
});

/**
 * The fixed message of any code.
 *
 * @param code A boundary or HTTP error code.
 * @returns Its fixed message.
 */
export function messageFor(code: AnyErrorCode): string {
  return (ERROR_MESSAGES as Record<string, string>)[code] ??
    HTTP_ERROR_MESSAGES[code as HttpErrorCode];
}

/** Every error body outside the tool-call route's `BoundaryResult`. */
export interface ErrorBody {
  /** ERROR. */
  status: "ERROR";
  /** The stable code. */
  code: AnyErrorCode;
  /** The fixed message of the code. */
  message: string;
  /** For a body that failed its schema: field paths and expected types (no values). */
  issues?: InputIssue[];
}

/** An error body with the fixed message and the status from the table. */
export function errorResponse(c: Context, code: AnyErrorCode, issues?: InputIssue[]): Response {
  const body: ErrorBody = {
    status: "ERROR",
    code,
    message: messageFor(code),
    ...(issues === undefined ? {} : { issues }),
  };
  return c.json(body, HTTP_STATUS_BY_CODE[code]);
}

/** A tool-call refusal in the BoundaryResult shape the agent gets from the boundary. */
export function callError(toolCallId: string | null, code: ErrorCode): BoundaryResult {
  return { status: "ERROR", toolCallId, code, message: messageFor(code) };
}
