/**
 * The store conformance suite against UpstashStore with `keyLocking: true`: every script flagged
 * `allow-key-locking`, read-only ones `no-writes,allow-key-locking`; the test endpoint drops
 * `allow-key-locking` before redis-server sees it, as Upstash accepts it.
 */
import assert from "node:assert/strict";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { storeConformance } from "../../src/testing/mod.ts";
import { startSharedUpstashFixture } from "../support/upstash_fixture.ts";

const SHEBANG = /^#!lua flags=(no-writes,)?allow-key-locking\n/;

await storeConformance({
  name: "UpstashStore keyLocking",
  createStore: async () => {
    const fixture = await startSharedUpstashFixture();
    return {
      store: new UpstashStore({ redis: fixture.createRedis(), keyLocking: true }),
      close: async () => {
        try {
          // Every script the client sent in full carried the flag.
          for (const command of fixture.endpoint.commands()) {
            if (command[0]?.toUpperCase() !== "EVAL") continue;
            assert.match(command[1] ?? "", SHEBANG, "an EVAL without the key-locking line");
          }
        } finally {
          await fixture.stop();
        }
      },
    };
  },
});
