/**
 * The store conformance suite, split by capability: the `Store` contract (runs, begin, request
 * identity and the calls a run keeps, complete, TTL, progress and facts, round trips,
 * concurrency), checked on the store directly,
 * and the boundary on top of it (preflight, records, outcomes, limits, run progress, shared
 * stores, replay, recall, the call list and citations), checked through a `ToolBoundary`.
 *
 * @module
 */
import { boundaryLimitCases } from "./boundary_limits.ts";
import { boundaryOutcomeCases } from "./boundary_outcomes.ts";
import { boundaryPreflightCases } from "./boundary_preflight.ts";
import { boundaryProgressCases } from "./boundary_progress.ts";
import { boundaryRecordCases } from "./boundary_records.ts";
import { boundaryResumeCases } from "./boundary_resume.ts";
import { boundarySharedCases } from "./boundary_shared.ts";
import {
  type BoundaryContext,
  boundaryContext,
  type ConformanceOptions,
  createSuite,
  type StoreContext,
  storeContext,
  type Suite,
} from "./context.ts";
import { storeBeginCases } from "./store_begin.ts";
import { storeCallCases } from "./store_calls.ts";
import { storeCompleteCases } from "./store_complete.ts";
import { storeConcurrencyCases } from "./store_concurrency.ts";
import { storeFactCases } from "./store_facts.ts";
import { storeIdCases } from "./store_ids.ts";
import { storeListRunsCases } from "./store_list_runs.ts";
import { storeLedgerCases } from "./store_ledger.ts";
import { storeRoundTripCases } from "./store_round_trip.ts";
import { storeRunCases } from "./store_runs.ts";
import { storeTtlCases } from "./store_ttl.ts";

export type { ConformanceOptions, StoreUnderTest, TestRegistrar } from "./context.ts";
export type { StoreCapability } from "./context.ts";

const STORE_CASES: readonly ((suite: Suite<StoreContext>) => void)[] = [
  storeRunCases,
  storeBeginCases,
  storeCallCases,
  storeCompleteCases,
  storeTtlCases,
  storeFactCases,
  storeRoundTripCases,
  storeConcurrencyCases,
  storeIdCases,
  storeLedgerCases,
];

const BOUNDARY_CASES: readonly ((suite: Suite<BoundaryContext>) => void)[] = [
  boundaryPreflightCases,
  boundaryRecordCases,
  boundaryOutcomeCases,
  boundaryLimitCases,
  boundaryProgressCases,
  boundarySharedCases,
  boundaryResumeCases,
];

/**
 * Registers the conformance suite for a store: every rule of the `Store` contract, checked on
 * the store directly (an optional capability the store declares it `lacks` is checked absent
 * instead), and (unless `boundary: false`) the cases that go through a `ToolBoundary`
 * on it, as {@linkcode boundaryConformance} registers them.
 *
 * @param options The store factory, a name, and optionally a test registrar.
 * @returns The names of the registered tests.
 *
 * @example
 * ```ts ignore
 * import { storeConformance } from "@tool-boundary/core/testing";
 * import { MemoryStore } from "@tool-boundary/core/memory";
 *
 * storeConformance({
 *   name: "MemoryStore",
 *   createStore: () => {
 *     let now = Date.now();
 *     return { store: new MemoryStore({ clock: () => now }), clock: () => now, advance: (ms) => { now += ms; } };
 *   },
 * });
 * ```
 */
export function storeConformance(options: ConformanceOptions): string[] {
  const names: string[] = [];
  const suite = createSuite(options, names, storeContext);
  for (const cases of STORE_CASES) cases(suite);
  storeListRunsCases(suite, options.lacks ?? []);
  if (options.boundary !== false) names.push(...boundaryConformance(options));
  return names;
}

/**
 * Registers the cases that go through a `ToolBoundary` on the store: preflight, records,
 * outcomes, byte limits, run progress, and boundaries that share the store.
 *
 * @param options The store factory, a name, and optionally a test registrar.
 * @returns The names of the registered tests.
 *
 * @example
 * ```ts ignore
 * import { boundaryConformance } from "@tool-boundary/core/testing";
 * import { MyStore } from "./my_store.ts";
 *
 * boundaryConformance({ name: "MyStore", createStore: () => ({ store: new MyStore() }) });
 * ```
 */
export function boundaryConformance(options: ConformanceOptions): string[] {
  const names: string[] = [];
  const suite = createSuite(options, names, boundaryContext);
  for (const cases of BOUNDARY_CASES) cases(suite);
  return names;
}
