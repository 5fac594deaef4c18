/**
 * The shared store conformance suite against UpstashStore, through the real `@upstash/redis`
 * client, over HTTP, against a real redis-server (a fresh one per test).
 */
import { UpstashStore } from "../src/stores/upstash/mod.ts";
import { storeConformance } from "../src/testing/mod.ts";
import { startUpstashFixture } from "./support/upstash_fixture.ts";

storeConformance({
  name: "UpstashStore",
  createStore: async () => {
    const fixture = await startUpstashFixture();
    return {
      store: new UpstashStore({ redis: fixture.createRedis() }),
      close: () => fixture.stop(),
    };
  },
});
