/**
 * Why a store request failed, kept and redacted: the cause chain of a transport failure through the
 * real Upstash REST endpoint fixture (pointed at a closed port, or dropping its answers), and the
 * retry policy the edge entries give their client.
 */
import assert from "node:assert/strict";
import { BoundaryError } from "../../src/core/errors.ts";
import { RedisStoreError, UpstashStore } from "../../src/upstash/mod.ts";

/** Auto-pipelining off and one retry 100 ms later, as docs/upstash.md advises for this client. */
const CLIENT_OPTIONS = {
  enableAutoPipelining: false,
  retry: { retries: 1, backoff: () => 100 },
};
import { freePort } from "../runtime/process.ts";
import { withSharedUpstashFixture } from "../support/upstash_fixture.ts";

/** The causes of a store failure, top first, as `name: message`. */
function chainOf(error: unknown): string[] {
  assert.ok(error instanceof BoundaryError, String(error));
  assert.equal(error.code, "STORE_UNAVAILABLE");
  const chain: string[] = [];
  for (let cause = error.cause; cause !== undefined; cause = (cause as Error).cause) {
    assert.ok(cause instanceof RedisStoreError, `every cause is redacted: ${cause}`);
    chain.push(`${cause.name}: ${cause.message}`);
  }
  return chain;
}

Deno.test("UpstashStore keeps why fetch failed (connection refused) in the cause chain, redacted", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const closed = `http://127.0.0.1:${freePort()}`;
    const redis = fixture.createRedis({ ...CLIENT_OPTIONS, url: closed });
    const failure = await new UpstashStore({ redis }).getRun("run_closed").then(
      () => assert.fail("a closed port answered"),
      (error: unknown) => error,
    );
    const chain = chainOf(failure);
    assert.equal(chain[0], "TypeError: fetch failed");
    assert.equal(chain.length, 2, chain.join(" <- "));
    assert.match(chain[1]!, /Connection refused|ECONNREFUSED/);
    // The address, the token and the request stay out of every message.
    const text = chain.join("\n");
    assert.ok(!text.includes(closed), text);
    assert.ok(!text.includes(fixture.endpoint.token), text);
    assert.ok(!/command was|run_closed/i.test(text), text);
  });
});

Deno.test("UpstashStore drops the client's 'command was' text at every level of the cause chain", () => {
  const secret = "canary-key-9d2f";
  const thrown = new Error(`ERR something, command was: [["evalsha","abc","1","${secret}"]]`, {
    cause: new TypeError(`inner, command was: ["${secret}"] at https://x.upstash.io/?k=${secret}`),
  });
  // Through the store's own path: a client whose evalsha throws it.
  const redis = {
    evalsha: () => Promise.reject(thrown),
    eval: () => Promise.reject(thrown),
  };
  return new UpstashStore({ redis: redis as never, batch: false }).getRun("run_x").then(
    () => assert.fail("resolved"),
    (error: unknown) => {
      const chain = chainOf(error);
      assert.deepEqual(chain, ["Error: ERR something", "TypeError: inner"]);
      assert.ok(!chain.join(" ").includes(secret));
    },
  );
});

Deno.test("@upstash/redis as docs/upstash.md sets it up retries a request whose fetch threw once, not five times", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(CLIENT_OPTIONS) });
    // Scripts loaded first, so that each read below is one EVALSHA.
    assert.equal(await store.getRun("run_dropped"), null);
    fixture.endpoint.reset();
    fixture.endpoint.dropNext(10);
    const failure = await store.getRun("run_dropped").then(
      () => assert.fail("a dropped answer was read"),
      (error: unknown) => error,
    );
    assert.equal(chainOf(failure)[0], "TypeError: fetch failed");
    // Two fetches (the client's default makes six). The runtime may send a request once more
    // itself when the kept-alive connection it reused was closed under it: at most one more.
    const requests = fixture.endpoint.requests;
    assert.ok(requests === 2 || requests === 3, `${requests} requests`);
    assert.ok(fixture.endpoint.log.every((request) => request.commands[0]?.[0] === "evalsha"));
    // One dropped answer is covered by the retry.
    fixture.endpoint.reset();
    fixture.endpoint.dropNext(1);
    assert.equal(await store.getRun("run_dropped"), null);
  });
});
