import assert from "node:assert/strict";
import fc from "fast-check";
import {
  isSafeRunId,
  isSafeToolCallId,
  RUN_ID_PATTERN,
  TOOL_CALL_ID_PATTERN,
} from "../../src/core/ids.ts";
import { isRequestDigest, REQUEST_DIGEST_PATTERN } from "../../src/core/limits.ts";

/** The checks without regular expressions, each with the pattern it must agree with. */
const CHECKS = [
  { name: "isSafeToolCallId", check: isSafeToolCallId, pattern: TOOL_CALL_ID_PATTERN },
  { name: "isSafeRunId", check: isSafeRunId, pattern: RUN_ID_PATTERN },
  { name: "isRequestDigest", check: isRequestDigest, pattern: REQUEST_DIGEST_PATTERN },
] as const;

/** Characters near every rule: allowed ones, dots, the colon, neighbours of each range, others. */
const NEAR = [
  ..."azAZ09_-.:",
  ..."/@[`{~ \t\n\0",
  "é",
  "\u0130",
  "\u212a",
  "\ud800",
  "😀",
  "\uff21",
];

const strings = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 8 }),
  fc.array(fc.constantFrom(...NEAR), { maxLength: 12 }).map((units) => units.join("")),
  fc.array(fc.constantFrom(".", "a", ":"), { maxLength: 6 }).map((units) => units.join("")),
  // Around the length limits (128 and 256), with one unit that may be refused.
  fc.tuple(
    fc.integer({ min: 120, max: 264 }),
    fc.constantFrom(...NEAR),
    fc.nat(),
  ).map(([length, unit, at]) => {
    const text = "a".repeat(length);
    const i = at % (length + 1);
    return text.slice(0, i) + unit + text.slice(i + 1);
  }),
  fc.integer({ min: 0, max: 300 }).map((length) => ".".repeat(length)),
);

for (const { name, check, pattern } of CHECKS) {
  Deno.test(`${name}() answers as ${pattern} for any string`, () => {
    fc.assert(
      fc.property(strings, (text) => {
        assert.equal(check(text), pattern.test(text), JSON.stringify(text));
        // Asked again (the last accepted is kept), and after another string, the same answer.
        assert.equal(check(text), pattern.test(text));
        check("a");
        assert.equal(check(text), pattern.test(text));
      }),
      { numRuns: 5_000 },
    );
  });

  Deno.test(`${name}() refuses what is not a string, also after accepting its text`, () => {
    assert.equal(check("123"), true);
    for (const value of [123, null, undefined, {}, ["123"], new String("123"), Symbol("x"), 1n]) {
      assert.equal(check(value), false);
    }
    const text = { toString: () => "123" };
    assert.equal(check(text), false);
  });
}

Deno.test("the ID checks' edges: lengths, dots, colons", () => {
  assert.equal(isSafeToolCallId("a".repeat(256)), true);
  assert.equal(isSafeToolCallId("a".repeat(257)), false);
  assert.equal(isSafeRunId("a".repeat(128)), true);
  assert.equal(isSafeRunId("a".repeat(129)), false);
  assert.equal(isRequestDigest("a".repeat(128)), true);
  assert.equal(isRequestDigest("a".repeat(129)), false);
  for (const check of [isSafeToolCallId, isSafeRunId, isRequestDigest]) {
    assert.equal(check(""), false);
    assert.equal(check("."), false);
    assert.equal(check(".."), false);
  }
  assert.equal(isSafeToolCallId("..a"), true);
  assert.equal(isSafeRunId("..a"), true);
  assert.equal(isSafeToolCallId("functions.search:0"), true);
  assert.equal(isSafeRunId("functions.search:0"), false);
  assert.equal(isRequestDigest("a.b"), false);
});
