/**
 * canonicalJson() gives, for every value, the text of the serializer written out by hand that it
 * replaced (kept below as the oracle): the request digest of every record ever begun hashes it.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { canonicalJson, type JsonValue } from "../../src/core/json.ts";

/** The canonical serializer as it was, unchanged: keys sorted by UTF-16 units at print time. */
function oracle(value: JsonValue): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) break;
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          out += (i === 0 ? "" : ",") + oracle(value[i]!);
        }
        return out + "]";
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) break;
      const keys = Object.keys(value).sort();
      let out = "{";
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        out += (i === 0 ? "" : ",") + JSON.stringify(key) + ":" + oracle(value[key]!);
      }
      return out + "}";
    }
  }
  throw new TypeError("Cannot make canonical JSON: the value is not JSON data");
}

/** What a call gives: its text, or the class of what it threw. */
function outcome(serialize: (value: JsonValue) => string, value: JsonValue): string {
  try {
    return `text ${serialize(value)}`;
  } catch (error) {
    return `threw ${(error as Error).constructor.name}`;
  }
}

/** Keys where a native serializer differs from the sorted order, or an assignment from a definition. */
const trickyKey = fc.constantFrom(
  "__proto__",
  "0",
  "9",
  "10",
  "01",
  "1.5",
  "-1",
  "1e3",
  "4294967294",
  "4294967295",
  "9007199254740993",
  "",
  " ",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "toJSON",
  "\u{1F600}",
  "\uFF5E",
  "\uD800",
  "é",
);
const key = fc.oneof(
  trickyKey,
  fc.string({ maxLength: 4 }),
  fc.string({ unit: "binary", maxLength: 3 }),
  fc.nat({ max: 1_000 }).map(String),
);

/** An object with these own enumerable data properties, defined (so `__proto__` is a key). */
function objectOf(entries: [string, unknown][], nullProto: boolean): Record<string, unknown> {
  const object: Record<string, unknown> = nullProto ? Object.create(null) : {};
  for (const [name, item] of entries) {
    Object.defineProperty(object, name, {
      value: item,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return object;
}

const { value: anyValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double(), // NaN, Infinity and -0 included
    fc.integer(),
    fc.string({ unit: "binary", maxLength: 6 }), // lone surrogates included
    fc.string({ maxLength: 6 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.tuple(fc.array(fc.tuple(key, tie("value")), { maxLength: 6 }), fc.boolean())
      .map(([entries, nullProto]) => objectOf(entries, nullProto)),
  ),
}));

Deno.test("canonicalJson() gives the hand-written serializer's text for every JSON value, tricky keys included", () => {
  fc.assert(
    fc.property(anyValue, (value) => {
      assert.equal(outcome(canonicalJson, value as JsonValue), outcome(oracle, value as JsonValue));
    }),
    { numRuns: 3_000 },
  );
});

Deno.test("canonicalJson() gives the oracle's text for whatever JSON.parse gives", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const parsed = JSON.parse(JSON.stringify(value)) as JsonValue;
      assert.equal(canonicalJson(parsed), oracle(parsed));
    }),
    { numRuns: 1_000 },
  );
});

Deno.test("canonicalJson() refuses exactly what the oracle refuses, with a TypeError", () => {
  const sparse = [1, , 3] as unknown as JsonValue;
  const values = [
    undefined,
    () => 1,
    Symbol("s"),
    1n,
    Number.NaN,
    -Infinity,
    new Date(0),
    new Map(),
    { a: undefined },
    { a: { b: [Number.POSITIVE_INFINITY] } },
    sparse,
    [1, new (class Point {})()],
  ] as unknown as JsonValue[];
  for (const value of values) {
    assert.equal(outcome(canonicalJson, value), "threw TypeError");
    assert.equal(outcome(oracle, value), "threw TypeError");
  }
});

Deno.test("canonicalJson() reads each value once, in the order the canonical text lists it", () => {
  const reads: string[] = [];
  const counted = (name: string, value: JsonValue) => ({
    enumerable: true,
    get() {
      reads.push(name);
      return value;
    },
  });
  const inner = Object.defineProperties({}, { y: counted("y", 2), x: counted("x", 1) });
  const value = Object.defineProperties({}, {
    b: counted("b", [inner]),
    "10": counted("10", true),
    a: counted("a", "s"),
  }) as JsonValue;
  assert.equal(canonicalJson(value), '{"10":true,"a":"s","b":[{"x":1,"y":2}]}');
  assert.deepEqual(reads, ["10", "a", "b", "x", "y"]);
});

Deno.test("canonicalJson() ignores a prototype's toJSON and setters, as the oracle does", () => {
  const value = JSON.parse('{"b":[1,{"d":2}],"a":{"c":null},"constructor":"x"}') as JsonValue;
  const expected = oracle(value);
  for (const proto of [Object.prototype, Array.prototype]) {
    Object.defineProperty(proto, "toJSON", {
      value: () => "rewritten",
      configurable: true,
      writable: true,
    });
    try {
      assert.equal(canonicalJson(value), expected);
    } finally {
      delete (proto as { toJSON?: unknown }).toJSON;
    }
  }
  // A setter on Object.prototype (as `__proto__` has one outside Deno) never runs: the copy's
  // keys are defined, not assigned.
  const keyed = JSON.parse('{"__proto__":{"k":1},"a":[{"__proto__":2}],"z":0}') as JsonValue;
  for (const name of ["a", "__proto__"]) {
    let set = 0;
    Object.defineProperty(Object.prototype, name, {
      get: () => undefined,
      set() {
        set++;
      },
      configurable: true,
    });
    try {
      assert.equal(canonicalJson(value), expected);
      assert.equal(canonicalJson(keyed), '{"__proto__":{"k":1},"a":[{"__proto__":2}],"z":0}');
    } finally {
      delete (Object.prototype as Record<string, unknown>)[name];
    }
    assert.equal(set, 0, name);
  }
});
