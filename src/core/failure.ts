/**
 * A record's `failure`: what a tool's executor threw, read once and bounded, for the harness
 * only. Stores check it with {@linkcode checkFailure} before they keep it.
 *
 * @module
 */
import { MAX_FAILURE_BYTES } from "./limits.ts";
import type { ToolFailure } from "./types.ts";
import { utf8ByteLength } from "./utf8.ts";

/** A name short and plain enough to show anywhere: what an error class or `typeof` gives. */
const FAILURE_NAME = /^[A-Za-z_$][A-Za-z0-9_$.:-]{0,63}$/;

/** The name of a failure whose own name is not a {@linkcode FAILURE_NAME}. */
const FALLBACK_NAME = "Error";

/**
 * Reads what an executor threw, once, without letting it throw: an object's `name` and
 * `message` are each read once (a getter or Proxy trap that throws counts as absent); a thrown
 * non-object is named by its `typeof` ("string", "number", "undefined", ...; `null` is "null"), with its text as
 * the message for a string, number, boolean or bigint. A name that is not 1 to 64 of
 * `A-Z a-z 0-9 _ $ . : -` (starting with a letter, `_` or `$`) becomes "Error"; a message that
 * is not a string, or whose failure JSON would pass `MAX_FAILURE_BYTES`, becomes `null`.
 *
 * @param thrown Anything.
 * @returns A frozen failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readFailure } from "./failure.ts";
 * assert.deepEqual(readFailure(new TypeError("bad")), { name: "TypeError", message: "bad" });
 * assert.deepEqual(readFailure("oops"), { name: "string", message: "oops" });
 * assert.deepEqual(readFailure({ name: "<b>", message: "x".repeat(5_000) }), {
 *   name: "Error",
 *   message: null,
 * });
 * ```
 */
export function readFailure(thrown: unknown): ToolFailure {
  let name: unknown = thrown === null ? "null" : typeof thrown;
  let message: unknown = null;
  if ((typeof thrown === "object" && thrown !== null) || typeof thrown === "function") {
    name = readOnce(thrown, "name");
    message = readOnce(thrown, "message");
  } else if (typeof thrown !== "symbol" && thrown != null) {
    message = String(thrown);
  }
  return bounded(
    typeof name === "string" && FAILURE_NAME.test(name) ? name : FALLBACK_NAME,
    typeof message === "string" ? message : null,
  );
}

/**
 * Checks a failure a store is asked to keep, and copies it (each member read once).
 *
 * @param value Anything.
 * @returns A frozen copy of only `name` and `message`.
 * @throws {TypeError} When it is not a failure {@linkcode readFailure} could give: a safe name,
 *   a message that is a string or `null`, within `MAX_FAILURE_BYTES`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkFailure } from "./failure.ts";
 * assert.deepEqual(checkFailure({ name: "Error", message: null }), { name: "Error", message: null });
 * assert.throws(() => checkFailure({ name: "a b", message: null }), TypeError);
 * ```
 */
export function checkFailure(value: unknown): ToolFailure {
  const f = value as Partial<Record<string, unknown>> | null | undefined;
  const name = f?.name, message = f?.message;
  if (
    typeof name !== "string" || !FAILURE_NAME.test(name) ||
    (message !== null && typeof message !== "string") ||
    failureBytes(name, message) > MAX_FAILURE_BYTES
  ) {
    throw new TypeError("Invalid failure: expected { name, message } within MAX_FAILURE_BYTES");
  }
  return Object.freeze({ name, message });
}

/** Whether two failures (or their absence) are the same. */
export function sameFailure(a: ToolFailure | undefined, b: ToolFailure | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.name === b.name &&
    a.message === b.message);
}

function readOnce(target: object, key: "name" | "message"): unknown {
  try {
    return (target as Record<string, unknown>)[key];
  } catch {
    return undefined; // a getter or a Proxy trap threw
  }
}

function bounded(name: string, message: string | null): ToolFailure {
  // UTF-8 never has fewer bytes than UTF-16 units: a longer message cannot fit, so it is not
  // encoded at all.
  const fits = (message === null || message.length <= MAX_FAILURE_BYTES) &&
    failureBytes(name, message) <= MAX_FAILURE_BYTES;
  return Object.freeze({ name, message: fits ? message : null });
}

/** UTF-8 bytes of the failure's JSON, as a store keeps it. */
function failureBytes(name: string, message: string | null): number {
  // JSON.stringify escapes lone surrogates, so the count is of what is stored.
  return utf8ByteLength(JSON.stringify({ name, message }));
}
