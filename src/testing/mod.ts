/**
 * Test helpers for stores and harnesses: the store conformance suite that every `Store` must
 * pass (the required core, then the cases of each capability the store offers), and fake tools
 * and projectors that cover every outcome of a call.
 *
 * @example
 * ```ts ignore
 * // my_store_test.ts: run the suite against your own store with `deno test`.
 * import { storeConformance } from "@tool-boundary/core/testing";
 * import { MyStore } from "./my_store.ts";
 *
 * await storeConformance({ name: "MyStore", createStore: () => ({ store: new MyStore() }) });
 * ```
 *
 * @module
 */
export {
  boundaryConformance,
  type ConformanceOptions,
  storeConformance,
  type StoreUnderTest,
  type TestRegistrar,
} from "./conformance/mod.ts";
export {
  CANARY_SECRET,
  createFakeToolkit,
  type FakeCounts,
  fakeProjectors,
  type FakeSearchRaw,
  type FakeToolkit,
} from "./fakes.ts";
