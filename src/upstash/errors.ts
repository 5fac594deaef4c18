/**
 * Turning client and Redis failures into `BoundaryError("STORE_UNAVAILABLE")` whose `cause`
 * carries no command, argument, key, URL or token.
 *
 * @module
 */
import { BoundaryError } from "../core/errors.ts";

const MAX_DETAIL = 200;
/** How many causes deep a failure is kept (a fetch error's cause, and that cause's). */
const MAX_CAUSES = 4;

/**
 * A failure of the Redis client or of Redis, stripped of everything the request carried. The
 * `@upstash/redis` error message ends with `command was: <the whole request>`, keys and
 * payloads included; only the text before it is kept. It is the `cause` of the
 * `BoundaryError("STORE_UNAVAILABLE")` that `UpstashStore` throws. Its own `cause` is the
 * failure's cause, redacted the same way (a `fetch failed` keeps why: connection refused, a name
 * that does not resolve), up to four deep.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BoundaryError } from "@tool-boundary/core";
 * import { RedisStoreError } from "@tool-boundary/core/upstash";
 *
 * function describe(error: unknown): string {
 *   if (error instanceof BoundaryError && error.cause instanceof RedisStoreError) {
 *     return `${error.code}: ${error.cause.name}: ${error.cause.message}`;
 *   }
 *   return "unknown";
 * }
 * const cause = new RedisStoreError("UpstashError", "WRONGTYPE Operation against a key");
 * assert.equal(
 *   describe(new BoundaryError("STORE_UNAVAILABLE", { cause })),
 *   "STORE_UNAVAILABLE: UpstashError: WRONGTYPE Operation against a key",
 * );
 * const unreachable = new RedisStoreError("TypeError", "fetch failed", {
 *   cause: new RedisStoreError("Error", "connect ECONNREFUSED 127.0.0.1:6380"),
 * });
 * assert.equal((unreachable.cause as Error).message, "connect ECONNREFUSED 127.0.0.1:6380");
 * ```
 */
export class RedisStoreError extends Error {
  /**
   * Creates a redacted error.
   *
   * @param name The original error's name, e.g. `UpstashError` or `TypeError`.
   * @param message The redacted text.
   * @param options The redacted cause, when the failure had one.
   */
  constructor(name: string, message: string, options?: { cause?: RedisStoreError }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = name;
  }
}

/**
 * An error of Redis or of the REST API as `@upstash/redis` throws one: named `UpstashError`, its
 * message Redis's text (or the answer's status), never the command.
 *
 * @param text The error text of the answer; anything else reads "Redis command failed".
 * @returns The error.
 */
export function upstashError(text: unknown): Error {
  const error = new Error(typeof text === "string" ? text : "Redis command failed");
  error.name = "UpstashError";
  return error;
}

/**
 * Redacts a thrown value: keeps its name and the Redis error text before `command was`,
 * without URLs, and at most 200 characters; and its cause, redacted the same way.
 *
 * @param error Anything thrown by the client.
 * @param depth How deep in a cause chain `error` is.
 * @returns A safe error for logs.
 */
export function redactError(error: unknown, depth = 0): RedisStoreError {
  if (error instanceof RedisStoreError) return error;
  const cause = error instanceof Error && error.cause != null && depth < MAX_CAUSES
    ? redactError(error.cause, depth + 1)
    : undefined;
  const options = cause === undefined ? undefined : { cause };
  const name = error instanceof Error && /^[A-Za-z]{1,64}$/.test(error.name) ? error.name : "Error";
  if (name === "UpstashJSONParseError") {
    // Its message quotes the response body.
    return new RedisStoreError(name, "Unable to parse the response body", options);
  }
  const text = error instanceof Error ? error.message : typeof error === "string" ? error : "";
  let detail = text;
  const cut = detail.search(/,?\s*command was:/i);
  if (cut >= 0) detail = detail.slice(0, cut);
  detail = detail.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S*/gi, "<url>").trim();
  if (detail.length > MAX_DETAIL) detail = `${detail.slice(0, MAX_DETAIL)}…`;
  return new RedisStoreError(name, detail || "Redis request failed", options);
}

/**
 * Wraps a failure for the boundary, which reports STORE_UNAVAILABLE.
 *
 * @param error Anything thrown by the client, or a reply the store could not read.
 * @returns The error to throw.
 */
export function storeUnavailable(error: unknown): BoundaryError {
  if (error instanceof BoundaryError) return error;
  return new BoundaryError("STORE_UNAVAILABLE", { cause: redactError(error) });
}

/**
 * Tells whether the client failed because Redis does not know the script's SHA (`NOSCRIPT`).
 * Looks only at the Redis error text, never at the echoed command.
 *
 * @param error Anything thrown by the client.
 * @returns `true` for a NOSCRIPT error.
 */
export function isNoScript(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const cut = error.message.search(/command was:/i);
  const text = cut >= 0 ? error.message.slice(0, cut) : error.message;
  return /\bNOSCRIPT\b/.test(text);
}
