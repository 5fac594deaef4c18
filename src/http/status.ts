/**
 * The one table that maps every error code to an HTTP status, and the few codes that exist only
 * at the HTTP layer.
 *
 * @module
 */
import { ERROR_MESSAGES, type ErrorCode } from "../core/errors.ts";

/**
 * Codes the HTTP layer adds for failures that happen before a request reaches the boundary.
 * They never collide with the boundary's {@linkcode ErrorCode}s.
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

/** One of {@linkcode HTTP_ERROR_CODES}. */
export type HttpErrorCode = typeof HTTP_ERROR_CODES[number];

/** Any code an HTTP error body may carry. */
export type AnyErrorCode = ErrorCode | HttpErrorCode;

/** The HTTP statuses this API answers errors with. */
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
 */
export const HTTP_STATUS_BY_CODE: Readonly<Record<AnyErrorCode, ErrorStatus>> = Object.freeze({
  // The request is malformed.
  INVALID_TOOL_CALL_ID: 400,
  INVALID_RUN_ID: 400,
  RUN_MISMATCH: 400,
  INVALID_INPUT: 400,
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
  // Tool-side failures: processed and recorded (see above).
  EXECUTION_FAILED: 200,
  TOOL_TIMEOUT: 200,
  SERIALIZATION_FAILED: 200,
  RESULT_TOO_LARGE: 200,
  PROJECTION_FAILED: 200,
  INVALID_PROJECTION: 200,
  // The service.
  STORE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
});

/** Fixed messages of the HTTP-only codes; like the boundary's, they carry no request data. */
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
