/**
 * The app on the Upstash store, through a real redis-server behind the Upstash-compatible REST
 * endpoint of tests/support: once in process, once as `deno serve edge/deno.ts` configured by
 * the UPSTASH_* variables.
 */
import assert from "node:assert/strict";
import { buildEdgeApp } from "../../edge/app.ts";
import { AGENT_TOKEN, HARNESS_TOKEN, over, wholeRun } from "../runtime/flow.ts";
import { serveDeno } from "../runtime/process.ts";
import { startUpstashFixture } from "../support/upstash_fixture.ts";

Deno.test("the app runs a whole run on UpstashStore, in process and under deno serve", async () => {
  const fixture = await startUpstashFixture();
  try {
    const { app, store } = buildEdgeApp(
      {
        AGENT_TOKEN,
        HARNESS_TOKEN,
        UPSTASH_REDIS_REST_URL: fixture.endpoint.url,
        UPSTASH_REDIS_REST_TOKEN: fixture.endpoint.token,
        UPSTASH_PREFIX: "http-test",
      },
    );
    assert.equal(store, "upstash");
    const { runId, steps } = await wholeRun(async (path, init) => await app.request(path, init));
    console.log(`upstash in process: ${steps.join("; ")}`);
    // The records are in Redis, under the prefix and the run's hash tag.
    const keys = await fixture.direct(["KEYS", `http-test:{${runId}}:*`]) as string[];
    assert.ok(keys.includes(`http-test:{${runId}}:call:call_1`), keys.join(", "));
    assert.ok(!keys.some((key) => key.endsWith(":call:call_3")), "refused calls store nothing");

    const [child, base] = await serveDeno("edge/deno.ts", {
      AGENT_TOKEN,
      HARNESS_TOKEN,
      UPSTASH_REDIS_REST_URL: fixture.endpoint.url,
      UPSTASH_REDIS_REST_TOKEN: fixture.endpoint.token,
      UPSTASH_PREFIX: "http-serve",
    });
    try {
      assert.match(child.output(), /tool-boundary: upstash store/);
      const served = await wholeRun(over(base));
      console.log(`upstash under deno serve: ${served.steps.join("; ")}`);
      const servedKeys = await fixture.direct(["KEYS", `http-serve:{${served.runId}}:*`]);
      assert.ok((servedKeys as string[]).length >= 3);
    } finally {
      await child.stop();
    }
  } finally {
    await fixture.stop();
  }
});
