/**
 * JSON value types and the strict check that a value survives `JSON.stringify` unchanged.
 *
 * @module
 */

/** A value that JSON can carry exactly. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

/** A JSON object: string keys, JSON values. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Why a value is not plain JSON data. */
export type JsonProblem = "NOT_JSON" | "TOO_DEEP";

/**
 * Checks that a value is plain JSON data: strings, finite numbers, booleans, null, arrays and
 * plain objects (prototype `Object.prototype` or `null`). Anything `JSON.stringify` would drop,
 * change or reject (undefined, functions, symbols, BigInt, NaN, Infinity, class instances such
 * as Date or Map, array holes, cycles) is refused, so that what is stored is exactly what the
 * caller had. Iterative, so hostile nesting cannot overflow the stack; a cycle fails at
 * `maxDepth`.
 *
 * @param value Anything.
 * @param maxDepth The deepest nesting of arrays and objects accepted.
 * @returns `null` when the value is plain JSON data, otherwise what is wrong with it.
 *
 * @example
 * ```ts
 * import { checkJson } from "@tool-boundary/core";
 * console.log(checkJson({ a: [1, "x", null] }, 64)); // null
 * console.log(checkJson({ at: new Date() }, 64)); // "NOT_JSON"
 * ```
 */
export function checkJson(value: unknown, maxDepth: number): JsonProblem | null {
  // Fast path for scalars, the common raw payload shape for text tools.
  const type = typeof value;
  if (type === "string" || type === "boolean" || value === null) return null;
  if (type === "number") return Number.isFinite(value) ? null : "NOT_JSON";
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop();
    const depth = depths.pop()!;
    switch (typeof current) {
      case "string":
      case "boolean":
        continue;
      case "number":
        if (!Number.isFinite(current)) return "NOT_JSON";
        continue;
      case "object": {
        if (current === null) continue;
        if (depth > maxDepth) return "TOO_DEEP";
        if (Array.isArray(current)) {
          for (let i = 0; i < current.length; i++) {
            if (!(i in current)) return "NOT_JSON";
            values.push(current[i]);
            depths.push(depth + 1);
          }
          continue;
        }
        const proto = Object.getPrototypeOf(current);
        if (proto !== Object.prototype && proto !== null) return "NOT_JSON";
        for (const key in current) {
          if (!Object.hasOwn(current, key)) continue;
          values.push((current as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
        continue;
      }
      default:
        return "NOT_JSON";
    }
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
 * import { isPlainObject } from "@tool-boundary/core";
 * console.log(isPlainObject({}), isPlainObject([]), isPlainObject(new Map())); // true false false
 * ```
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
