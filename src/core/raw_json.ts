/**
 * Raw responses that are already JSON text: `rawJson(text)`, and the `Response` an executor may
 * return, read as text within the raw byte limit.
 *
 * @module
 */
import type { JsonValue } from "./json.ts";

const RAW_TEXTS = new WeakSet<object>();

/**
 * What {@linkcode rawJson} returns: a raw response given as its JSON text. Only values made by
 * `rawJson` (or this constructor) count, by identity; a look-alike object or a Proxy of one is a
 * raw response like any other (and refused, as it is no plain data).
 *
 * @typeParam T What the text parses to: the projector's `raw` type. Not checked.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RawJson, rawJson } from "@tool-boundary/core";
 * const raw = rawJson('{"hits":[]}');
 * assert.ok(raw instanceof RawJson);
 * assert.equal(raw.text, '{"hits":[]}');
 * assert.ok(Object.isFrozen(raw));
 * assert.throws(() => rawJson(new String("{}") as unknown as string), TypeError);
 * ```
 */
export class RawJson<T = JsonValue> {
  /** The JSON text, as given. */
  readonly text: string;
  /** Never set: only so that `RawJson<A>` and `RawJson<B>` are different types. */
  declare private readonly parsesTo?: T;

  /**
   * Marks a JSON text as a raw response; `rawJson(text)` is the same.
   *
   * @param text The JSON text: a string primitive.
   * @throws {TypeError} When `text` is not a string (a `String` object included: it is not read).
   */
  constructor(text: string) {
    if (typeof text !== "string") {
      throw new TypeError("Cannot make a raw response: rawJson() takes the JSON text as a string");
    }
    this.text = text;
    Object.freeze(this);
    RAW_TEXTS.add(this);
  }
}

/**
 * Gives the boundary a tool's raw response as JSON text it already has (a fetch body, a log
 * search's answer), so that it is parsed once and not copied: `execute` returns (or resolves to)
 * `rawJson(text)`. The text is parsed with `JSON.parse` (a plain value, nothing foreign runs), and
 * the record stores `JSON.stringify` of what was parsed, before the projector gets that value: the
 * record means exactly what the projector saw, with the rules of every raw response (`-0` as `0`,
 * a number past double precision as the double it parsed to, a member name given twice as its
 * last value, lone surrogates escaped, no whitespace). A text that is not JSON, or parses to a
 * number JSON cannot hold (`1e400`), or nests deeper than `rawDepth`, is SERIALIZATION_FAILED; a
 * text of more than `rawBytes` UTF-8 bytes is RESULT_TOO_LARGE unparsed, and the stored text is
 * held to `rawBytes` and `recordBytes` as any raw response. `toolError(rawJson(text))` keeps the
 * text the same way.
 *
 * An executor may also return a `Response` (`fetch`'s): a 2xx whose `Content-Type` is JSON
 * (`application/json`, or any `+json` type) is read as UTF-8 text and taken as `rawJson` of it;
 * its body is counted as it arrives, and one past `rawBytes` is RESULT_TOO_LARGE without being
 * read further. Any other response (a status outside 200-299, or another content type) is the
 * tool's failure, as `toolError({ status, contentType, body })` with the body as text. A body is
 * decoded as `Response.text()` decodes it (a byte that is not UTF-8 is U+FFFD); one whose stream
 * fails is EXECUTION_FAILED, with what it threw.
 *
 * @typeParam T What the text parses to: the projector's `raw` type. Not checked.
 * @param text The JSON text.
 * @returns The marked text.
 * @throws {TypeError} When `text` is not a string (a `String` object included).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, rawJson, ToolBoundary } from "@tool-boundary/core";
 *
 * const searchLogs = defineTool({
 *   name: "search_logs",
 *   readOnly: true,
 *   execute: () => rawJson<{ hits: string[] }>('{ "hits": ["12:01 timeout"], "n": -0 }'),
 *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "logs", content: raw.hits }),
 * });
 * const boundary = new ToolBoundary({ tools: [searchLogs] });
 * const run = await boundary.startRun();
 * const result = await boundary.invoke(run, {
 *   toolCallId: "call_1", runId: run.runId, toolName: "search_logs", input: {},
 * });
 * assert.deepEqual(result.status === "READY" && result.content, ["12:01 timeout"]);
 * const record = await boundary.inspect(run.runId, "call_1");
 * assert.deepEqual(record?.raw, { hits: ["12:01 timeout"], n: 0 });
 * ```
 */
export function rawJson<T = JsonValue>(text: string): RawJson<T> {
  return new RawJson<T>(text);
}

/**
 * Tells whether a value was made by {@linkcode rawJson}: by identity, so no Proxy or copy can
 * pass for one. Internal to the boundary.
 *
 * @param value Anything.
 * @returns `true` for a marked text.
 */
export function isRawJson(value: unknown): value is RawJson<unknown> {
  return RAW_TEXTS.has(value as object);
}

/** What the boundary reads of a `Response`, each once, through the runtime's own accessors. */
export interface ResponseHead {
  /** The HTTP status. */
  status: number;
  /** The `Content-Type` header, or `null`. */
  contentType: string | null;
  /** The body, or `null` for none. */
  body: ReadableStream<unknown> | null;
}

/** The accessors of the runtime's `Response`, `Headers` and stream readers, read once. */
interface Natives {
  status: (this: unknown) => unknown;
  headers: (this: unknown) => unknown;
  body: (this: unknown) => unknown;
  headerGet: (this: unknown, name: string) => unknown;
  getReader: (this: unknown) => ReadableStreamDefaultReader<unknown>;
  read: (this: unknown) => Promise<ReadableStreamReadResult<unknown>>;
  cancel: (this: unknown, reason?: unknown) => Promise<void>;
  typedArrayTag: (this: unknown) => unknown;
  byteLength: (this: unknown) => number;
}

let natives: Natives | null | undefined;

/**
 * The runtime's own accessors, taken from the prototypes the first time a value may be a
 * `Response` (not at import: most tools never return one), so that a value's own properties, or a
 * getter defined on it, are never what answers. `null` where the runtime has no `Response`.
 */
function nativesOf(): Natives | null {
  if (natives !== undefined) return natives;
  try {
    // Up the chain: the global `Response` may be a subclass (a test harness's, a polyfill's).
    const getter = (proto: object | null, name: string | symbol) => {
      for (; proto !== null; proto = Object.getPrototypeOf(proto)) {
        const get = Object.getOwnPropertyDescriptor(proto, name)?.get;
        if (get !== undefined) return get;
      }
      throw new TypeError(`no ${String(name)} accessor`);
    };
    const readerProto = globalThis.ReadableStreamDefaultReader.prototype;
    const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype) as object;
    natives = {
      status: getter(Response.prototype, "status"),
      headers: getter(Response.prototype, "headers"),
      body: getter(Response.prototype, "body"),
      headerGet: Headers.prototype.get,
      getReader: ReadableStream.prototype.getReader as Natives["getReader"],
      read: readerProto.read,
      cancel: readerProto.cancel,
      typedArrayTag: getter(typedArrayProto, Symbol.toStringTag),
      byteLength: getter(typedArrayProto, "byteLength"),
    };
  } catch {
    natives = null;
  }
  return natives;
}

/**
 * Reads a `Response`'s status, content type and body stream, each once, through the runtime's
 * accessors: their brand checks tell a `Response` from anything else. Internal to the boundary.
 *
 * @param value Anything.
 * @returns What was read, or `null` when the value is not a `Response`.
 * @throws What a Proxy's trap threw, where the runtime's brand check asks the value itself.
 */
export function responseHead(value: unknown): ResponseHead | null {
  const native = nativesOf();
  if (native === null || typeof value !== "object" || value === null) return null;
  let status: unknown;
  try {
    status = native.status.call(value);
  } catch {
    return null; // not a Response
  }
  const type = native.headerGet.call(native.headers.call(value), "content-type");
  const body = native.body.call(value);
  if (typeof status !== "number" || (type !== null && typeof type !== "string")) {
    throw new TypeError("The Response answered a status or a header of the wrong type");
  }
  return { status, contentType: type, body: body as ReadableStream<unknown> | null };
}

/**
 * Whether a media type is JSON: `application/json` or any `+json` subtype, parameters aside.
 *
 * @param contentType A `Content-Type` header, or `null`.
 * @returns `true` for a JSON media type.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isJsonMediaType } from "./raw_json.ts";
 * assert.equal(isJsonMediaType("application/json; charset=utf-8"), true);
 * assert.equal(isJsonMediaType("application/problem+json"), true);
 * assert.equal(isJsonMediaType("text/plain;charset=UTF-8"), false);
 * assert.equal(isJsonMediaType(null), false);
 * ```
 */
export function isJsonMediaType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const semicolon = contentType.indexOf(";");
  const essence = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim()
    .toLowerCase();
  const slash = essence.indexOf("/");
  if (slash <= 0) return false;
  return essence === "application/json" ||
    (essence.endsWith("+json") && essence.length > slash + 1 + "+json".length);
}

/** What {@linkcode readBodyText} answers for a body of more than `maxBytes` bytes. */
export const BODY_TOO_LARGE: unique symbol = Symbol("body too large");

/**
 * Reads a body stream to its end as UTF-8 text, as `Response.text()` decodes it (a leading byte
 * order mark dropped, each byte that is not UTF-8 U+FFFD), counting its bytes as they arrive:
 * past `maxBytes` the stream is cancelled and nothing more is read or kept. Each chunk must be a
 * `Uint8Array` (as `Response.text()` requires) and is decoded once, when the reader gets it: what
 * its bytes were then is the text. Internal to the boundary.
 *
 * @param body The stream, or `null` (the empty text).
 * @param maxBytes The most bytes read.
 * @param onReader Given the reader's cancel once the reader exists, for the caller to stop it.
 * @returns The text, or {@linkcode BODY_TOO_LARGE}.
 * @throws What the stream threw (it errored), or a TypeError for a chunk that is no `Uint8Array`
 *   or a body that is locked or already read.
 */
export async function readBodyText(
  body: ReadableStream<unknown> | null,
  maxBytes: number,
  onReader: (cancel: (reason?: unknown) => void) => void,
): Promise<string | typeof BODY_TOO_LARGE> {
  if (body === null) return "";
  const native = nativesOf()!;
  const reader = native.getReader.call(body);
  const cancel = (reason?: unknown) => {
    try {
      native.cancel.call(reader, reason).catch(() => {});
    } catch {
      // Released or errored already: nothing to cancel.
    }
  };
  onReader(cancel);
  // Not `fatal`: a strict decoder costs several times as much in Deno, and what it would refuse
  // is decoded as Response.text() and Response.json() decode it.
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for (;;) {
    const { done, value } = await native.read.call(reader);
    if (done) break;
    if (native.typedArrayTag.call(value) !== "Uint8Array") {
      cancel();
      throw new TypeError("A chunk of the Response body is not a Uint8Array");
    }
    bytes += native.byteLength.call(value);
    if (bytes > maxBytes) {
      cancel();
      return BODY_TOO_LARGE;
    }
    text += decoder.decode(value as Uint8Array, { stream: true });
  }
  return text + decoder.decode();
}
