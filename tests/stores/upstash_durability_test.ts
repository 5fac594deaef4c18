/**
 * `durability`: a begin is confirmed by replicas (`WAIT`) before the tool runs, so a failover
 * cannot forget a begun call and run it again. Replication is asynchronous on Upstash as on
 * Redis; here a real primary and a real replica (`--replicaof`), the test endpoint in front, and
 * a deterministic failover: the replica is cut off from the primary first (`REPLICAOF` to a port
 * where nothing listens, so nothing written afterwards can reach it), the begin runs on the
 * primary, then the primary dies, the replica is promoted (`REPLICAOF NO ONE`) and the endpoint
 * is pointed at it.
 */
import assert from "node:assert/strict";
import { Redis } from "@upstash/redis";
import { ToolBoundary } from "../../src/core/boundary.ts";
import { BoundaryError } from "../../src/core/errors.ts";
import {
  RedisStoreError,
  type UpstashRedisClient,
  UpstashRestClient,
  UpstashStore,
} from "../../src/upstash/mod.ts";
import type { UpstashStoreOptions } from "../../src/upstash/mod.ts";
import { createFakeToolkit } from "../../src/testing/mod.ts";
import { type RedisServer, startRedisServer } from "../support/redis_server.ts";
import { RespError, RespStatus } from "../support/resp.ts";
import { startUpstashEndpoint, type UpstashEndpoint } from "../support/upstash_endpoint.ts";

const WAIT_MS = 500;

interface Pair {
  primary: RedisServer;
  replica: RedisServer;
  endpoint: UpstashEndpoint;
  redis: UpstashRedisClient;
}

/** A primary, its replica and the endpoint; the store's client `@upstash/redis` or `rest`. */
async function withPair(
  fn: (pair: Pair) => Promise<void>,
  client: "@upstash/redis" | "rest" = "@upstash/redis",
): Promise<void> {
  const primary = await startRedisServer();
  const replica = await startRedisServer({ replicaOf: primary.port });
  const endpoint = startUpstashEndpoint({ connectRedis: () => primary.connect() });
  try {
    await until(replica, "replication", /master_link_status:up/);
    const redis = client === "rest"
      ? new UpstashRestClient({ url: endpoint.url, token: endpoint.token })
      : new Redis({ url: endpoint.url, token: endpoint.token, enableTelemetry: false });
    await fn({ primary, replica, endpoint, redis });
  } finally {
    await endpoint.stop();
    await replica.stop();
    await primary.stop();
  }
}

/** Runs one command on a server, on a connection of its own. */
async function run(server: RedisServer, args: string[]): Promise<unknown> {
  const conn = await server.connect();
  try {
    const reply = await conn.command(args);
    if (reply instanceof RespError) throw new Error(reply.text);
    if (reply instanceof RespStatus) return reply.text;
    return reply instanceof Uint8Array ? new TextDecoder().decode(reply) : reply;
  } finally {
    await conn.close();
  }
}

/** Polls `INFO <section>` until it matches (replication state changes asynchronously). */
async function until(server: RedisServer, section: string, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (pattern.test(String(await run(server, ["INFO", section])))) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`INFO ${section} never matched ${pattern}`);
}

/** Polls until the replica holds `key`: what was written before the cut has arrived. */
async function replicated(replica: RedisServer, key: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await run(replica, ["EXISTS", key]) === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${key} never reached the replica`);
}

/** Cuts the replica off: it follows a port where nothing listens, and keeps its data. */
async function cutLink({ primary, replica }: Pair): Promise<void> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = listener.addr.port;
  listener.close();
  assert.equal(await run(replica, ["REPLICAOF", "127.0.0.1", String(deadPort)]), "OK");
  await until(primary, "replication", /connected_slaves:0/);
}

/** The primary dies; the replica is promoted and the endpoint now talks to it. */
async function failOver({ primary, replica, endpoint }: Pair): Promise<void> {
  await primary.kill();
  assert.equal(await run(replica, ["REPLICAOF", "NO", "ONE"]), "OK");
  await until(replica, "replication", /role:master/);
  await endpoint.connectTo(() => replica.connect());
}

/** A boundary over the pair with one counting tool; the run is on the replica too. */
async function start(pair: Pair, options: Partial<UpstashStoreOptions> = {}) {
  const store = new UpstashStore({ redis: pair.redis, ...options });
  const kit = createFakeToolkit();
  const boundary = new ToolBoundary({ store, tools: kit.tools });
  const run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: 10 } });
  await replicated(pair.replica, store.keys(run.runId).run);
  const call = {
    toolCallId: "call_charge",
    runId: run.runId,
    toolName: kit.names.success,
    input: { query: "disk" },
  };
  const runs = () => kit.counts.execute[kit.names.success] ?? 0;
  return { store, boundary, run, call, runs };
}

Deno.test("UpstashStore without durability: a failover forgets a begun call, and the same tool call runs twice", async () => {
  await withPair(async (pair) => {
    const { boundary, run, call, runs } = await start(pair);
    await cutLink(pair);
    const first = await boundary.invoke(run, call);
    assert.equal(first.status, "READY", JSON.stringify(first));
    assert.equal(runs(), 1);
    // On the primary, the call is taken: a retry is refused.
    const again = await boundary.invoke(run, call);
    assert.equal(again.status === "ERROR" && again.code, "DUPLICATE_TOOL_CALL");
    assert.equal(runs(), 1);

    await failOver(pair);
    const afterFailover = await boundary.invoke(run, call);
    assert.equal(afterFailover.status, "READY", "the promoted replica never saw the begin");
    assert.equal(runs(), 2, "the tool ran twice for one tool call ID");
  });
});

Deno.test("UpstashStore with durability: a begin no replica confirmed fails closed, so the tool never runs twice across the failover", async () => {
  await withPair(async (pair) => {
    const { store, boundary, run, call, runs } = await start(pair, {
      durability: { replicas: 1, timeoutMs: WAIT_MS },
    });
    await cutLink(pair);
    pair.endpoint.reset();
    const first = await boundary.invoke(run, call);
    assert.equal(first.status === "ERROR" && first.code, "STORE_UNAVAILABLE");
    assert.equal(runs(), 0, "the tool did not run");
    // One EVALSHA (or EVALSHA, EVAL on a fresh script cache), then WAIT.
    const sent = pair.endpoint.commands();
    assert.deepEqual(sent.at(-1), ["WAIT", "1", String(WAIT_MS)]);
    assert.equal(sent.filter((c) => c[0] === "WAIT").length, 1);
    // The cause says why, and nothing of the request.
    const direct = store.begin({
      runId: run.runId,
      toolCallId: "call_direct",
      toolName: "search",
      requestJson: '{"query":"disk"}',
      requestDigest: "test-digest",
      attemptId: "attempt-direct",
      ttlMs: 60_000,
      now: Date.now(),
    });
    await assert.rejects(direct, (error: unknown) => {
      assert.ok(error instanceof BoundaryError);
      assert.equal(error.code, "STORE_UNAVAILABLE");
      assert.ok(error.cause instanceof RedisStoreError);
      assert.equal(error.cause.name, "DurabilityError");
      assert.equal(
        error.cause.message,
        `0 of 1 replicas confirmed the begin within ${WAIT_MS} ms`,
      );
      return true;
    });

    await failOver(pair);
    // The promoted replica never saw the begin, and has no replica of its own yet: the retry
    // fails closed too.
    const afterFailover = await boundary.invoke(run, call);
    assert.equal(afterFailover.status === "ERROR" && afterFailover.code, "STORE_UNAVAILABLE");
    assert.equal(runs(), 0);
    // Once the new primary has a replica, calls run again. The refused begin above created the
    // record before its WAIT failed, so that tool call ID stays taken: refused, never run twice.
    const spare = await startRedisServer({ replicaOf: pair.replica.port });
    try {
      await until(spare, "replication", /master_link_status:up/);
      // The new primary must also count it as an online replica, or WAIT may not hear from it.
      await until(pair.replica, "replication", /slave0:.*state=online/);
      const retried = await boundary.invoke(run, call);
      assert.equal(retried.status === "ERROR" && retried.code, "DUPLICATE_TOOL_CALL");
      assert.equal(runs(), 0);
      // A replica that has just come online may take a moment to acknowledge: until it does, a
      // begin still fails closed and its tool does not run.
      let fresh = await boundary.invoke(run, { ...call, toolCallId: "call_other_0" });
      for (let i = 1; i < 10 && fresh.status === "ERROR"; i++) {
        assert.equal(fresh.code, "STORE_UNAVAILABLE", JSON.stringify(fresh));
        assert.equal(runs(), 0);
        fresh = await boundary.invoke(run, { ...call, toolCallId: `call_other_${i}` });
      }
      assert.equal(fresh.status, "READY", JSON.stringify(fresh));
      assert.equal(runs(), 1);
    } finally {
      await spare.stop();
    }
  });
});

for (const client of ["@upstash/redis", "rest"] as const) {
  Deno.test(`UpstashStore with durability (${client}): a begin the replica confirmed survives the failover; a retry is refused`, async () => {
    await withPair(async (pair) => {
      const { boundary, run, call, runs } = await start(pair, {
        durability: { replicas: 1, timeoutMs: WAIT_MS },
      });
      pair.endpoint.reset();
      const first = await boundary.invoke(run, call);
      assert.equal(first.status, "READY", JSON.stringify(first));
      assert.equal(runs(), 1);
      assert.equal(pair.endpoint.commands().filter((c) => c[0] === "WAIT").length, 1);

      await cutLink(pair);
      await failOver(pair);
      const afterFailover = await boundary.invoke(run, call);
      assert.equal(afterFailover.status === "ERROR" && afterFailover.code, "DUPLICATE_TOOL_CALL");
      assert.equal(runs(), 1, "the tool ran once");
    }, client);
  });
}

Deno.test("UpstashStore durability: WAIT only after a begin that answered OK; refusals and other operations send none", async () => {
  await withPair(async (pair) => {
    const { store, boundary, run, call } = await start(pair, {
      durability: { replicas: 1, timeoutMs: WAIT_MS },
    });
    const waits = () => pair.endpoint.commands().filter((c) => c[0] === "WAIT").length;
    pair.endpoint.reset();
    assert.equal((await boundary.invoke(run, call)).status, "READY");
    assert.equal(waits(), 1, "begin");
    assert.equal((await boundary.invoke(run, call)).status, "ERROR");
    assert.equal(waits(), 1, "a refused begin (DUPLICATE_TOOL_CALL) wrote nothing");
    await boundary.inspect(run.runId, call.toolCallId);
    await store.getRun(run.runId);
    await boundary.endRun(run);
    assert.equal(waits(), 1, "complete, reads and endRun");

    // A resent begin of the same attempt (its first answer lost) waits again: the record it
    // returns must be on the replicas too before the tool runs.
    const other = await boundary.startRun({ ttlMs: 600_000, budget: { calls: 10 } });
    const request = {
      runId: other.runId,
      toolCallId: "call_resent",
      toolName: "search",
      requestJson: '{"query":"disk"}',
      requestDigest: "test-digest",
      attemptId: "attempt-resent",
      ttlMs: 60_000,
      now: Date.now(),
    };
    assert.ok((await store.begin(request)).ok);
    assert.ok((await store.begin(request)).ok);
    assert.equal(waits(), 3);
  });
});

Deno.test("UpstashStore durability: options are checked", () => {
  const redis = new Redis({ url: "http://127.0.0.1:1", token: "t", enableTelemetry: false });
  const bad: unknown[] = [
    null,
    {},
    { replicas: 0, timeoutMs: 100 },
    { replicas: 1.5, timeoutMs: 100 },
    { replicas: "1", timeoutMs: 100 },
    { replicas: 1, timeoutMs: 0 },
    { replicas: 1, timeoutMs: -1 },
    { replicas: 1, timeoutMs: 2.5 },
    { replicas: 1, timeoutMs: Infinity },
    { replicas: 1, timeoutMs: 10_000 }, // not below the default timeoutMs
    { replicas: Number.NaN, timeoutMs: 100 },
  ];
  for (const durability of bad) {
    assert.throws(
      () => new UpstashStore({ redis, durability: durability as never }),
      RangeError,
      JSON.stringify(durability),
    );
  }
  assert.throws(
    () => new UpstashStore({ redis, timeoutMs: 500, durability: { replicas: 1, timeoutMs: 500 } }),
    RangeError,
  );
  assert.ok(
    new UpstashStore({ redis, timeoutMs: 501, durability: { replicas: 1, timeoutMs: 500 } }),
  );
  assert.ok(new UpstashStore({ redis, durability: { replicas: 3, timeoutMs: 9_999 } }));
  // A client without exec cannot send WAIT.
  const scriptsOnly = { evalsha: redis.evalsha, eval: redis.eval };
  assert.throws(
    () => new UpstashStore({ redis: scriptsOnly, durability: { replicas: 1, timeoutMs: 100 } }),
    TypeError,
  );
  assert.ok(new UpstashStore({ redis: scriptsOnly }));
});
