/**
 * The store conformance suite against UpstashStore with `batch: false`: every begin and complete
 * its own request (the default packs those issued together into one pipeline request).
 */
import { UpstashStore } from "../../src/upstash/mod.ts";
import { storeConformance } from "../../src/testing/mod.ts";
import { startSharedUpstashFixture } from "../support/upstash_fixture.ts";

await storeConformance({
  name: "UpstashStore batch: false",
  createStore: async () => {
    const fixture = await startSharedUpstashFixture();
    return {
      store: new UpstashStore({ redis: fixture.createRedis(), batch: false }),
      close: () => fixture.stop(),
    };
  },
});
