/**
 * Counts the UTF-8 bytes of a string without allocating its encoding.
 *
 * Lone surrogates count as 3 bytes, as `TextEncoder` replaces each with U+FFFD. JSON text made
 * by `JSON.stringify` never contains lone surrogates (they are escaped), so for stored JSON the
 * count is exact.
 *
 * Short strings are counted in a loop. Longer ones are encoded in chunks into one reused
 * scratch buffer with `TextEncoder.encodeInto`, which runtimes implement natively and which is
 * many times faster than any loop on ASCII, the bulk of JSON; a chunk found to be mostly
 * multi-byte text switches the rest of the string to the loop, which is faster there.
 *
 * A speed trick; its plain twin is `new TextEncoder().encode(text).length`, which
 * `tests/core/json_utf8_test.ts` holds equal to it for any string (property-based, chunk borders
 * and lone surrogates included). Measured gain, side by side in one process (BENCHMARKS.md,
 * figure 11): a MemoryStore invoke (1 KiB raw), which counts its request, raw response and result,
 * is 1.29x as slow with the twin (median of 5 runs of `BENCH_PLAIN=1 deno task bench:memory`;
 * 1.26x to 1.30x): this count saves 22% of it. It is 4x as fast on a 61-byte request, 25x on 920
 * bytes (`deno bench --config deno.dev.json -A bench/tricks_bench.ts`), 1.7x to 27x from 1 KiB to
 * 1 MiB (figure 6).
 *
 * @param text Any string.
 * @returns The length of `new TextEncoder().encode(text)`, computed without allocating it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { utf8ByteLength } from "@tool-boundary/core/store";
 * assert.deepEqual(["a", "é", "日", "😀"].map(utf8ByteLength), [1, 2, 3, 4]);
 * ```
 */
export function utf8ByteLength(text: string): number {
  const length = text.length;
  if (length < SHORT) return countLoop(text, 0, length);
  scratch ??= new Uint8Array(CHUNK * 3);
  let bytes = 0;
  for (let start = 0; start < length;) {
    let end = Math.min(length, start + CHUNK);
    const last = text.charCodeAt(end - 1);
    // Never split a surrogate pair: each half alone would count as U+FFFD.
    if (end < length && last >= 0xd800 && last <= 0xdbff) end--;
    const written = encoder.encodeInto(
      start === 0 && end === length ? text : text.slice(start, end),
      scratch,
    ).written;
    bytes += written;
    if (written >= 2 * (end - start)) return bytes + countLoop(text, end, length);
    start = end;
  }
  return bytes;
}

/**
 * At least {@linkcode utf8ByteLength} of a text, and never less, without reading it: UTF-8 takes
 * at most 3 bytes per UTF-16 unit (a surrogate pair, 2 units, is 4 bytes; a lone surrogate 3, as
 * U+FFFD). A limit that even this bound keeps needs no count.
 *
 * @param text Any string.
 * @returns Three times its length.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { utf8ByteBound, utf8ByteLength } from "./utf8.ts";
 * for (const text of ["a", "é", "日", "😀", "\ud800"]) {
 *   assert.ok(utf8ByteBound(text) >= utf8ByteLength(text));
 * }
 * ```
 */
export function utf8ByteBound(text: string): number {
  return 3 * text.length;
}

/** Below this many UTF-16 units the loop beats a call into the encoder. */
const SHORT = 64;
/** UTF-16 units per `encodeInto` call; each needs at most 3 bytes of scratch. */
const CHUNK = 16_384;
const encoder = new TextEncoder();
let scratch: Uint8Array | undefined;

function countLoop(text: string, start: number, end: number): number {
  let bytes = end - start;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) {
      bytes += 1;
    } else if (code >= 0xd800 && code <= 0xdbff && i + 1 < end) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        // A surrogate pair: 2 UTF-16 units become 4 bytes.
        bytes += 2;
        i++;
      } else {
        bytes += 2;
      }
    } else {
      bytes += 2;
    }
  }
  return bytes;
}
