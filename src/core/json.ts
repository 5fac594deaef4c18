/**
 * JSON value types and the strict check that a value survives `JSON.stringify` unchanged.
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

/** The deepest `checkJson` ever descends, whatever `maxDepth` says, so it cannot overflow the stack. */
export const MAX_CHECK_DEPTH = 1_000;

/**
 * Checks that a value is plain JSON data: strings, finite numbers, booleans, null, arrays and
 * plain objects (prototype `Object.prototype` or `null`). Anything `JSON.stringify` would drop,
 * change or reject (undefined, functions, symbols, BigInt, NaN, Infinity, class instances such
 * as Date or Map, array holes, cycles) is refused, so that what is stored is exactly what the
 * caller had. Nesting deeper than `maxDepth` (at most {@linkcode MAX_CHECK_DEPTH}) is refused,
 * which also ends a cycle, so hostile nesting can neither hang it nor overflow the stack.
 *
 * A getter that throws makes `checkJson` throw; callers treat that as "not JSON".
 *
 * @param value Anything.
 * @param maxDepth The deepest nesting of arrays and objects accepted.
 * @returns `null` when the value is plain JSON data, otherwise what is wrong with it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkJson } from "@tool-boundary/core";
 * assert.equal(checkJson({ a: [1, "x", null] }, 64), null);
 * assert.equal(checkJson({ at: new Date() }, 64), "NOT_JSON");
 * ```
 */
export function checkJson(value: unknown, maxDepth: number): JsonProblem | null {
  problem = null;
  return walk(value, Math.min(maxDepth, MAX_CHECK_DEPTH)) ? null : problem ?? "NOT_JSON";
}

let problem: JsonProblem | null = null;

/** Recursion is the fast path in V8, and the depth cap keeps it far from the stack's limit. */
function walk(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object": {
      if (value === null) return true;
      if (depth < 1) {
        problem = "TOO_DEEP";
        return false;
      }
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!(i in value) || !walk(value[i], depth - 1)) return false;
        }
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (!walk((value as Record<string, unknown>)[key], depth - 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
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
 * import { isPlainObject } from "@tool-boundary/core";
 * assert.deepEqual([{}, [], new Map()].map(isPlainObject), [true, false, false]);
 * ```
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
