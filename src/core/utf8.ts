/**
 * Counts the UTF-8 bytes of a string without encoding it.
 *
 * Lone surrogates count as 3 bytes, as `TextEncoder` replaces each with U+FFFD. JSON text made
 * by `JSON.stringify` never contains lone surrogates (they are escaped), so for stored JSON the
 * count is exact.
 *
 * @param text Any string.
 * @returns The length of `new TextEncoder().encode(text)`, computed without allocating it.
 *
 * @example
 * ```ts
 * import { utf8ByteLength } from "@tool-boundary/core";
 * console.log(utf8ByteLength("a"), utf8ByteLength("é"), utf8ByteLength("日"), utf8ByteLength("😀")); // 1 2 3 4
 * ```
 */
export function utf8ByteLength(text: string): number {
  const length = text.length;
  let bytes = length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) {
      bytes += 1;
    } else if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
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
