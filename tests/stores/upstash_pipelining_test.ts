/**
 * `@upstash/redis` batches calls made in the same tick into one `/pipeline` request by default
 * (`enableAutoPipelining`). Upstash refuses a request over its max request size (10 MB) as a
 * whole, so every call of an oversized batch fails, also those that would fit alone. Give that
 * client `enableAutoPipelining: false` (the edge entries use `UpstashRestClient`, which has no
 * auto-pipelining at all). The store's own
 * batching (its `batch` option) packs under a byte cap instead. Through the real
 * client, against the test endpoint with Upstash's 10 MB limit, in front of a real redis-server.
 */
import assert from "node:assert/strict";
import { BoundaryError } from "../../src/core/errors.ts";
import type { CompleteOutcome } from "../../src/core/store.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { withSharedUpstashFixture } from "../support/upstash_fixture.ts";

const MIB = 1024 * 1024;
const LIMIT = 10 * MIB; // the endpoint's default, Upstash's

/** A READY outcome whose raw response is `bytes` long. */
function largeOutcome(bytes: number): CompleteOutcome {
  const rawJson = JSON.stringify({ data: "x".repeat(bytes - 11) });
  assert.equal(rawJson.length, bytes);
  return {
    status: "READY",
    evidence: "EVIDENCE_FOUND",
    rawJson,
    agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"index","content":["a"]}',
  };
}

/**
 * Starts a run and begins eight calls one by one; returns a function that sends, at once, their
 * eight completes of 1.3 MiB each (10.4 MiB together, 1.3 MiB alone) and one small begin, and
 * says what each of the nine answered.
 */
async function prepareBurst(store: UpstashStore, runId: string) {
  const now = Date.now();
  const started = await store.startRun({
    runId,
    deadline: now + 600_000,
    budget: { calls: 50, perTool: {} },
    ttlMs: 600_000,
    attemptId: `start-${runId}`,
    now,
  });
  assert.equal(started.ok, true);
  const beginRequest = (toolCallId: string) => ({
    runId,
    toolCallId,
    toolName: "search",
    requestJson: '{"query":"disk"}',
    requestDigest: "test-digest",
    attemptId: `attempt-${toolCallId}`,
    ttlMs: 600_000,
    now: Date.now(),
  });
  const ids = Array.from({ length: 8 }, (_, i) => `call_${i}`);
  for (const id of ids) assert.equal((await store.begin(beginRequest(id))).ok, true);
  const outcome = largeOutcome(Math.round(1.3 * MIB));
  return () =>
    Promise.allSettled([
      ...ids.map((toolCallId) =>
        store.complete({
          runId,
          toolCallId,
          attemptId: `attempt-${toolCallId}`,
          outcome,
          now: Date.now(),
        })
      ),
      store.begin(beginRequest("call_small")),
    ]);
}

/** Runs the startRun, begin and complete scripts once, so each later call is one EVALSHA. */
async function warm(store: UpstashStore): Promise<void> {
  const runId = "run-warm";
  const now = Date.now();
  const budget = { calls: 5, perTool: {} };
  const attemptId = "attempt-warm";
  await store.startRun({ runId, deadline: now + 600_000, budget, ttlMs: 600_000, attemptId, now });
  const request = { runId, toolCallId: "call_warm", toolName: "search", attemptId, now };
  assert.ok(
    (await store.begin({ ...request, requestJson: "{}", requestDigest: "d", ttlMs: 600_000 })).ok,
  );
  assert.ok((await store.complete({ ...request, outcome: largeOutcome(100) })).ok);
}

Deno.test("UpstashStore batch: false with auto-pipelining on (the client's default): one oversized batch, and none of its nine calls succeeds", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), batch: false });
    await warm(store);
    const fire = await prepareBurst(store, "run-batched");
    fixture.endpoint.reset();
    const results = await fire();

    // The nine calls went out as one request, over the limit, refused as a whole: once, no
    // retry, nothing run.
    assert.equal(fixture.endpoint.requests, 1);
    assert.deepEqual(fixture.endpoint.log, []);
    for (const result of results) {
      assert.equal(result.status, "rejected");
      const error = (result as PromiseRejectedResult).reason;
      assert.ok(error instanceof BoundaryError);
      assert.equal(error.code, "STORE_UNAVAILABLE");
      assert.match(
        String((error.cause as Error).message),
        /max request size exceeded\. Limit: 10485760 bytes, Actual: \d+ bytes/,
      );
    }
    const cause = (results[0] as PromiseRejectedResult).reason.cause as Error;
    const actual = Number(/Actual: (\d+)/.exec(cause.message)![1]);
    assert.ok(actual > LIMIT && actual < 1.1 * 8 * 1.3 * MIB, `batch of ${actual} bytes`);
    console.log(`auto-pipelining on: 1 request of ${actual} bytes, 9 of 9 calls failed`);

    // Nothing of it was written.
    for (let i = 0; i < 8; i++) {
      assert.equal((await store.get("run-batched", `call_${i}`))?.status, "PROJECTING");
    }
    assert.equal(await store.get("run-batched", "call_small"), null);
  });
});

for (const client of ["auto-pipelining off", "UpstashRestClient"]) {
  Deno.test(`UpstashStore with ${client}: the same nine calls are nine requests, and all succeed`, async () => {
    await withSharedUpstashFixture(async (fixture) => {
      const redis = client === "UpstashRestClient"
        ? fixture.createRest()
        : fixture.createRedis({ enableAutoPipelining: false });
      const store = new UpstashStore({ redis });
      await warm(store);
      const fire = await prepareBurst(store, "run-separate");
      fixture.endpoint.reset();
      const results = await fire();

      for (const result of results) {
        assert.equal(result.status, "fulfilled");
        assert.equal((result as PromiseFulfilledResult<{ ok: boolean }>).value.ok, true);
      }
      // The store's batching sends each call over its cap (1 MiB) in a request of its own.
      assert.equal(fixture.endpoint.requests, 9);
      assert.deepEqual(
        fixture.endpoint.log.map((entry) => entry.commands.length),
        Array(9).fill(1),
      );
      console.log(`${client}: 9 requests, 9 of 9 calls succeeded`);
      for (let i = 0; i < 8; i++) {
        assert.equal((await store.get("run-separate", `call_${i}`))?.status, "READY");
      }
      assert.equal((await store.get("run-separate", "call_small"))?.status, "PROJECTING");
    });
  });
}

Deno.test("UpstashStore's own batching (its default) keeps the nine calls apart under the client's auto-pipelining too: all succeed", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    await warm(store);
    const fire = await prepareBurst(store, "run-store-batched");
    fixture.endpoint.reset();
    const results = await fire();
    for (const result of results) assert.equal(result.status, "fulfilled");
    // Each over the cap alone, the small begin alone: pipelines of one, which the client's
    // auto-pipelining does not merge.
    assert.deepEqual(fixture.endpoint.log.map((entry) => entry.commands.length), Array(9).fill(1));
    for (let i = 0; i < 8; i++) {
      assert.equal((await store.get("run-store-batched", `call_${i}`))?.status, "READY");
    }
  });
});

Deno.test("no edge entry makes a client of its own: buildEdgeApp makes the store's UpstashRestClient", async () => {
  let entries = 0;
  for await (const file of Deno.readDir(new URL("../../edge/", import.meta.url))) {
    if (!file.isFile || !file.name.endsWith(".ts")) continue;
    const source = await Deno.readTextFile(new URL(`../../edge/${file.name}`, import.meta.url));
    assert.doesNotMatch(source, /@upstash\/redis"|@upstash\/redis\/|new Redis\(/, file.name);
    if (/buildEdgeApp\(/.test(source) && file.name !== "app.ts") entries++;
  }
  assert.ok(entries >= 7, `${entries} entries call buildEdgeApp`);
  const app = await Deno.readTextFile(new URL("../../edge/app.ts", import.meta.url));
  assert.equal(app.match(/new UpstashRestClient\(\{ url, token \}\)/g)?.length, 1);
});

Deno.test("every example builds its @upstash/redis client with auto-pipelining off", async () => {
  const examples = ["examples/cloudflare/src/worker.ts", "examples/deno-deploy/main.ts"];
  for (const example of examples) {
    const source = await Deno.readTextFile(new URL(`../../${example}`, import.meta.url));
    const clients = source.match(/new Redis\(\{[^}]*\}\)/g) ?? [];
    assert.equal(clients.length, 1, `${example}: one client`);
    assert.match(clients[0]!, /enableAutoPipelining: false/, example);
  }
});
