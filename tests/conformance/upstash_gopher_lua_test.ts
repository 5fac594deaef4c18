/**
 * The store conformance suite against UpstashStore with its scripts run on gopher-lua, the Go
 * Lua VM that Upstash runs scripts on, instead of redis-server's own Lua 5.1: the REST endpoint
 * passes every command to `tests/support/gopher_lua/main.go`, which runs the scripts and sends
 * their `redis.call`s on to the module's redis-server (emptied for each test, its scripts too).
 */
import { UpstashStore } from "../../src/upstash/mod.ts";
import { storeConformance } from "../../src/testing/mod.ts";
import { startSharedUpstashFixture } from "../support/upstash_fixture.ts";

await storeConformance({
  name: "UpstashStore (gopher-lua)",
  createStore: async () => {
    const fixture = await startSharedUpstashFixture({ engine: "gopher-lua" });
    return {
      store: new UpstashStore({ redis: fixture.createRedis() }),
      close: () => fixture.stop(),
    };
  },
});
