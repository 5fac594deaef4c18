/**
 * Request identity: what makes two tool calls with the same ID the same request.
 *
 * @module
 */
import { canonicalJson, type JsonValue } from "./json.ts";
import { sha256Base64url } from "./ledger.ts";
import { sha256Short, SHORT_SHA256_BYTES } from "./sha256.ts";
import { utf8ByteLength } from "./utf8.ts";

/**
 * The digest a store compares to tell a repeat of a request from another request under the same
 * tool call ID: base64url (no padding) of the SHA-256 of the {@linkcode canonicalJson} of
 * `{ toolName, input }`. A request is the tool and its input: the same input to another tool is
 * another request (TOOL_CALL_CONFLICT, never a duplicate to replay). Two requests equal as JSON
 * values have the same digest whatever their key order.
 *
 * @param toolName The tool called.
 * @param input The recorded input: its JSON text (a string is read as JSON text), or the value
 *   itself.
 * @returns 43 characters of `A-Z a-z 0-9 _ -`.
 * @throws {SyntaxError} When `input` is a string that is not JSON text.
 * @throws {TypeError} When `toolName` is not a string or `input` not JSON data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalJson, requestDigest } from "@tool-boundary/core/store";
 * const digest = await requestDigest("search", '{"query":"disk","limit":5}');
 * assert.equal(digest, await requestDigest("search", { limit: 5, query: "disk" }));
 * assert.notEqual(digest, await requestDigest("search", { limit: 6, query: "disk" }));
 * assert.notEqual(digest, await requestDigest("grep", { limit: 5, query: "disk" }));
 * assert.match(digest, /^[A-Za-z0-9_-]{43}$/);
 * // What is hashed: the canonical JSON of the tool and the input.
 * assert.equal(
 *   canonicalJson({ toolName: "search", input: { query: "disk", limit: 5 } }),
 *   '{"input":{"limit":5,"query":"disk"},"toolName":"search"}',
 * );
 * ```
 */
export function requestDigest(toolName: string, input: string | JsonValue): Promise<string> {
  try {
    const digest = requestDigestNow(toolName, input);
    return typeof digest === "string" ? Promise.resolve(digest) : digest;
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * {@linkcode requestDigest}, computed at once when the request is short (most are): the
 * boundary's call path awaits only the WebCrypto digest of a long request, as an `await` of a
 * value it already has would still cost a turn of the event loop.
 *
 * @param toolName The tool called.
 * @param input The recorded input: its JSON text, or the value itself.
 * @returns The digest, or a promise of it when WebCrypto computes it.
 * @throws {SyntaxError} When `input` is a string that is not JSON text.
 * @throws {TypeError} When `toolName` is not a string or `input` not JSON data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requestDigest, requestDigestNow } from "./digest.ts";
 * const now = requestDigestNow("search", { query: "disk" });
 * assert.equal(typeof now, "string");
 * assert.equal(now, await requestDigest("search", '{"query":"disk"}'));
 * assert.ok(requestDigestNow("search", { query: "x".repeat(600) }) instanceof Promise);
 * ```
 */
export function requestDigestNow(
  toolName: string,
  input: string | JsonValue,
): string | Promise<string> {
  if (typeof toolName !== "string") throw new TypeError("Invalid toolName: expected a string");
  const text = canonicalRequest(toolName, input);
  return sha256Short(text) ?? sha256Base64url(text);
}

/** The canonical JSON of `{ toolName, input }`, its frame written out ("input" sorts first). */
function canonicalRequest(toolName: string, input: string | JsonValue): string {
  const value = typeof input === "string" ? JSON.parse(input) as JsonValue : input;
  return `{"input":${canonicalJson(value)},"toolName":${JSON.stringify(toolName)}}`;
}

/**
 * The digest of a short request, computed the first time it is read: a store that may never
 * need it (`MemoryStore` compares digests only when a key is begun again, and hands one out only
 * from `lookupCall`) leaves the hash undone on every call that is never repeated. It is taken
 * from the recorded request text, which nothing can change, so it is the digest
 * {@linkcode requestDigest} gives of that request whenever it is read.
 *
 * A speed trick; its plain twin is the digest computed at begin ({@linkcode requestDigestNow}),
 * which every other store gets. `tests/core/digest_test.ts` holds the two equal for any short
 * request (property-based). Measured gain, side by side in one process (BENCHMARKS.md, figure
 * 11): a MemoryStore invoke (1 KiB raw) that hashes at begin is 1.27x as slow (median of 5 runs of
 * `BENCH_PLAIN=1 deno task bench:memory`; 1.26x to 1.30x): taking the digest later saves 21% of
 * the invoke.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PendingDigest, requestDigest } from "./digest.ts";
 * const text = '{"query":"disk"}';
 * const pending = PendingDigest.of("search", text, text.length);
 * assert.equal(pending?.value, await requestDigest("search", text));
 * assert.equal(PendingDigest.of("search", text, 600), null);
 * ```
 */
export class PendingDigest {
  #toolName: string;
  #requestJson: string;
  #digest: string | undefined = undefined;

  private constructor(toolName: string, requestJson: string) {
    this.#toolName = toolName;
    this.#requestJson = requestJson;
  }

  /**
   * A pending digest of a request, when its canonical text is short enough to be hashed at
   * once when read.
   *
   * @param toolName The tool called.
   * @param requestJson The recorded request: JSON text of an object.
   * @param requestBytes Its UTF-8 bytes. The canonical text has the same characters in another
   *   order, inside a frame of 22 bytes and the tool name as JSON.
   * @returns The pending digest, or `null` when the request is too long (compute
   *   {@linkcode requestDigest} instead).
   */
  static of(toolName: string, requestJson: string, requestBytes: number): PendingDigest | null {
    if (toolName !== frameName) {
      frameName = toolName;
      frameBytes = 22 + utf8ByteLength(JSON.stringify(toolName));
    }
    return requestBytes + frameBytes < SHORT_SHA256_BYTES
      ? new PendingDigest(toolName, requestJson)
      : null;
  }

  /** The digest, computed on the first read. */
  get value(): string {
    if (this.#digest === undefined) {
      const digest = sha256Short(canonicalRequest(this.#toolName, this.#requestJson));
      if (digest === null) throw new RangeError("Cannot digest: the request is not short");
      this.#digest = digest;
      this.#requestJson = this.#toolName = ""; // no longer needed
    }
    return this.#digest;
  }
}

/** The tool name of the last frame measured, and the frame's UTF-8 bytes. */
let frameName: string | undefined;
let frameBytes = 0;
