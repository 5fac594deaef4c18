/**
 * SHA-256 in JS for short texts: a speed trick, with its plain twin beside it.
 *
 * WebCrypto's `crypto.subtle.digest` is an async call with a fixed cost (a promise, a turn of
 * the event loop and a hop to the runtime), 10 to 35 us here, where SHA-256 of a short text in JS
 * takes about 1 us; past about 1 KiB WebCrypto is the faster one (10x at 64 KiB), so this path
 * stops at {@linkcode SHORT_SHA256_BYTES}. Being synchronous is what lets `MemoryStore` take the
 * request digest as a `PendingDigest` (see `./digest.ts`), hashed only if it is ever compared.
 *
 * The plain twin is `sha256Base64url` of `./ledger.ts` (WebCrypto), which `requestDigest` uses
 * for every longer text; `tests/core/sha256_test.ts` holds the two equal for any text
 * (property-based, and at every block and padding edge up to the bound).
 *
 * Measured gain, side by side in one process (BENCHMARKS.md, figure 11): a MemoryStore invoke
 * (1 KiB raw) on a copy of `src/` with WebCrypto alone is 8.6x as slow (median of 5 runs of
 * `BENCH_PLAIN=1 deno task bench:memory`; 8.1x to 9.6x), as it awaits WebCrypto at every begin:
 * this path saves 88% of that invoke. Of a 96-byte request alone it is 20x to 33x as fast as
 * WebCrypto, 8x at 503 bytes (`deno bench --config deno.dev.json -A bench/tricks_bench.ts`).
 * On an `UpstashStore` invoke (about 0.67 ms at p50, figure 1) the WebCrypto call it saves
 * would be 10 to 35 us, 2% to 5% (from these figures; not measured as a whole).
 *
 * @module
 */

/** From this many UTF-8 bytes on, {@linkcode sha256Short} declines and WebCrypto is used. */
export const SHORT_SHA256_BYTES = 512;

/**
 * Base64url (no padding) of the SHA-256 (FIPS 180-4) of the UTF-8 of a short text, computed at
 * once; the same string as `sha256Base64url` of `./ledger.ts` gives.
 *
 * @param text Any string.
 * @returns 43 characters, or `null` when its UTF-8 is {@linkcode SHORT_SHA256_BYTES} bytes or
 *   more (compute it with WebCrypto instead).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sha256Short } from "./sha256.ts";
 * import { sha256Base64url } from "./ledger.ts";
 * assert.equal(sha256Short("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
 * assert.equal(sha256Short("abc"), await sha256Base64url("abc"));
 * assert.equal(sha256Short("x".repeat(512)), null);
 * ```
 */
export function sha256Short(text: string): string | null {
  if (text.length >= SHORT_SHA256_BYTES) return null;
  const { written } = encoder.encodeInto(text, block);
  return written < SHORT_SHA256_BYTES ? base64url(sha256(written)) : null;
}

const encoder = new TextEncoder();

/** A short message, padded in place: room for its UTF-8 (3 bytes per unit at most) and padding. */
const block = new Uint8Array(SHORT_SHA256_BYTES * 3 + 64);

/**
 * SHA-256 round constants (FIPS 180-4, 4.2.2). Int32Array, as W and H: every word stays a small
 * integer in V8, where a Uint32Array's upper half would be read as doubles.
 */
// deno-fmt-ignore
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const W = new Int32Array(64);
const H = new Int32Array(8);
const hash = new Uint8Array(32);

/**
 * SHA-256 (FIPS 180-4) of the first `length` bytes of {@linkcode block}, padding them in place;
 * the same bytes as WebCrypto's (checked by tests at every block and padding edge).
 */
function sha256(length: number): Uint8Array {
  const blocks = (length + 9 + 63) >>> 6;
  const end = blocks * 64;
  block.fill(0, length, end);
  block[length] = 0x80;
  // The bit length fits 32 bits: the message is shorter than SHORT_SHA256_BYTES.
  const bits = length * 8;
  block[end - 4] = bits >>> 24;
  block[end - 3] = (bits >>> 16) & 0xff;
  block[end - 2] = (bits >>> 8) & 0xff;
  block[end - 1] = bits & 0xff;
  let h0 = 0x6a09e667 | 0, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372 | 0, h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab | 0, h7 = 0x5be0cd19 | 0;
  for (let off = 0; off < end; off += 64) {
    for (let i = 0, j = off; i < 16; i++, j += 4) {
      W[i] = (block[j]! << 24) | (block[j + 1]! << 16) | (block[j + 2]! << 8) | block[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15]!, y = W[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    // Eight rounds per turn, each naming the working variables one place on, so that none is
    // copied to the next (h = g, g = f, ...): T1 is summed into h and added to d (the next e),
    // then T2 is added to h (the next a).
    for (let i = 0; i < 64; i += 8) {
      h = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        ((e & f) ^ (~e & g)) + K[i + 0]! + W[i + 0]!) | 0;
      d = (d + h) | 0;
      h = (h + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) ^ (a & c) ^ (b & c))) | 0;
      g = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        ((d & e) ^ (~d & f)) + K[i + 1]! + W[i + 1]!) | 0;
      c = (c + g) | 0;
      g = (g + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) ^ (h & b) ^ (a & b))) | 0;
      f = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        ((c & d) ^ (~c & e)) + K[i + 2]! + W[i + 2]!) | 0;
      b = (b + f) | 0;
      f = (f + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) ^ (g & a) ^ (h & a))) | 0;
      e = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        ((b & c) ^ (~b & d)) + K[i + 3]! + W[i + 3]!) | 0;
      a = (a + e) | 0;
      e = (e + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) ^ (f & h) ^ (g & h))) | 0;
      d = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        ((a & b) ^ (~a & c)) + K[i + 4]! + W[i + 4]!) | 0;
      h = (h + d) | 0;
      d = (d + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) ^ (e & g) ^ (f & g))) | 0;
      c = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        ((h & a) ^ (~h & b)) + K[i + 5]! + W[i + 5]!) | 0;
      g = (g + c) | 0;
      c = (c + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) ^ (d & f) ^ (e & f))) | 0;
      b = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        ((g & h) ^ (~g & a)) + K[i + 6]! + W[i + 6]!) | 0;
      f = (f + b) | 0;
      b = (b + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) ^ (c & e) ^ (d & e))) | 0;
      a = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        ((f & g) ^ (~f & h)) + K[i + 7]! + W[i + 7]!) | 0;
      e = (e + a) | 0;
      a = (a + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) ^ (b & d) ^ (c & d))) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  H[0] = h0, H[1] = h1, H[2] = h2, H[3] = h3, H[4] = h4, H[5] = h5, H[6] = h6, H[7] = h7;
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    hash[i * 4] = v >>> 24;
    hash[i * 4 + 1] = (v >>> 16) & 0xff;
    hash[i * 4 + 2] = (v >>> 8) & 0xff;
    hash[i * 4 + 3] = v & 0xff;
  }
  return hash;
}

/** The base64url alphabet, as character codes. */
const BASE64URL = new Uint8Array(64).map((_, i) =>
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".charCodeAt(i)
);

/** The 43 character codes of one digest: one flat string from one call, no concatenation. */
const digestCodes: number[] = new Array(43).fill(0);

/** Base64url without padding of a 32-byte hash: 43 characters. */
function base64url(bytes: Uint8Array): string {
  const out = digestCodes;
  let o = 0;
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o++] = BASE64URL[n >>> 18]!;
    out[o++] = BASE64URL[(n >>> 12) & 63]!;
    out[o++] = BASE64URL[(n >>> 6) & 63]!;
    out[o++] = BASE64URL[n & 63]!;
  }
  // 32 bytes leave two: three characters.
  const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
  out[o++] = BASE64URL[n >>> 18]!;
  out[o++] = BASE64URL[(n >>> 12) & 63]!;
  out[o] = BASE64URL[(n >>> 6) & 63]!;
  return String.fromCharCode.apply(null, out);
}
