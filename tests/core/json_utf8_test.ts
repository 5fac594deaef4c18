import assert from "node:assert/strict";
import fc from "fast-check";
import { checkJson, isPlainObject, snapshotJson, snapshotParsed } from "../../src/core/json.ts";
import { validateProjection } from "../../src/core/progress.ts";
import { utf8ByteLength } from "../../src/store/mod.ts";

const encoder = new TextEncoder();

Deno.test("utf8ByteLength() equals TextEncoder's length for any UTF-16 string, lone surrogates too", () => {
  const utf16 = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 64 })
    .map((units) => String.fromCharCode(...units));
  fc.assert(
    fc.property(fc.oneof(utf16, fc.string({ unit: "binary" }), fc.string()), (text) => {
      assert.equal(utf8ByteLength(text), encoder.encode(text).length);
    }),
    { numRuns: 2_000 },
  );
  assert.equal(utf8ByteLength(""), 0);
  assert.equal(utf8ByteLength("😀日é\u0000a"), 4 + 3 + 2 + 1 + 1);
  assert.equal(utf8ByteLength("\ud800"), 3);
  assert.equal(utf8ByteLength("\udc00\ud800"), 6);
});

Deno.test("utf8ByteLength() equals TextEncoder's length on long strings, across chunk borders", () => {
  const pieces = ["a", "é", "日", "😀", "\ud800", "\udc00", '{"k":"v"}'];
  const long = fc.array(fc.constantFrom(...pieces), { minLength: 60, maxLength: 40_000 })
    .map((parts) => parts.join(""));
  fc.assert(
    fc.property(long, (text) => {
      assert.equal(utf8ByteLength(text), encoder.encode(text).length);
    }),
    { numRuns: 200 },
  );
  // Surrogate pairs and lone surrogates on and around the 16,384-unit chunk border.
  for (let pad = 16_370; pad < 16_390; pad++) {
    for (const tail of ["😀😀", "\ud800a", "a\udc00", "日😀é", "\ud800"]) {
      const text = "x".repeat(pad) + tail + "y".repeat(70);
      assert.equal(utf8ByteLength(text), encoder.encode(text).length);
      const dense = "日".repeat(pad) + tail + "😀".repeat(20_000) + "z";
      assert.equal(utf8ByteLength(dense), encoder.encode(dense).length);
    }
  }
});

Deno.test("utf8ByteLength() is exact on long strings, across chunk edges and mixed scripts", () => {
  const piece = fc.oneof(
    fc.constantFrom("a", "é", "日", "😀", "\ud800", "\udc00", '"', "\u0000"),
    fc.string({ unit: "binary", maxLength: 8 }),
  );
  fc.assert(
    fc.property(
      fc.array(piece, { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 3_000 }),
      fc.integer({ min: 0, max: 20_000 }),
      (pieces, repeat, asciiPrefix) => {
        const text = "x".repeat(asciiPrefix) + pieces.join("").repeat(repeat);
        assert.equal(utf8ByteLength(text), encoder.encode(text).length);
      },
    ),
    { numRuns: 200 },
  );
  // A surrogate pair straddling every position around a 16,384-unit chunk edge.
  for (let pad = 16_380; pad <= 16_390; pad++) {
    const text = "a".repeat(pad) + "😀".repeat(3) + "日".repeat(50_000);
    assert.equal(utf8ByteLength(text), encoder.encode(text).length, String(pad));
  }
});

Deno.test("checkJson() accepts exactly what JSON round-trips unchanged", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      assert.equal(checkJson(value, 1_000), null);
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(
      fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true }),
      (value) => {
        if (checkJson(value, 1_000) === null) {
          // Accepted values survive JSON unchanged (up to -0, which JSON writes as 0).
          const copy = JSON.parse(JSON.stringify(value));
          assert.deepEqual(copy, JSON.parse(JSON.stringify(copy)));
          assert.equal(JSON.stringify(copy), JSON.stringify(value));
        }
      },
    ),
    { numRuns: 1_000 },
  );
});

Deno.test("checkJson() refuses values JSON would drop or change, and stops hostile nesting", () => {
  const sparse = [1, , 3];
  const cyclic: Record<string, unknown> = {};
  cyclic.a = cyclic;
  class Point {
    x = 1;
  }
  for (
    const bad of [
      undefined,
      () => 1,
      Symbol("s"),
      10n,
      Number.NaN,
      -Infinity,
      new Date(0),
      new Map(),
      new Set(),
      new Point(),
      sparse,
      { a: undefined },
      { toJSON: () => "x" },
      cyclic,
    ]
  ) {
    assert.equal(checkJson(bad, 100) !== null, true, String(bad));
  }
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(checkJson(deep, 64), "TOO_DEEP");
  assert.equal(checkJson(Object.create(null), 1), null);
  assert.equal(isPlainObject(Object.create(null)), true);
});

Deno.test("validateProjection() requires evidence, a non-empty scope and JSON content, nothing more", () => {
  const ok = { evidence: "NO_EVIDENCE", scope: "logs, last hour", content: [] };
  assert.deepEqual(validateProjection(ok, 10), ok);
  for (
    const bad of [
      null,
      [],
      { ...ok, evidence: "ERROR" },
      { ...ok, evidence: "no_evidence" },
      { ...ok, scope: "" },
      { ...ok, scope: "   " },
      { ...ok, scope: 5 },
      { evidence: "EVIDENCE_FOUND", scope: "s" },
      { ...ok, content: new Date() },
      { ...ok, raw: "extra" },
    ]
  ) {
    assert.equal(validateProjection(bad, 10), null, JSON.stringify(bad));
  }
});

Deno.test("snapshotParsed() answers as snapshotJson() for anything JSON.parse returns", () => {
  // JSON texts with what parsed data can still hold that the walk refuses or changes: -0,
  // numbers past a double's range, deep nesting, `__proto__` and integer-like keys.
  const leaf = fc.oneof(
    fc.constantFrom("-0", "0", "1e999", "-1e999", "1e-999", '"\\ud800"', "null", "true", '"x"'),
    fc.jsonValue({ maxDepth: 1 }).map((value) => JSON.stringify(value)),
  );
  const text: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
    value: fc.oneof(
      { arbitrary: leaf, weight: 3 },
      fc.array(tie("value"), { maxLength: 4 }).map((items) => `[${items.join(",")}]`),
      fc.array(
        fc.tuple(fc.constantFrom("a", "__proto__", "0", "toJSON", "constructor"), tie("value")),
        { maxLength: 4 },
      ).map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
    ),
  })).value;
  fc.assert(
    fc.property(text, fc.integer({ min: 0, max: 5 }), (source, depth) => {
      const expected = snapshotJson(JSON.parse(source), depth);
      const parsed = snapshotParsed(JSON.parse(source), depth);
      assert.deepEqual(parsed, expected, source);
      if ("json" in parsed) assert.deepEqual(parsed.value, JSON.parse(parsed.json));
    }),
    { numRuns: 3_000 },
  );
  assert.equal(Object.is((snapshotParsed(-0, 1) as { value: unknown }).value, 0), true);
  for (const proto of [Object.prototype, Array.prototype]) {
    Object.defineProperty(proto, "toJSON", { value: () => "x", configurable: true });
    try {
      assert.deepEqual(snapshotParsed(JSON.parse('{"a":[1]}'), 8), { problem: "NOT_JSON" });
    } finally {
      delete (proto as { toJSON?: unknown }).toJSON;
    }
  }
});
