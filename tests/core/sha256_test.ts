/**
 * The SHA-256 in JS for short texts against its plain twin, WebCrypto.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { sha256Base64url } from "../../src/core/ledger.ts";
import { sha256Short, SHORT_SHA256_BYTES } from "../../src/core/sha256.ts";

const encoder = new TextEncoder();

Deno.test("sha256Short() equals WebCrypto's SHA-256 for any text under its bound, and declines the rest", async () => {
  const units = fc.constantFrom("x", "é", "日", "\u{1F600}", "\ud800", "\udc00", "\u0000", '"');
  const texts = fc.oneof(
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.array(units, { maxLength: 300 }).map((parts) => parts.join("")),
    fc.integer({ min: 0, max: 600 }).map((n) => "a".repeat(n)),
  );
  await fc.assert(
    fc.asyncProperty(texts, async (text) => {
      const short = sha256Short(text);
      assert.equal(short !== null, encoder.encode(text).length < SHORT_SHA256_BYTES, text);
      if (short !== null) assert.equal(short, await sha256Base64url(text));
    }),
    { numRuns: 2_000 },
  );
});

Deno.test("sha256Short() equals WebCrypto's SHA-256 at every padding and block edge up to its bound", async () => {
  // One block holds 55 bytes with its padding, so 55/56, 119/120, ... change the block count.
  for (let length = 0; length < SHORT_SHA256_BYTES; length++) {
    for (const text of ["b".repeat(length), "é".repeat(length >> 1) + "c".repeat(length & 1)]) {
      assert.equal(sha256Short(text), await sha256Base64url(text), `${length} bytes`);
    }
  }
  assert.equal(sha256Short("d".repeat(SHORT_SHA256_BYTES)), null);
  assert.equal(sha256Short("é".repeat(SHORT_SHA256_BYTES / 2)), null);
  // Fewer UTF-16 units than the bound, more UTF-8 bytes.
  assert.equal(sha256Short("日".repeat(200)), null);
  // A known answer: SHA-256 of "abc" (FIPS 180-4, B.1).
  assert.equal(sha256Short("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
});
