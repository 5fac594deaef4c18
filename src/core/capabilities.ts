/**
 * What a store offers: the one place that names the required methods of a `Store` and the
 * methods of each optional capability, and tells which capabilities a store has. Setup, the
 * boundary's methods, the HTTP routes, `@tool-boundary/durable` and the conformance suite all
 * ask here.
 *
 * @module
 */
import type { CallIndex, RunIndex, RunSeal, Store } from "./store.ts";

/** An optional capability of a store: `CallIndex`, `RunIndex` or `RunSeal`. */
export type StoreCapability = "CallIndex" | "RunIndex" | "RunSeal";

/**
 * The methods of each optional capability: a store offers a capability when it has every one of
 * its methods, and may not have only some of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { STORE_CAPABILITIES } from "@tool-boundary/core/store";
 * assert.deepEqual(STORE_CAPABILITIES.RunSeal, ["sealRun", "exportRun"]);
 * ```
 */
export const STORE_CAPABILITIES: Readonly<Record<StoreCapability, readonly string[]>> = Object
  .freeze({
    CallIndex: Object.freeze(["lookupCall", "listCalls"]),
    RunIndex: Object.freeze(["listRuns"]),
    RunSeal: Object.freeze(["sealRun", "exportRun"]),
  });

/** The methods every store has (`Store`), in the order the interface lists them. */
export const REQUIRED_STORE_METHODS: readonly string[] = Object.freeze([
  "startRun",
  "getRun",
  "begin",
  "complete",
  "get",
  "endRun",
  "readFacts",
]);

const hasMethod = (store: unknown, method: string): boolean =>
  store != null && typeof (store as Record<string, unknown>)[method] === "function";

/**
 * The optional capabilities a store offers, in the order of {@linkcode STORE_CAPABILITIES}.
 *
 * @param store A store.
 * @returns The capabilities whose every method the store has.
 * @throws {TypeError} When the store has some but not all methods of a capability, naming the
 *   capability and what is missing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "@tool-boundary/core/memory";
 * import { capabilitiesOf } from "@tool-boundary/core/store";
 *
 * assert.deepEqual(capabilitiesOf(new MemoryStore()), ["CallIndex", "RunIndex", "RunSeal"]);
 * const { startRun, getRun, begin, complete, get, endRun, readFacts } = new MemoryStore();
 * assert.deepEqual(capabilitiesOf({ startRun, getRun, begin, complete, get, endRun, readFacts }), []);
 * assert.throws(
 *   () => capabilitiesOf({ lookupCall: () => Promise.resolve(null) }),
 *   { name: "TypeError", message: "The store has an incomplete CallIndex: it lacks listCalls()" },
 * );
 * ```
 */
export function capabilitiesOf(store: object): StoreCapability[] {
  const offered: StoreCapability[] = [];
  for (const [capability, methods] of Object.entries(STORE_CAPABILITIES)) {
    const missing = methods.filter((method) => !hasMethod(store, method));
    if (missing.length === 0) offered.push(capability as StoreCapability);
    else if (missing.length < methods.length) {
      throw new TypeError(
        `The store has an incomplete ${capability}: it lacks ${
          missing.map((method) => `${method}()`).join(", ")
        }`,
      );
    }
  }
  return offered;
}

/**
 * The store, when it offers the capability; else a TypeError that says what could not be done
 * and which capability (and methods) it needs, so a missing capability never surfaces as
 * `x is not a function`.
 *
 * @param store The store.
 * @param capability The capability needed.
 * @param what What needs it, for the message: `Cannot <what>: ...`.
 * @returns The same store, typed with the capability.
 * @throws {TypeError} `Cannot <what>: the store has no <capability> (<methods>)`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "@tool-boundary/core/memory";
 * import { requireCapability } from "@tool-boundary/core/store";
 *
 * const store = new MemoryStore();
 * assert.equal(requireCapability(store, "RunIndex", "list runs"), store);
 * const { startRun, getRun, begin, complete, get, endRun, readFacts } = store;
 * const core = { startRun, getRun, begin, complete, get, endRun, readFacts };
 * assert.throws(() => requireCapability(core, "RunIndex", "list runs"), {
 *   name: "TypeError",
 *   message: "Cannot list runs: the store has no RunIndex (listRuns)",
 * });
 * ```
 */
export function requireCapability(
  store: Store,
  capability: "CallIndex",
  what: string,
): Store & CallIndex;
/** The store, typed with `RunIndex`; else a TypeError (see the first signature). */
export function requireCapability(
  store: Store,
  capability: "RunIndex",
  what: string,
): Store & RunIndex;
/** The store, typed with `RunSeal`; else a TypeError (see the first signature). */
export function requireCapability(
  store: Store,
  capability: "RunSeal",
  what: string,
): Store & RunSeal;
export function requireCapability(
  store: Store,
  capability: StoreCapability,
  what: string,
): Store & Partial<CallIndex & RunIndex & RunSeal> {
  const methods = STORE_CAPABILITIES[capability];
  if (!methods.every((method) => hasMethod(store, method))) {
    throw new TypeError(
      `Cannot ${what}: the store has no ${capability} (${methods.join(", ")})`,
    );
  }
  return store;
}

/**
 * Checks that a value is a store: every required method, and every capability whole.
 *
 * @param store Anything.
 * @param what What takes the store, for the message: `Cannot <what>: ...`.
 * @returns The capabilities it offers.
 * @throws {TypeError} `Cannot <what>: store lacks <method>()` for a missing required method, or
 *   naming a capability the store has only in part.
 */
export function checkStore(store: unknown, what: string): StoreCapability[] {
  for (const method of REQUIRED_STORE_METHODS) {
    if (!hasMethod(store, method)) throw new TypeError(`Cannot ${what}: store lacks ${method}()`);
  }
  try {
    return capabilitiesOf(store as object);
  } catch (error) {
    const message = (error as Error).message;
    throw new TypeError(`Cannot ${what}: ${message[0]!.toLowerCase()}${message.slice(1)}`);
  }
}
