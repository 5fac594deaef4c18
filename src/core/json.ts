/**
 * JSON value types, and the one walk that reads a value once into a plain copy and its JSON text.
 *
 * @module
 */

/** A value that JSON can carry exactly. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

/** A JSON object: string keys, JSON values. */
export interface JsonObject {
  /** Any key, a JSON value. */
  [key: string]: JsonValue;
}

/** Why a value is not plain JSON data. */
export type JsonProblem = "NOT_JSON" | "TOO_DEEP";

/** Why {@linkcode snapshotJson} refused a value: not JSON data, too deep, or too long. */
export type SnapshotProblem = JsonProblem | "TOO_LARGE";

/**
 * A value read once: its JSON text and a fresh copy that is exactly `JSON.parse(json)`, or why
 * the value was refused (with what a read threw, if one did, for logs only).
 */
export type JsonSnapshot =
  | { json: string; value: JsonValue }
  | { problem: SnapshotProblem; error?: unknown };

/** The deepest `checkJson` ever descends, whatever `maxDepth` says, so it cannot overflow the stack. */
export const MAX_CHECK_DEPTH = 1_000;

/**
 * Reads a value exactly once and returns a fresh copy of it with its JSON text, or refuses it.
 *
 * Accepted: strings, finite numbers, booleans, null, arrays (prototype `Array.prototype`,
 * every index present, no other own property) and plain objects (prototype `Object.prototype`
 * or `null`, only enumerable string-keyed own properties). Refused, because `JSON.stringify`
 * would drop, change or reject them: undefined, functions, symbols, BigInt, NaN, Infinity,
 * class instances (Date, Map, Array subclasses), array holes, extra properties on arrays,
 * symbol keys, non-enumerable own properties (a hidden `toJSON` among them), cycles, and
 * anything while `Object.prototype` or `Array.prototype` has a `toJSON`.
 *
 * Each own property is read once. A getter therefore runs exactly once, and its result is what
 * the copy holds, as `JSON.stringify` would see it; reading descriptors instead (to refuse
 * getters) costs about three times as much per property. A getter that throws, or that adds
 * or removes properties while it is read, refuses the value. A Proxy is read through its traps
 * like any object: a trap that throws refuses the value, and what the traps answered is what
 * the copy holds. The text is made from the copy, never from the value, so nothing the value
 * does later (or did on a second read) can make the two differ. `-0` becomes `0`, as in JSON.
 *
 * Work is bounded: nesting deeper than `maxDepth` (at most {@linkcode MAX_CHECK_DEPTH}) is
 * TOO_DEEP, which also ends a cycle, and the walk stops with TOO_LARGE as soon as the JSON
 * text is certain to be longer than `maxLength` UTF-16 units (a UTF-8 byte limit can be passed
 * as is: JSON text never has fewer UTF-8 bytes than UTF-16 units), so shared sub-objects cannot
 * make it walk without end.
 *
 * @param value Anything.
 * @param maxDepth The deepest nesting of arrays and objects accepted.
 * @param maxLength The longest JSON text accepted, in UTF-16 units. @default Infinity
 * @returns `{ json, value }`, or `{ problem }` (with `error` when a read threw).
 *
 * @example
 * ```ts
 * import { snapshotJson } from "./json.ts";
 * import assert from "node:assert/strict";
 *
 * let reads = 0;
 * const live = { get n() { return ++reads; } };
 * const snapshot = snapshotJson(live, 64);
 * assert.deepEqual(snapshot, { json: '{"n":1}', value: { n: 1 } });
 * assert.equal(reads, 1);
 * const hidden = Object.defineProperty({}, "toJSON", { value: () => "x" });
 * assert.deepEqual(snapshotJson(hidden, 64), { problem: "NOT_JSON" });
 * ```
 */
export function snapshotJson(value: unknown, maxDepth: number, maxLength?: number): JsonSnapshot {
  const copy = copyOnce(value, maxDepth, maxLength ?? Number.POSITIVE_INFINITY);
  if ("problem" in copy) return copy;
  try {
    return { json: JSON.stringify(copy.value), value: copy.value };
  } catch (error) {
    // Not expected: the copy is plain data and no prototype has a toJSON.
    return { problem: "NOT_JSON", error };
  }
}

/**
 * Checks that a value is plain JSON data, by the rules of {@linkcode snapshotJson} (whose copy
 * it makes and drops): a value it accepts survives `JSON.stringify` unchanged. It never throws:
 * a getter or Proxy trap that throws makes the value "NOT_JSON".
 *
 * @param value Anything.
 * @param maxDepth The deepest nesting of arrays and objects accepted.
 * @returns `null` when the value is plain JSON data, otherwise what is wrong with it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkJson } from "./json.ts";
 * assert.equal(checkJson({ a: [1, "x", null] }, 64), null);
 * assert.equal(checkJson({ at: new Date() }, 64), "NOT_JSON");
 * assert.equal(checkJson([[[1]]], 2), "TOO_DEEP");
 * ```
 */
export function checkJson(value: unknown, maxDepth: number): JsonProblem | null {
  const copy = copyOnce(value, maxDepth, Number.POSITIVE_INFINITY);
  // No length limit, so never TOO_LARGE.
  return "problem" in copy ? copy.problem as JsonProblem : null;
}

const REFUSED: unique symbol = Symbol("refused");
const ObjectPrototype = Object.prototype;
const ArrayPrototype = Array.prototype;
const {
  defineProperty,
  getPrototypeOf,
  getOwnPropertyNames,
  getOwnPropertySymbols,
  keys: keysOf,
  hasOwn,
} = Object;
const { isArray } = Array;
const { ownKeys } = Reflect;

// The state of the walk in progress. A getter may start another walk inside it, so each walk
// saves and restores the state of the one it interrupts.
let problem: SnapshotProblem = "NOT_JSON";
let budget = 0;

function copyOnce(
  value: unknown,
  maxDepth: number,
  maxLength: number,
): { value: JsonValue } | { problem: SnapshotProblem; error?: unknown } {
  const outerProblem = problem;
  const outerBudget = budget;
  problem = "NOT_JSON";
  budget = maxLength;
  try {
    // A prototype's toJSON would make JSON.stringify rewrite every copy: asked before the walk,
    // and again after it, as a getter the walk ran may have given one a toJSON (an array's
    // element is read after the array's own check).
    if (prototypeHasToJSON()) return { problem: "NOT_JSON" };
    const copy = copyValue(value, Math.min(maxDepth, MAX_CHECK_DEPTH));
    if (copy === REFUSED) return { problem };
    return prototypeHasToJSON() ? { problem: "NOT_JSON" } : { value: copy };
  } catch (error) {
    // A getter or a Proxy trap threw, or a trap broke a Proxy invariant.
    return { problem: "NOT_JSON", error };
  } finally {
    problem = outerProblem;
    budget = outerBudget;
  }
}

/** A plain object and a plain array of the module's own, never changed or handed out. */
const PLAIN_OBJECT = Object.freeze({});
const PLAIN_ARRAY = Object.freeze([]);

/**
 * Whether a copy's prototypes (`Object.prototype`, or `Array.prototype` and what it inherits
 * from) hold a `toJSON`, which `JSON.stringify` would call. Asked of two objects of the module's
 * own, as `in` on an object whose shape V8 has seen costs a few nanoseconds, where looking the
 * key up on `Object.prototype` itself costs tens. May run a Proxy's trap, if one was made a
 * prototype of `Array.prototype`: the caller catches what it throws.
 */
function prototypeHasToJSON(): boolean {
  return "toJSON" in PLAIN_OBJECT || "toJSON" in PLAIN_ARRAY;
}

/** Recursion is the fast path in V8, and the depth cap keeps it far from the stack's limit. */
function copyValue(value: unknown, depth: number): JsonValue | typeof REFUSED {
  switch (typeof value) {
    case "string":
      return (budget -= value.length + 2) < 0 ? tooLarge() : value;
    case "number":
      if (!Number.isFinite(value)) return REFUSED;
      return --budget < 0 ? tooLarge() : value === 0 ? 0 : value;
    case "boolean":
      return (budget -= 4) < 0 ? tooLarge() : value;
    case "object":
      if (value === null) return (budget -= 4) < 0 ? tooLarge() : null;
      if (depth < 1) {
        problem = "TOO_DEEP";
        return REFUSED;
      }
      return isArray(value) ? copyArray(value, depth) : copyObject(value, depth);
    default:
      return REFUSED;
  }
}

function copyArray(value: unknown[], depth: number): JsonValue[] | typeof REFUSED {
  if (getPrototypeOf(value) !== ArrayPrototype) return REFUSED;
  const length = value.length;
  if (typeof length !== "number") return REFUSED; // a Proxy's answer; never coerced
  // An ordinary array lists its indices, then "length", then any other key: exactly
  // length + 1 keys ending in "length" means no hole and nothing JSON would drop.
  const keys = ownKeys(value);
  if (keys.length !== length + 1 || keys[length] !== "length") return REFUSED;
  // Only a Proxy can lie about its prototype; `in` asks it without running a getter.
  if ("toJSON" in value) return REFUSED;
  if ((budget -= length + 1) < 0) return tooLarge();
  const copy: JsonValue[] = [];
  for (let i = 0; i < length; i++) {
    const item = value[i];
    if (typeof item === "string") { // as in copyObject: counted here, without a call
      if ((budget -= item.length + 2) < 0) return tooLarge();
      copy[i] = item;
      continue;
    }
    const inner = copyValue(item, depth - 1);
    if (inner === REFUSED) return REFUSED;
    copy[i] = inner;
  }
  return copy;
}

function copyObject(value: object, depth: number): JsonObject | typeof REFUSED {
  const proto = getPrototypeOf(value);
  if (proto !== ObjectPrototype && proto !== null) return REFUSED;
  // Spread reads each own enumerable property once (a getter runs once) and defines each on
  // the copy, so a "__proto__" key stays an own property and no setter runs.
  const copy = { ...value } as Record<string, unknown>;
  const keys = keysOf(copy);
  if (getOwnPropertyNames(value).length !== keys.length) return REFUSED; // non-enumerable
  if (getOwnPropertySymbols(value).length !== 0) return REFUSED;
  // An own toJSON is in the copy (and refused there unless it is data); an inherited one is
  // possible only behind a Proxy lying about its prototype.
  if ("toJSON" in value && !hasOwn(copy, "toJSON")) return REFUSED;
  budget -= 1;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = copy[key];
    if (typeof item === "string") { // the bulk of JSON, counted here without a call
      if ((budget -= key.length + item.length + 6) < 0) return tooLarge();
      continue;
    }
    if ((budget -= key.length + 4) < 0) return tooLarge();
    const inner = copyValue(item, depth - 1);
    if (inner === REFUSED) return REFUSED;
    if (inner !== item || inner === 0) copy[key] = inner; // a copied container; -0 as 0
  }
  return copy as JsonObject;
}

function tooLarge(): typeof REFUSED {
  problem = "TOO_LARGE";
  return REFUSED;
}

/**
 * {@linkcode snapshotJson} of what `JSON.parse` just returned, which no other code has held: the
 * same answer, without the copy. Such a value is plain data by construction (own enumerable data
 * properties, `Object.prototype` and `Array.prototype` as prototypes, no holes, no symbols, no
 * shared parts), so only what the walk would still refuse or change is checked: nesting past
 * `maxDepth`, a number that is not finite (`1e999` parses to Infinity), a prototype with a
 * `toJSON`, and `-0`, which is set to `0` in place. No length bound: the text that was parsed
 * bounds the work, and the caller its own limit on the result's text.
 *
 * A speed trick; its plain twin is {@linkcode snapshotJson}, which `tests/core/json_utf8_test.ts`
 * holds equal to it for anything `JSON.parse` returns (property-based). Measured gain, side by
 * side in one process (BENCHMARKS.md, figure 11): a MemoryStore invoke (1 KiB raw) of arguments
 * given as JSON text is 1.026x as slow with the twin (median of 5 runs of
 * `BENCH_PLAIN=1 deno task bench:memory`; 1.008x to 1.051x): this saves about 2.5% of it; of the
 * parse and snapshot alone, 1.2x (`deno bench --config deno.dev.json -A bench/tricks_bench.ts`).
 *
 * @param parsed What `JSON.parse` returned, not yet handed to anyone.
 * @param maxDepth The deepest nesting of arrays and objects accepted.
 * @returns `{ json, value }` with `value` the parsed value itself, or `{ problem }`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { snapshotParsed } from "./json.ts";
 * assert.deepEqual(snapshotParsed(JSON.parse('{"a":[-0]}'), 8), { json: '{"a":[0]}', value: { a: [0] } });
 * assert.deepEqual(snapshotParsed(JSON.parse("[[1]]"), 1), { problem: "TOO_DEEP" });
 * ```
 */
export function snapshotParsed(parsed: unknown, maxDepth: number): JsonSnapshot {
  try {
    if (prototypeHasToJSON()) return { problem: "NOT_JSON" };
  } catch (error) {
    return { problem: "NOT_JSON", error };
  }
  const value = parsed === 0 ? 0 : parsed; // -0
  const problem = parsedProblem(value, Math.min(maxDepth, MAX_CHECK_DEPTH));
  return problem !== null
    ? { problem }
    : { json: JSON.stringify(value), value: value as JsonValue };
}

/**
 * {@linkcode snapshotParsed} of `JSON.parse(text)`: JSON text read once into a plain value and the
 * JSON text of that value, which means exactly what was parsed. So the text's whitespace is gone,
 * a member name given twice keeps its last value (as the parse did), a number past double
 * precision is the double it parsed to, `-0` is `0`, and lone surrogates are escaped; a text that
 * is not JSON is NOT_JSON (the parser's error kept, for logs only), as is one that parses to a
 * number JSON cannot hold (`1e400` is Infinity). No length bound: the caller bounds the text.
 *
 * @param text Anything the caller holds as a string primitive.
 * @param maxDepth The deepest nesting of arrays and objects accepted.
 * @returns `{ json, value }`, `value` the parsed value itself, or `{ problem }`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { snapshotText } from "./json.ts";
 * assert.deepEqual(snapshotText(' {"a": 1, "a": -0, "n": 12345678901234567890} ', 8), {
 *   json: '{"a":0,"n":12345678901234567000}',
 *   value: { a: 0, n: 12345678901234567000 },
 * });
 * assert.equal((snapshotText("1e400", 8) as { problem: string }).problem, "NOT_JSON");
 * assert.equal((snapshotText("{", 8) as { problem: string }).problem, "NOT_JSON");
 * ```
 */
export function snapshotText(text: string, maxDepth: number): JsonSnapshot {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { problem: "NOT_JSON", error };
  }
  return snapshotParsed(parsed, maxDepth);
}

/** What {@linkcode snapshotParsed} refuses in parsed data, setting `-0` to `0` on the way. */
function parsedProblem(value: unknown, depth: number): JsonProblem | null {
  if (typeof value !== "object") {
    return typeof value !== "number" || Number.isFinite(value) ? null : "NOT_JSON";
  }
  if (value === null) return null;
  // `for-in` lists an object's keys from V8's enum cache, without the array `Object.keys`
  // allocates (8% of a parse and stringify of 64 KiB, against 33%), but lists enumerable keys
  // of Object.prototype too: while it has one, only own keys are walked.
  return inheritsEnumerable()
    ? itemsProblem(value, depth, true)
    : itemsProblem(value, depth, false);
}

/** Whether `Object.prototype` has an enumerable property, which `for-in` would list. */
function inheritsEnumerable(): boolean {
  for (const _ in PLAIN_OBJECT) return true;
  return false;
}

/** {@linkcode parsedProblem} of an array or object: its items, each checked where it is. */
function itemsProblem(value: object, depth: number, ownKeys: boolean): JsonProblem | null {
  if (depth < 1) return "TOO_DEEP";
  if (isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (typeof item === "object") {
        if (item === null) continue;
        const inner = itemsProblem(item, depth - 1, ownKeys);
        if (inner !== null) return inner;
      } else if (typeof item === "number") {
        if (item === 0) value[i] = 0; // -0
        else if (!Number.isFinite(item)) return "NOT_JSON";
      }
    }
    return null;
  }
  const object = value as Record<string, unknown>;
  if (ownKeys) {
    const keys = keysOf(object);
    for (let i = 0; i < keys.length; i++) {
      const inner = memberProblem(object, keys[i]!, depth, true);
      if (inner !== null) return inner;
    }
    return null;
  }
  for (const key in object) {
    const inner = memberProblem(object, key, depth, false);
    if (inner !== null) return inner;
  }
  return null;
}

/** One member of a parsed object, checked; a `-0` set to `0`. */
function memberProblem(
  object: Record<string, unknown>,
  key: string,
  depth: number,
  ownKeys: boolean,
): JsonProblem | null {
  const item = object[key];
  if (typeof item === "object") {
    return item === null ? null : itemsProblem(item, depth - 1, ownKeys);
  }
  if (typeof item === "number") {
    // An own data property: assigning it runs no setter, `__proto__` included.
    if (item === 0) object[key] = 0; // -0
    else if (!Number.isFinite(item)) return "NOT_JSON";
  }
  return null;
}

/**
 * Tells whether a value is a plain JSON object (not an array, not null).
 *
 * @param value Anything.
 * @returns `true` for `{}`-style objects whose prototype is `Object.prototype` or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isPlainObject } from "./json.ts";
 * assert.deepEqual([{}, [], new Map()].map(isPlainObject), [true, false, false]);
 * ```
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The canonical JSON text of a JSON value, for telling whether two values are equal whatever
 * their key order: object keys sorted by UTF-16 code units, at every depth; arrays in order;
 * strings and numbers as `JSON.stringify` prints them (so `-0` is `0`).
 *
 * @param value JSON data, as `JSON.parse` or {@linkcode snapshotJson} give it.
 * @returns The canonical text.
 * @throws {TypeError} When the value holds something that is not JSON data (undefined, a
 *   function, a non-finite number, a class instance).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalJson } from "./json.ts";
 * assert.equal(canonicalJson({ b: [1, { d: 0, c: "x" }], a: null }), '{"a":null,"b":[1,{"c":"x","d":0}]}');
 * assert.equal(canonicalJson({ b: 1, a: 2 }), canonicalJson({ a: 2, b: 1 }));
 * ```
 */
export function canonicalJson(value: JsonValue): string {
  const outerSlow = slowKeys;
  slowKeys = false;
  try {
    const sorted = sortedCopy(value);
    // Native JSON.stringify prints the copy's keys in the order they were added, sorted,
    // except integer-like keys (always first, in numeric order): a copy with a key that may
    // be one is printed by hand instead, as is any copy while a prototype has a toJSON (which
    // JSON.stringify would call). Both read only the copy.
    return slowKeys || hasOwn(ObjectPrototype, "toJSON") || hasOwn(ArrayPrototype, "toJSON")
      ? canonicalText(sorted)
      : JSON.stringify(sorted);
  } finally {
    slowKeys = outerSlow;
  }
}

/** Whether the copy being sorted needs {@linkcode canonicalText}; saved and restored per call. */
let slowKeys = false;

/**
 * A copy of a JSON value whose objects have their keys added in sorted order. Each value is
 * read once, in the order the canonical text lists it.
 */
function sortedCopy(value: JsonValue): JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) break;
      return value;
    case "object": {
      if (value === null) return null;
      if (isArray(value)) {
        const copy: JsonValue[] = [];
        for (let i = 0; i < value.length; i++) copy[i] = sortedCopy(value[i]!);
        return copy;
      }
      if (!isPlainObject(value)) break;
      const keys = sortedKeys(keysOf(value));
      const copy: JsonObject = {};
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const first = key.charCodeAt(0);
        if (first >= 0x30 && first <= 0x39) slowKeys = true; // maybe integer-like: 0-9
        const item = sortedCopy(value[key]!);
        // Assigning a key that Object.prototype has (`__proto__` above all) could run its
        // setter: such keys are defined, as an own data property like any other.
        if (key in ObjectPrototype) {
          defineProperty(copy, key, {
            value: item,
            writable: true,
            enumerable: true,
            configurable: true,
          });
        } else {
          copy[key] = item;
        }
      }
      return copy;
    }
  }
  throw new TypeError("Cannot make canonical JSON: the value is not JSON data");
}

/**
 * Sorts an object's keys by UTF-16 code units, as the default `sort` does: an insertion sort for
 * the few keys most objects have (`<` on strings compares code units, and keys are distinct, so
 * the order is the same), the built-in sort for more.
 */
function sortedKeys(keys: string[]): string[] {
  if (keys.length > 8) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/** The canonical text written out by hand: keys sorted at print time. */
function canonicalText(value: JsonValue): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      out += (i === 0 ? "" : ",") + canonicalText(value[i]!);
    }
    return out + "]";
  }
  const keys = keysOf(value).sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    out += (i === 0 ? "" : ",") + JSON.stringify(key) + ":" + canonicalText(value[key]!);
  }
  return out + "}";
}
