/**
 * RFC 3161 timestamps of sealed runs: `rfc3161(url)` asks a Time Stamping Authority (TSA) to
 * stamp the SHA-256 of a run's signed receipt, for `ToolBoundary`'s `timestamp` option. The
 * boundary asks once per seal (the first `endRun` of a run with a ledger key), never per call,
 * and keeps the token in the receipt (`receipt.timestamp`); `verifyRun(bundle, key,
 * { tsaCertificates })` of `./verify` checks it. This entry (and `./verify`) brings `pkijs` and
 * `asn1js` for the ASN.1 and CMS; the core's `.` entry never loads them. See docs/proof.md.
 *
 * @example
 * ```ts ignore
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { rfc3161 } from "@tool-boundary/core/timestamp";
 * const boundary = new ToolBoundary({
 *   store,
 *   tools,
 *   ledgerKey,
 *   timestamp: rfc3161("https://tsa.example/tsr"),
 * });
 * ```
 *
 * @module
 */
import { MAX_TIMESTAMP_BYTES } from "../core/ledger.ts";
import { timestampRequest, tokenOfResponse } from "./token.ts";

/** Options of {@linkcode rfc3161}. */
export interface Rfc3161Options {
  /** Headers sent with each request (e.g. the TSA's credentials). */
  headers?: Record<string, string>;
  /** Milliseconds a request may take before it fails. @default 10000 (10 s) */
  timeoutMs?: number;
}

/**
 * A `timestamp` function for `ToolBoundary` that asks an RFC 3161 Time Stamping Authority over
 * HTTP: it POSTs a TimeStampReq (`application/timestamp-query`: the SHA-256 digest, a random
 * nonce, `certReq` so the token carries the TSA's certificate) and answers the TimeStampToken
 * (DER) of the reply, exactly as it came, once it checked that the TSA granted it for this
 * digest and nonce. Any failure (the TSA unreachable, slower than `timeoutMs`, an answer other
 * than 2xx, a refusal, a token for another digest) rejects, and the boundary's `endRun` fails
 * with TIMESTAMP_UNAVAILABLE without sealing the run.
 *
 * @param url The TSA's URL (http or https).
 * @param options Headers and the timeout.
 * @returns `(digest) => Promise<token>`, for the `timestamp` option.
 * @throws {TypeError} When `url` is not an http(s) URL or `timeoutMs` not a positive integer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rfc3161 } from "@tool-boundary/core/timestamp";
 * const stamp = rfc3161("https://tsa.example/tsr", { timeoutMs: 5_000 });
 * assert.equal(typeof stamp, "function");
 * assert.throws(() => rfc3161("ftp://tsa.example"), TypeError);
 * ```
 */
export function rfc3161(
  url: string | URL,
  options: Rfc3161Options = {},
): (digest: Uint8Array) => Promise<Uint8Array> {
  const target = new URL(url);
  if (target.protocol !== "https:" && target.protocol !== "http:") {
    throw new TypeError("Invalid TSA URL: expected http: or https:");
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError("Invalid timeoutMs: expected a positive integer");
  }
  const headers = { ...options.headers };
  return async (digest) => {
    if (!(digest instanceof Uint8Array) || digest.length !== 32) {
      throw new TypeError("Invalid digest: expected the 32 bytes of a SHA-256");
    }
    const nonce = crypto.getRandomValues(new Uint8Array(8));
    nonce[0] = (nonce[0]! & 0x7f) | 0x01; // positive, and no leading zero byte to drop
    const response = await fetch(target, {
      method: "POST",
      headers: { ...headers, "content-type": "application/timestamp-query" },
      body: timestampRequest(digest, nonce),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`The TSA answered HTTP ${response.status}`);
    }
    const body = new Uint8Array(await response.arrayBuffer());
    if (body.length > MAX_TIMESTAMP_BYTES + 1024) throw new Error("The TSA's answer is too long");
    return tokenOfResponse(body, digest, nonce);
  };
}
