/**
 * The store conformance suite against UpstashStore with its defaults, through the store's own
 * `UpstashRestClient` (what the edge entries use) instead of `@upstash/redis`, over HTTP, against
 * a real redis-server.
 */
import { UpstashStore } from "../../src/upstash/mod.ts";
import { storeConformance } from "../../src/testing/mod.ts";
import { startSharedUpstashFixture } from "../support/upstash_fixture.ts";

await storeConformance({
  name: "UpstashStore on UpstashRestClient",
  createStore: async () => {
    const fixture = await startSharedUpstashFixture();
    return {
      store: new UpstashStore({ redis: fixture.createRest() }),
      close: () => fixture.stop(),
    };
  },
});
