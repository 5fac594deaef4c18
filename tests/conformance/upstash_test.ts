/**
 * The shared store conformance suite against UpstashStore with its defaults, through the real
 * `@upstash/redis` client, over HTTP, against a real redis-server (the module's one, emptied for
 * each test as a fresh one would be: see `startSharedUpstashFixture`). The same
 * suite runs with `batch: false` (upstash_unbatched_test.ts) and `keyLocking: true`
 * (upstash_key_locking_test.ts), each in its own file so that a parallel run spreads them.
 */
import { UpstashStore } from "../../src/upstash/mod.ts";
import { storeConformance } from "../../src/testing/mod.ts";
import { startSharedUpstashFixture } from "../support/upstash_fixture.ts";

await storeConformance({
  name: "UpstashStore",
  createStore: async () => {
    const fixture = await startSharedUpstashFixture();
    return {
      store: new UpstashStore({ redis: fixture.createRedis() }),
      close: () => fixture.stop(),
    };
  },
});
