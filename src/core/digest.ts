/**
 * Request identity: what makes two tool calls with the same ID the same request.
 *
 * @module
 */
import { canonicalJson, type JsonValue } from "./json.ts";

/**
 * The digest a store compares to tell a repeat of a request from another request under the same
 * tool call ID: base64url (no padding) of the SHA-256 of the request's {@linkcode canonicalJson},
 * so two requests equal as JSON values have the same digest whatever their key order.
 *
 * @param request The recorded request: its JSON text (a string is read as JSON text), or the
 *   value itself.
 * @returns 43 characters of `A-Z a-z 0-9 _ -`.
 * @throws {SyntaxError} When a string is not JSON text.
 * @throws {TypeError} When the value is not JSON data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requestDigest } from "@tool-boundary/core";
 * const digest = await requestDigest('{"query":"disk","limit":5}');
 * assert.equal(digest, await requestDigest({ limit: 5, query: "disk" }));
 * assert.notEqual(digest, await requestDigest({ limit: 6, query: "disk" }));
 * assert.match(digest, /^[A-Za-z0-9_-]{43}$/);
 * ```
 */
export async function requestDigest(request: string | JsonValue): Promise<string> {
  const value = typeof request === "string" ? JSON.parse(request) as JsonValue : request;
  const bytes = new TextEncoder().encode(canonicalJson(value));
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let binary = "";
  for (const byte of hash) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
