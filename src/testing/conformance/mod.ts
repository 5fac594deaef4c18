/**
 * The store conformance suite, split by capability: the required `Store` core (runs, begin,
 * request identity, complete and its proof, TTL, progress and facts, round trips, concurrency,
 * IDs, cost budgets), then each optional capability (`CallIndex`, `RunIndex`, `RunSeal`), checked on the store
 * directly; and the boundary on top of it (preflight, records, outcomes, limits, run progress,
 * shared stores, replay and citations; recall and the call list with `CallIndex`), checked
 * through a `ToolBoundary`.
 *
 * @module
 */
import { capabilitiesOf, type StoreCapability } from "../../core/capabilities.ts";
import { boundaryCallIndexCases } from "./boundary_call_index.ts";
import { boundaryCostCases } from "./boundary_cost.ts";
import { boundaryLimitCases } from "./boundary_limits.ts";
import { boundaryOutcomeCases } from "./boundary_outcomes.ts";
import { boundaryPreflightCases } from "./boundary_preflight.ts";
import { boundaryProgressCases } from "./boundary_progress.ts";
import { boundaryRecordCases } from "./boundary_records.ts";
import { boundaryResumeCases } from "./boundary_resume.ts";
import { boundarySharedCases } from "./boundary_shared.ts";
import { callIndexCases } from "./call_index.ts";
import {
  absentCapabilityCase,
  ALL_CAPABILITIES,
  declaredCapabilities,
  declaredCapabilitiesCase,
} from "./capabilities.ts";
import {
  type BoundaryContext,
  boundaryContext,
  type ConformanceOptions,
  createSuite,
  type StoreContext,
  storeContext,
  type Suite,
} from "./context.ts";
import { runIndexCases } from "./run_index.ts";
import { runSealCases } from "./run_seal.ts";
import { storeBeginCases } from "./store_begin.ts";
import { storeCallCases } from "./store_calls.ts";
import { storeCompleteCases } from "./store_complete.ts";
import { storeConcurrencyCases } from "./store_concurrency.ts";
import { storeCostCases } from "./store_cost.ts";
import { storeFactCases } from "./store_facts.ts";
import { storeIdCases } from "./store_ids.ts";
import { storeProofCases } from "./store_proof.ts";
import { storeRoundTripCases } from "./store_round_trip.ts";
import { storeRunCases } from "./store_runs.ts";
import { storeTtlCases } from "./store_ttl.ts";

export type { ConformanceOptions, StoreUnderTest, TestRegistrar } from "./context.ts";

type Cases<C> = (suite: Suite<C>) => void;

/** The cases of the required core, on the store directly. */
const STORE_CASES: readonly Cases<StoreContext>[] = [
  storeRunCases,
  storeBeginCases,
  storeCallCases,
  storeCompleteCases,
  storeTtlCases,
  storeFactCases,
  storeRoundTripCases,
  storeConcurrencyCases,
  storeIdCases,
  storeProofCases,
  storeCostCases,
];

/** The cases of each capability, on the store directly. */
const CAPABILITY_CASES: Readonly<Record<StoreCapability, Cases<StoreContext>>> = {
  CallIndex: callIndexCases,
  RunIndex: runIndexCases,
  RunSeal: runSealCases,
};

/** The cases through a boundary that need the required core alone. */
const BOUNDARY_CASES: readonly Cases<BoundaryContext>[] = [
  boundaryPreflightCases,
  boundaryRecordCases,
  boundaryOutcomeCases,
  boundaryLimitCases,
  boundaryProgressCases,
  boundarySharedCases,
  boundaryResumeCases,
  boundaryCostCases,
];

/** The cases through a boundary that need a capability. */
const BOUNDARY_CAPABILITY_CASES: Readonly<
  Partial<Record<StoreCapability, Cases<BoundaryContext>>>
> = { CallIndex: boundaryCallIndexCases };

/**
 * The capabilities the suite runs the cases of: those declared, or else those the first store
 * the factory makes offers (made and closed here). Declared ones are read without an await, so
 * a suite whose store declares its capabilities registers every case before it returns.
 */
function capabilitiesFor(
  options: ConformanceOptions,
): StoreCapability[] | Promise<StoreCapability[]> {
  if (options.capabilities !== undefined) return declaredCapabilities(options.capabilities);
  return (async () => {
    const sut = await options.createStore();
    try {
      return capabilitiesOf(sut.store);
    } finally {
      await sut.close?.();
    }
  })();
}

/** Registers the boundary cases for a store that offers `offered`. */
function registerBoundaryCases(
  options: ConformanceOptions,
  names: string[],
  offered: readonly StoreCapability[],
): void {
  const suite = createSuite(options, names, boundaryContext);
  for (const cases of BOUNDARY_CASES) cases(suite);
  for (const capability of offered) BOUNDARY_CAPABILITY_CASES[capability]?.(suite);
}

/** Registers the store cases, and the boundary cases unless `boundary: false`. */
function registerStoreCases(
  options: ConformanceOptions,
  offered: readonly StoreCapability[],
): string[] {
  const names: string[] = [];
  const suite = createSuite(options, names, storeContext);
  if (options.capabilities !== undefined) declaredCapabilitiesCase(suite, offered);
  for (const cases of STORE_CASES) cases(suite);
  for (const capability of ALL_CAPABILITIES) {
    if (offered.includes(capability)) CAPABILITY_CASES[capability](suite);
    else absentCapabilityCase(suite, capability);
  }
  if (options.boundary !== false) registerBoundaryCases(options, names, offered);
  return names;
}

/**
 * Registers the conformance suite for a store: every rule of the required `Store` core, then
 * the cases of each optional capability the store offers and, for each one it lacks, a case that
 * a boundary on it refuses what needs it with a TypeError naming it; checked on the store
 * directly, and (unless `boundary: false`) the cases that go through a `ToolBoundary` on it, as
 * {@linkcode boundaryConformance} registers them.
 *
 * The capabilities are those of `options.capabilities` (then a case checks that the store offers
 * exactly these, and every case is registered before the call returns), or else those
 * `capabilitiesOf` finds on the first store the factory makes: await the result before the
 * module that calls it ends (`await storeConformance(...)` at its top level).
 *
 * @param options The store factory, a name, and optionally the capabilities and a registrar.
 * @returns The names of the registered tests.
 * @throws {TypeError} When `capabilities` names something else than a capability, or one twice;
 *   or (found on the first store) the store has a capability only in part.
 *
 * @example
 * ```ts ignore
 * import { storeConformance } from "@tool-boundary/core/testing";
 * import { MemoryStore } from "@tool-boundary/core/memory";
 *
 * await storeConformance({
 *   name: "MemoryStore",
 *   createStore: () => {
 *     let now = Date.now();
 *     return { store: new MemoryStore({ clock: () => now }), clock: () => now, advance: (ms) => { now += ms; } };
 *   },
 * });
 * ```
 */
export async function storeConformance(options: ConformanceOptions): Promise<string[]> {
  const offered = capabilitiesFor(options);
  return registerStoreCases(options, Array.isArray(offered) ? offered : await offered);
}

/**
 * Registers the cases that go through a `ToolBoundary` on the store: preflight, records,
 * outcomes, byte limits, run progress, boundaries that share the store, replay and citations,
 * and (on a store with `CallIndex`) recall and the call list. The capabilities are found as
 * {@linkcode storeConformance} finds them.
 *
 * @param options The store factory, a name, and optionally the capabilities and a registrar.
 * @returns The names of the registered tests.
 * @throws {TypeError} As {@linkcode storeConformance}.
 *
 * @example
 * ```ts ignore
 * import { boundaryConformance } from "@tool-boundary/core/testing";
 * import { MyStore } from "./my_store.ts";
 *
 * await boundaryConformance({ name: "MyStore", createStore: () => ({ store: new MyStore() }) });
 * ```
 */
export async function boundaryConformance(options: ConformanceOptions): Promise<string[]> {
  const found = capabilitiesFor(options);
  const offered = Array.isArray(found) ? found : await found;
  const names: string[] = [];
  registerBoundaryCases(options, names, offered);
  return names;
}
