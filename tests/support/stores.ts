/**
 * The two stores the boundary tests run on, each opened fresh per test: MemoryStore, and
 * UpstashStore through the real client and the REST endpoint in front of the test module's
 * redis-server, emptied for it (see `startSharedUpstashFixture`).
 *
 * @module
 */
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { startSharedUpstashFixture } from "./upstash_fixture.ts";

/** A store under test, and how to stop what it needs. */
export interface OpenStore {
  /** The store. */
  store: Store;
  /** Stops its endpoint and releases its redis-server (a no-op for MemoryStore). */
  close(): Promise<void>;
}

/** Both stores, by name. */
export const STORES: readonly { name: string; open(): Promise<OpenStore> }[] = [
  {
    name: "MemoryStore",
    open: () => Promise.resolve({ store: new MemoryStore(), close: () => Promise.resolve() }),
  },
  {
    name: "UpstashStore",
    open: async () => {
      const fixture = await startSharedUpstashFixture();
      return {
        store: new UpstashStore({ redis: fixture.createRedis() }),
        close: () => fixture.stop(),
      };
    },
  },
];

let sequence = 0;

/** An ID no other test of the process uses, for runs and calls on a shared store. */
export const uniqueId = (prefix: string): string =>
  `${prefix}_${Date.now().toString(36)}_${sequence++}`;
