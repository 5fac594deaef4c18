/**
 * `UpstashRestClient`, the store's own client of Upstash's REST API, against the test endpoint in
 * front of a real redis-server: the request form, replies handed over as Redis gave them, the
 * read-your-writes token, pipelines with an answer per call, errors that carry Redis's text and
 * nothing of the request, and one retry of a request whose fetch threw. The store's conformance
 * suite runs on it too (tests/conformance/upstash_rest_test.ts).
 */
import assert from "node:assert/strict";
import { BoundaryError } from "../../src/core/errors.ts";
import { RedisStoreError, UpstashRestClient, UpstashStore } from "../../src/upstash/mod.ts";
import { freePort } from "../runtime/process.ts";
import { startStoreRun } from "../support/runs.ts";
import { withSharedUpstashFixture } from "../support/upstash_fixture.ts";
import { sha1Hex } from "../support/sha1.ts";

const ECHO = "return ARGV[1]";

/** The error `promise` rejects with. */
async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => assert.fail("resolved"), (error: unknown) => error);
  assert.ok(error instanceof Error, String(error));
  return error;
}

Deno.test("UpstashRestClient sends one JSON command per call and hands the reply over as Redis gave it", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const client = fixture.createRest();
    // A string that a parse of every reply would turn into a number: it stays a string.
    assert.equal(await client.eval(ECHO, [], ["123"]), "123");
    assert.equal(await client.eval(ECHO, [], ['["OK","1"]']), '["OK","1"]');
    assert.equal(await client.eval("return 7", [], []), 7);
    assert.equal(await client.eval("return false", [], []), null);
    assert.deepEqual(await client.eval("return {'a', 2}", [], []), ["a", 2]);
    assert.equal(await client.evalsha(await sha1Hex(ECHO), [], ["x"]), "x");
    assert.equal(await client.exec(["SET", "{rest}:k", "v"]), "OK");
    assert.equal(await client.exec(["GET", "{rest}:k"]), "v");

    const log = fixture.endpoint.log;
    assert.equal(log.length, 8);
    assert.ok(log.every((request) => request.path === "/" && request.commands.length === 1));
    assert.deepEqual(log[5]!.commands[0], ["evalsha", await sha1Hex(ECHO), "0", "x"]);
    assert.deepEqual(log[0]!.commands[0]!.slice(2), ["0", "123"]);
  });
});

Deno.test("UpstashRestClient sends the last answer's upstash-sync-token with the next request", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const client = fixture.createRest();
    await client.exec(["PING"]);
    await client.exec(["PING"]);
    const pipeline = client.pipeline();
    pipeline.eval(ECHO, [], ["a"]);
    await pipeline.exec({ keepErrors: true });
    const tokens = fixture.endpoint.log.map((request) => request.syncToken);
    assert.equal(tokens[0], undefined, "none before the first answer");
    assert.match(tokens[1]!, /^sync-\d+$/);
    assert.match(tokens[2]!, /^sync-\d+$/);
    assert.notEqual(tokens[1], tokens[2], "each answer's own token");
  });
});

Deno.test("UpstashRestClient's pipeline is one request with an answer per call, errors kept apart", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const client = fixture.createRest();
    const pipeline = client.pipeline();
    pipeline.eval(ECHO, ["{p}:a"], ["first"]);
    pipeline.evalsha("0".repeat(40), ["{p}:a"], ["lost"]);
    pipeline.eval("return redis.call('INCR', KEYS[1])", ["{p}:n"], []);
    const answers = await pipeline.exec({ keepErrors: true });
    assert.equal(fixture.endpoint.requests, 1);
    assert.equal(fixture.endpoint.log[0]!.path, "/pipeline");
    assert.equal(answers.length, 3);
    assert.deepEqual(answers[0], { result: "first" });
    assert.match(String(answers[1]!.error), /NOSCRIPT/);
    assert.deepEqual(answers[2], { result: 1 });
  });
});

Deno.test("UpstashRestClient's errors carry Redis's text, never the request or the token", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const secret = "canary-arg-5be1";
    const client = fixture.createRest();
    const failure = await failureOf(client.exec(["HSET", "{e}:k", secret]));
    assert.equal(failure.name, "UpstashError");
    assert.match(failure.message, /wrong number of arguments/);
    assert.ok(!failure.message.includes(secret), failure.message);

    const wrong = new UpstashRestClient({ url: fixture.endpoint.url, token: "not-the-token" });
    const refused = await failureOf(wrong.evalsha("0".repeat(40), [secret], []));
    assert.equal(`${refused.name}: ${refused.message}`, "UpstashError: Unauthorized");

    fixture.endpoint.failNext(1, 503);
    const unavailable = await failureOf(client.exec(["PING"]));
    assert.equal(`${unavailable.name}: ${unavailable.message}`, "UpstashError: Injected failure");

    // NOSCRIPT reaches the store as the error it resends the script on.
    const noScript = await failureOf(client.evalsha("0".repeat(40), [], []));
    assert.match(noScript.message, /^NOSCRIPT/);
  });
});

Deno.test("UpstashStore on UpstashRestClient: scripts loaded on first use, then one EVALSHA per operation, again after a SCRIPT FLUSH", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRest(), batch: false });
    assert.equal(await store.getRun("run_rest_none"), null);
    assert.deepEqual(fixture.endpoint.commands().map((command) => command[0]), [
      "evalsha",
      "eval",
    ]);
    const run = await startStoreRun(store, "run_rest", { calls: 5, ttlMs: 60_000 });
    fixture.endpoint.reset();
    assert.deepEqual(await store.getRun("run_rest"), run);
    assert.deepEqual(fixture.endpoint.commands().map((command) => command[0]), ["evalsha"]);
    await fixture.direct(["SCRIPT", "FLUSH", "SYNC"]);
    fixture.endpoint.reset();
    assert.deepEqual(await store.getRun("run_rest"), run);
    assert.deepEqual(fixture.endpoint.commands().map((command) => command[0]), [
      "evalsha",
      "eval",
    ]);
  });
});

Deno.test("UpstashRestClient retries a request whose fetch threw once by default, never an answer, and not at all with retry: false", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRest() });
    assert.equal(await store.getRun("run_dropped"), null); // its script loaded
    fixture.endpoint.reset();
    fixture.endpoint.dropNext(10);
    const failure = await store.getRun("run_dropped").catch((error) => error);
    assert.ok(failure instanceof BoundaryError && failure.code === "STORE_UNAVAILABLE");
    assert.ok(failure.cause instanceof RedisStoreError);
    assert.equal(failure.cause.name, "TypeError");
    // Two fetches. The runtime may send a request once more itself when the kept-alive
    // connection it reused was closed under it: at most one more.
    const requests = fixture.endpoint.requests;
    assert.ok(requests === 2 || requests === 3, `${requests} requests`);
    // One dropped answer is covered by the retry.
    fixture.endpoint.reset();
    fixture.endpoint.dropNext(1);
    assert.equal(await store.getRun("run_dropped"), null);

    // An HTTP error is an answer: sent once.
    fixture.endpoint.reset();
    fixture.endpoint.failNext(1, 503);
    await assert.rejects(store.getRun("run_dropped"), { code: "STORE_UNAVAILABLE" });
    assert.equal(fixture.endpoint.requests, 1);

    const once = new UpstashStore({ redis: fixture.createRest(false) });
    assert.equal(await once.getRun("run_dropped"), null);
    fixture.endpoint.reset();
    fixture.endpoint.dropNext(10);
    await assert.rejects(once.getRun("run_dropped"), { code: "STORE_UNAVAILABLE" });
    const sent = fixture.endpoint.requests;
    assert.ok(sent === 1 || sent === 2, `${sent} requests`);
  });
});

Deno.test("UpstashRestClient keeps why fetch failed (connection refused), redacted, through the store", async () => {
  const closed = `http://127.0.0.1:${freePort()}`;
  const token = "rest-token-7d1e";
  const client = new UpstashRestClient({
    url: closed,
    token,
    retry: { retries: 1, backoff: () => 1 },
  });
  const failure = await new UpstashStore({ redis: client }).getRun("run_closed").catch((e) => e);
  assert.ok(failure instanceof BoundaryError && failure.code === "STORE_UNAVAILABLE");
  const chain: string[] = [];
  for (let cause = failure.cause; cause !== undefined; cause = (cause as Error).cause) {
    assert.ok(cause instanceof RedisStoreError);
    chain.push(`${cause.name}: ${cause.message}`);
  }
  assert.equal(chain[0], "TypeError: fetch failed");
  assert.ok(chain.some((line) => /Connection refused|ECONNREFUSED/.test(line)), chain.join("\n"));
  const text = chain.join("\n");
  assert.ok(!text.includes(closed) && !text.includes(token) && !text.includes("run_closed"), text);
});

Deno.test("new UpstashRestClient refuses a URL that is not http(s), an empty token and bad retries", () => {
  const ok = { url: "https://example.upstash.io", token: "t" };
  for (const url of ["example.upstash.io", "ftp://example.upstash.io", "", 42]) {
    assert.throws(
      () => new UpstashRestClient({ ...ok, url: url as string }),
      TypeError,
      String(url),
    );
  }
  for (const token of ["", "  ", undefined]) {
    assert.throws(() => new UpstashRestClient({ ...ok, token: token as string }), TypeError);
  }
  for (
    const retry of [{ retries: -1 }, { retries: 11 }, { retries: 1.5 }, { retries: 1, backoff: 5 }]
  ) {
    assert.throws(
      () => new UpstashRestClient({ ...ok, retry: retry as { retries: number } }),
      RangeError,
      JSON.stringify(retry),
    );
  }
  assert.ok(new UpstashRestClient({ ...ok, url: "http://127.0.0.1:8079/", retry: false }));
  const message = (() => {
    try {
      new UpstashRestClient({ url: "nope", token: "secret-token" });
    } catch (error) {
      return (error as Error).message;
    }
  })();
  assert.ok(
    message !== undefined && !message.includes("secret-token") && !message.includes("nope"),
  );
});
