/**
 * The stores the boundary tests run on, each opened fresh per test: MemoryStore, and
 * UpstashStore through the real client and the REST endpoint in front of the test module's
 * redis-server, emptied for it (see `startSharedUpstashFixture`), with its scripts run by
 * redis-server's own Lua and, as on Upstash, by gopher-lua (`tests/support/gopher_lua.ts`).
 *
 * @module
 */
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { type ScriptEngine, startSharedUpstashFixture } from "./upstash_fixture.ts";

/** A store under test, and how to stop what it needs. */
export interface OpenStore {
  /** The store. */
  store: Store;
  /** Stops its endpoint and releases its redis-server (a no-op for MemoryStore). */
  close(): Promise<void>;
}

/** UpstashStore on the shared fixture, its scripts run by `engine`. */
const upstash = (engine: ScriptEngine) => async (): Promise<OpenStore> => {
  const fixture = await startSharedUpstashFixture({ engine });
  return {
    store: new UpstashStore({ redis: fixture.createRedis() }),
    close: () => fixture.stop(),
  };
};

/** Every store, by name. */
export const STORES: readonly { name: string; open(): Promise<OpenStore> }[] = [
  {
    name: "MemoryStore",
    open: () => Promise.resolve({ store: new MemoryStore(), close: () => Promise.resolve() }),
  },
  { name: "UpstashStore", open: upstash("redis") },
  { name: "UpstashStore (gopher-lua)", open: upstash("gopher-lua") },
];

let sequence = 0;

/** An ID no other test of the process uses, for runs and calls on a shared store. */
export const uniqueId = (prefix: string): string =>
  `${prefix}_${Date.now().toString(36)}_${sequence++}`;

/**
 * A store seen through the seven methods of the required core and nothing else: no capability
 * (`CallIndex`, `RunIndex`, `RunSeal`), as a third-party store of the core alone would be.
 */
export function coreOnly(store: Store = new MemoryStore()): Store {
  return {
    startRun: (request) => store.startRun(request),
    getRun: (runId) => store.getRun(runId),
    begin: (request) => store.begin(request),
    complete: (request) => store.complete(request),
    get: (runId, toolCallId) => store.get(runId, toolCallId),
    endRun: (request) => store.endRun(request),
    readFacts: (request) => store.readFacts(request),
  };
}
