/**
 * The SHA-1 of a script's source as Redis names it (`EVALSHA`, `SCRIPT EXISTS`): lowercase hex of
 * its UTF-8 bytes. The tests' own reckoning, apart from the store's.
 *
 * @module
 */

/**
 * The SHA-1 of `text`, as 40 lowercase hex digits.
 *
 * @param text A script's source.
 * @returns Its SHA-1 in hex.
 */
export async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
