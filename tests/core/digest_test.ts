/**
 * Request identity: canonical JSON and the request digest that stores compare.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { PendingDigest, requestDigest } from "../../src/core/digest.ts";
import { utf8ByteLength } from "../../src/core/utf8.ts";
import { canonicalJson, type JsonValue } from "../../src/core/json.ts";
import { DISK_DIGEST } from "../../src/testing/conformance/helpers.ts";

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

Deno.test("requestDigest() is base64url SHA-256 of the canonical JSON of the tool and the input: equal for equal values whatever the key order, text or value alike", async () => {
  const digest = await requestDigest("search", '{"query":"disk","limit":5}');
  assert.equal(digest, await requestDigest("search", { limit: 5, query: "disk" }));
  assert.equal(
    digest,
    await webCryptoDigest('{"input":{"limit":5,"query":"disk"},"toolName":"search"}'),
  );
  assert.match(digest, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(digest, await requestDigest("search", { limit: 5, query: "disk " }));
  assert.notEqual(
    await requestDigest("search", { a: [1, 2] }),
    await requestDigest("search", { a: [2, 1] }),
  );
  await assert.rejects(requestDigest("search", "{not json"), SyntaxError);
});

Deno.test("requestDigest() differs for another tool with the same input, and cannot be confused by names that look like JSON", async () => {
  const input = { query: "disk" };
  const digests = await Promise.all([
    requestDigest("search", input),
    requestDigest("grep", input),
    requestDigest("Search", input),
    requestDigest("search ", input),
    requestDigest('search","input":{"query":"disk"}', input),
    requestDigest("", input),
  ]);
  assert.equal(new Set(digests).size, digests.length);
  assert.equal(await requestDigest("grep", input), await requestDigest("grep", '{"query":"disk"}'));
});

Deno.test("requestDigest() refuses a tool name that is no string and an input that is no JSON data", async () => {
  await assert.rejects(requestDigest(7 as unknown as string, {}), TypeError);
  await assert.rejects(requestDigest("search", undefined as unknown as JsonValue), TypeError);
  await assert.rejects(requestDigest("search", { a: Number.NaN }), TypeError);
});

Deno.test("the conformance suite's DISK_DIGEST is the digest of its begin request", async () => {
  assert.equal(await requestDigest("fake_success", '{"query":"disk"}'), DISK_DIGEST);
});

Deno.test("requestDigest() gives WebCrypto's SHA-256 at every length, on both sides of its short-message path", async () => {
  // The canonical text is a fixed frame plus the string: lengths at SHA-256's padding edge (55 and
  // 56 bytes), the next block's (119, 120), and the switch to WebCrypto (511, 512); then
  // multi-byte UTF-8, and a long request.
  const frame = canonicalJson({ toolName: "t", input: { q: "" } }).length;
  const edges = [0, 1, 55, 56, 63, 64, 119, 120, 511, 512, 513, 600].map((n) =>
    Math.max(0, n - frame)
  );
  for (const length of [...edges, 1, 47, 48, 503, 504]) {
    for (const unit of ["x", "é", "\u{1F600}"]) {
      const input = { q: unit.repeat(length) };
      assert.equal(
        await requestDigest("t", input),
        await webCryptoDigest(canonicalJson({ toolName: "t", input })),
        `${length} x ${unit}`,
      );
    }
  }
  const long = { q: "y".repeat(70_000) };
  assert.equal(
    await requestDigest("t", long),
    await webCryptoDigest(canonicalJson({ toolName: "t", input: long })),
  );
});

Deno.test("requestDigest() is the SHA-256 of canonicalJson({ toolName, input }) for any name and input", async () => {
  const names = fc.oneof(fc.string(), fc.string({ unit: "binary", maxLength: 12 }));
  const inputs = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), {
    maxKeys: 12,
  });
  await fc.assert(
    fc.asyncProperty(names, inputs, async (toolName, input) => {
      const expected = await webCryptoDigest(canonicalJson({ toolName, input } as JsonValue));
      assert.equal(await requestDigest(toolName, input as JsonValue), expected);
      assert.equal(await requestDigest(toolName, JSON.stringify(input)), expected);
    }),
    { numRuns: 1_000 },
  );
});

Deno.test("PendingDigest is requestDigest of the recorded request, for every request short enough to hash at once", async () => {
  const names = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: "binary", maxLength: 8 }));
  const units = fc.constantFrom("x", "é", "日", "\u{1F600}", "\ud800", '"', "\n");
  const inputs = fc.tuple(fc.array(units, { maxLength: 200 }), fc.jsonValue({ maxDepth: 2 }))
    .map(([parts, value]) => ({ q: parts.join(""), value }));
  await fc.assert(
    fc.asyncProperty(names, inputs, async (toolName, input) => {
      const requestJson = JSON.stringify(input);
      const bytes = utf8ByteLength(requestJson);
      const pending = PendingDigest.of(toolName, requestJson, bytes);
      const text = canonicalJson({ toolName, input } as JsonValue);
      // Pending exactly when the canonical text is under the synchronous path's 512 bytes.
      assert.equal(pending !== null, utf8ByteLength(text) < 512);
      if (pending !== null) {
        assert.equal(pending.value, await webCryptoDigest(text));
        assert.equal(pending.value, await requestDigest(toolName, requestJson));
      }
    }),
    { numRuns: 1_000 },
  );
});
