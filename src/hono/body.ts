/**
 * Request bodies: one reader with a byte limit (413 before anything past it is read), and for the
 * JSON routes the media type (415), one parse and the route's valibot schema.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { decodeUtf8 } from "../core/utf8.ts";
import type { AppEnv, Guard } from "./auth.ts";
import { errorResponse } from "./status.ts";

/**
 * Room in a body for everything but the input: IDs, tool name, keys, whitespace.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ENVELOPE_OVERHEAD_BYTES, toolCallBodyLimit } from "./body.ts";
 * assert.equal(toolCallBodyLimit({ requestBytes: 1000 }) - 4000, ENVELOPE_OVERHEAD_BYTES);
 * ```
 */
export const ENVELOPE_OVERHEAD_BYTES = 8192;
/**
 * Bodies of the harness routes (start and end a run) are small.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { createApp } from "@tool-boundary/core/hono";
 * import { CONTROL_BODY_BYTES } from "./body.ts";
 *
 * const app = createApp({
 *   boundary: new ToolBoundary({ tools: [] }),
 *   agentToken: "agent-token-0123456789",
 *   harnessToken: "harness-token-0123456789",
 * });
 * const res = await app.request("/v1/runs", {
 *   method: "POST",
 *   headers: {
 *     authorization: "Bearer harness-token-0123456789",
 *     "content-type": "application/json",
 *   },
 *   body: JSON.stringify({ ttlMs: 60_000, note: "x".repeat(CONTROL_BODY_BYTES) }),
 * });
 * assert.equal(res.status, 413);
 * assert.equal((await res.json()).code, "REQUEST_TOO_LARGE");
 * ```
 */
export const CONTROL_BODY_BYTES = 65_536;

/**
 * The largest tool-call body worth parsing, derived from the request byte limit.
 *
 * The limit (`requestBytes`) applies to the input as the boundary stores it (compact JSON, UTF-8),
 * but the body carries it encoded once more: as JSON text inside a JSON string (OpenAI-style
 * arguments), escaped by an encoder that may escape every non-ASCII character. Per stored byte
 * that costs at most 3.5 body bytes (`"` -> `\"` is 2x; a 2-byte `é` stored raw is `\u00e9` in
 * the inner text and `\\u00e9` in the body, 7 bytes; an emoji is 4 stored bytes and 14 body
 * bytes). So 4x the limit, plus room for the envelope, admits every input within the limit that
 * a standard encoder produces; the boundary then checks the exact stored size and answers
 * REQUEST_TOO_LARGE. Anything bigger is refused here, before it is read into memory.
 *
 * @param limits The boundary's limits (only `requestBytes` is used).
 * @returns `4 * requestBytes + ENVELOPE_OVERHEAD_BYTES`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ENVELOPE_OVERHEAD_BYTES, toolCallBodyLimit } from "./body.ts";
 * assert.equal(toolCallBodyLimit({ requestBytes: 65_536 }), 270_336);
 * assert.equal(toolCallBodyLimit({ requestBytes: 0 }), ENVELOPE_OVERHEAD_BYTES);
 * ```
 */
export function toolCallBodyLimit(limits: { readonly requestBytes: number }): number {
  return 4 * limits.requestBytes + ENVELOPE_OVERHEAD_BYTES;
}

/**
 * Byte limit of a `POST /v1/runs/{runId}/citations` body: 1,000 tool call IDs of the longest
 * allowed length (256 characters) fit, as JSON, with room to spare.
 */
export const CITATIONS_BODY_BYTES = 262_144;

/**
 * Which byte limit a body has: {@linkcode CONTROL_BODY_BYTES}, the tool-call body limit, or
 * {@linkcode CITATIONS_BODY_BYTES}.
 */
export type BodySize = "control" | "toolCall" | "citations";

/** How a route takes its JSON body. */
export interface JsonBodySpec<S extends v.GenericSchema> {
  /** Makes the body's schema (once); also its component in the OpenAPI document. */
  schema: () => S;
  /** The byte limit, checked before the body is read. */
  size: BodySize;
  /**
   * Answers a body that is not a JSON object (`issues` and `sent` null: valibot's object schema
   * would admit an array) or that fails the schema.
   */
  onInvalid: (
    c: Context<AppEnv>,
    issues: readonly v.BaseIssue<unknown>[] | null,
    sent: Record<string, unknown> | null,
  ) => Response;
  /** Answers a body over the limit. @default a REQUEST_TOO_LARGE error body */
  onTooLarge?: (c: Context<AppEnv>) => Response;
}

/** A body as the handler gets it: the schema's output, and the object exactly as sent. */
export interface JsonBody<S extends v.GenericSchema> {
  /** The schema's output. */
  data: v.InferOutput<S>;
  /** The parsed body before the schema (the input is stored as sent). */
  sent: Record<string, unknown>;
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/;

const DECIMAL = /^\d+$/;

/**
 * Reads a request body as UTF-8 text, at most `maxBytes` of it: a `Content-Length` past the limit
 * is refused before anything is read. A body that declares its length within the limit (and no
 * `Transfer-Encoding`) is read whole by the runtime, as Hono's `bodyLimit` trusts it: an HTTP
 * server ends the body at that length, and the bytes are counted all the same. Any other body is
 * read as a stream and refused at the chunk that crosses the limit, without reading further. The
 * one body reader of the app: the JSON routes and the MCP route read with it.
 *
 * @param request The request.
 * @param maxBytes The largest body accepted, in bytes.
 * @returns The text; `""` for no body or for bytes that are not UTF-8 (which no JSON parse
 *   accepts); `null` past the limit.
 */
export async function readBodyText(request: Request, maxBytes: number): Promise<string | null> {
  const declared = request.headers.get("content-length");
  const length = declared !== null && DECIMAL.test(declared) ? Number(declared) : null;
  if (length !== null && length > maxBytes) return null;
  if (length !== null && !request.headers.has("transfer-encoding")) {
    // The runtime's own read of the whole body: no stream is made in JavaScript (in Deno, making
    // one is most of a cold start's first body read).
    const bytes = new Uint8Array(await request.arrayBuffer());
    return bytes.byteLength > maxBytes ? null : utf8Text(bytes);
  }
  if (request.body === null) return "";
  const reader = request.body.getReader();
  // Most bodies come in one chunk: it is decoded as it is, with no copy.
  let first: Uint8Array | undefined;
  let rest: Uint8Array[] | undefined;
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return null;
    }
    if (first === undefined) first = value;
    else (rest ??= []).push(value);
  }
  if (first === undefined) return "";
  let bytes = first;
  if (rest !== undefined) {
    bytes = new Uint8Array(size);
    bytes.set(first);
    let offset = first.byteLength;
    for (const chunk of rest) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
  }
  return utf8Text(bytes);
}

/** The text of UTF-8 bytes; `""` for bytes that are not UTF-8: a parse error, as malformed JSON is. */
function utf8Text(bytes: Uint8Array): string {
  try {
    return decodeUtf8(bytes);
  } catch {
    return "";
  }
}

/**
 * The guard that admits a JSON body: media type, then the body read within its byte limit
 * ({@linkcode readBodyText}), parsed once and checked with the schema. The handler reads the
 * result with {@linkcode bodyOf}.
 *
 * @param spec The route's body.
 * @param maxBytes The byte limit `spec.size` stands for.
 * @returns The guard.
 */
export function jsonBody<S extends v.GenericSchema>(
  spec: JsonBodySpec<S>,
  maxBytes: number,
): Guard {
  return async (c) => {
    const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
    if (!JSON_TYPE.test(type)) return errorResponse(c, "UNSUPPORTED_MEDIA_TYPE");
    const text = await readBodyText(c.req.raw, maxBytes);
    if (text === null) return spec.onTooLarge?.(c) ?? errorResponse(c, "REQUEST_TOO_LARGE");
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return errorResponse(c, "INVALID_REQUEST");
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return spec.onInvalid(c, null, null);
    }
    const sent = value as Record<string, unknown>;
    const checked = v.safeParse(spec.schema(), sent);
    if (!checked.success) return spec.onInvalid(c, checked.issues, sent);
    c.set("body", { data: checked.output, sent });
    return undefined;
  };
}

/**
 * The body {@linkcode jsonBody} admitted.
 *
 * @param c The request's context, after the route's body middleware.
 * @returns The schema's output and the body as sent.
 */
export function bodyOf<S extends v.GenericSchema>(c: Context<AppEnv>): JsonBody<S> {
  return c.get("body") as JsonBody<S>;
}
