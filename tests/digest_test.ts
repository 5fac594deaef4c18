/**
 * Request identity: canonical JSON and the request digest that stores compare.
 */
import assert from "node:assert/strict";
import { requestDigest } from "../src/core/digest.ts";
import { canonicalJson, type JsonValue } from "../src/core/json.ts";

async function webCryptoDigest(text: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return btoa(String.fromCharCode(...new Uint8Array(hash)))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

Deno.test("canonicalJson() sorts keys by UTF-16 code units at every depth and keeps array order", () => {
  const value = JSON.parse(
    '{"b":[3,{"z":1,"a":[{"y":2,"x":1}]}],"a":"é","10":1,"9":2,"\u{1F600}":0,"\uFF5E":0,"__proto__":{"k":-0}}',
  );
  assert.equal(
    canonicalJson(value),
    '{"10":1,"9":2,"__proto__":{"k":0},"a":"é","b":[3,{"a":[{"x":1,"y":2}],"z":1}],' +
      '"\u{1F600}":0,"\uFF5E":0}',
  );
  // Strings and numbers as JSON.stringify prints them.
  assert.equal(
    canonicalJson(['\u0000\n"', 1e21, 0.1, 5e-7, true, null]),
    '["\\u0000\\n\\"",1e+21,0.1,5e-7,true,null]',
  );
});

Deno.test("canonicalJson() refuses what is not JSON data", () => {
  for (
    const value of [undefined, () => 1, Number.NaN, Infinity, new Date(0), { a: undefined }, [1n]]
  ) {
    assert.throws(() => canonicalJson(value as unknown as JsonValue), TypeError);
  }
});

Deno.test("requestDigest() is base64url SHA-256 of the canonical JSON: equal for equal values whatever the key order, text or value alike", async () => {
  const digest = await requestDigest('{"query":"disk","limit":5}');
  assert.equal(digest, await requestDigest({ limit: 5, query: "disk" }));
  assert.equal(digest, await webCryptoDigest('{"limit":5,"query":"disk"}'));
  assert.match(digest, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(digest, await requestDigest({ limit: 5, query: "disk " }));
  assert.notEqual(await requestDigest({ a: [1, 2] }), await requestDigest({ a: [2, 1] }));
  await assert.rejects(requestDigest("{not json"), SyntaxError);
});

Deno.test("requestDigest() gives WebCrypto's SHA-256 at every length, on both sides of its short-message path", async () => {
  // The JSON text is 8 bytes plus the string: 55 and 56 bytes are SHA-256's padding edge (47, 48),
  // 119 and 120 the next block's (111, 112), 511 and 512 the switch to WebCrypto (503, 504); then
  // multi-byte UTF-8, and a long request.
  for (const length of [0, 1, 47, 48, 49, 55, 56, 63, 64, 111, 112, 503, 504, 505, 600]) {
    for (const unit of ["x", "é", "\u{1F600}"]) {
      const value = { q: unit.repeat(length) };
      assert.equal(
        await requestDigest(value),
        await webCryptoDigest(canonicalJson(value)),
        `${length} x ${unit}`,
      );
    }
  }
  const long = { q: "y".repeat(70_000) };
  assert.equal(await requestDigest(long), await webCryptoDigest(canonicalJson(long)));
});
