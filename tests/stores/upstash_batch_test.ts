/**
 * UpstashStore's `batch` transport: the begins (and the completes) issued together go as one
 * request to the pipeline endpoint, each its own script with its own answer, under a byte cap.
 * Requests are counted at the endpoint; always the real `@upstash/redis` client over HTTP, in
 * front of a real redis-server. (The conformance suite runs with batching on and with it off.)
 */
import assert from "node:assert/strict";
import { BoundaryError } from "../../src/core/errors.ts";
import type { BeginRequest, CompleteOutcome } from "../../src/core/store.ts";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/stores/memory.ts";
import { UpstashStore } from "../../src/stores/upstash/mod.ts";
import { startStoreRun } from "../support/runs.ts";
import { type UpstashFixture, withSharedUpstashFixture } from "../support/upstash_fixture.ts";

let seq = 0;
const id = (prefix: string) => `${prefix}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;

/** A new run of `calls` calls on the store: its ID. */
const startRun = async (store: UpstashStore | MemoryStore, calls = 100): Promise<string> =>
  (await startStoreRun(store, id("run"), { calls, attemptId: id("start") })).runId;

function beginRequest(runId: string, toolCallId: string): BeginRequest {
  return {
    runId,
    toolCallId,
    toolName: "search",
    requestJson: '{"query":"disk"}',
    requestDigest: "test-digest",
    attemptId: `attempt-${toolCallId}`,
    ttlMs: 600_000,
    now: Date.now(),
  };
}

function ready(rawBytes = 40): CompleteOutcome {
  const rawJson = JSON.stringify({ data: "x".repeat(Math.max(0, rawBytes - 11)) });
  return {
    status: "READY",
    evidence: "EVIDENCE_FOUND",
    rawJson,
    agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"index","content":["a"]}',
  };
}

/** Runs the begin and complete scripts once, so later calls are EVALSHAs Redis knows. */
async function warm(store: UpstashStore): Promise<void> {
  const runId = await startRun(store);
  assert.ok((await store.begin(beginRequest(runId, "call_warm"))).ok);
  const done = await store.complete({
    runId,
    toolCallId: "call_warm",
    attemptId: "attempt-call_warm",
    outcome: ready(),
    now: Date.now(),
  });
  assert.ok(done.ok);
}

const paths = (fixture: UpstashFixture) =>
  fixture.endpoint.log.map((entry) => `${entry.path} x${entry.commands.length}`);

const sumTool = defineTool({
  name: "sum",
  readOnly: true,
  execute: (input: { n: number }) => ({ total: input.n * 2 }),
  project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "sum", content: String(raw.total) }),
});

for (const n of [4, 16]) {
  Deno.test(`${n} parallel invokes in one step are 2 REST requests: one pipeline of begins, one of completes`, async () => {
    await withSharedUpstashFixture(async (fixture) => {
      const store = new UpstashStore({ redis: fixture.createRedis() });
      const boundary = new ToolBoundary({ store, tools: [sumTool] });
      await warm(store);
      const run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: 100 } });
      fixture.endpoint.reset();
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          boundary.invoke(run, {
            toolCallId: `call_${i}`,
            runId: run.runId,
            toolName: "sum",
            input: { n: i },
          })),
      );
      assert.deepEqual(
        results.map((r) => (r.status === "READY" ? r.content : r.code)),
        Array.from({ length: n }, (_, i) => String(i * 2)),
      );
      assert.equal(fixture.endpoint.requests, 2);
      assert.deepEqual(paths(fixture), [`/pipeline x${n}`, `/pipeline x${n}`]);
      const names = fixture.endpoint.commands().map((c) => c[0]!.toUpperCase());
      assert.deepEqual(names, Array(2 * n).fill("EVALSHA"));
      for (let i = 0; i < n; i++) {
        assert.equal((await store.get(run.runId, `call_${i}`))?.status, "READY");
      }
    });
  });
}

Deno.test("batch: false sends each of N parallel invokes' begins and completes alone: 2N requests", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({
      redis: fixture.createRedis({ enableAutoPipelining: false }),
      batch: false,
    });
    const boundary = new ToolBoundary({ store, tools: [sumTool] });
    await warm(store);
    const run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: 100 } });
    fixture.endpoint.reset();
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        boundary.invoke(run, {
          toolCallId: `call_${i}`,
          runId: run.runId,
          toolName: "sum",
          input: { n: i },
        })),
    );
    assert.ok(results.every((r) => r.status === "READY"));
    assert.equal(fixture.endpoint.requests, 8);
    assert.deepEqual(paths(fixture), Array(8).fill("/ x1"));
  });
});

Deno.test("a single call goes as the single command it always was, not as a pipeline of one", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    // The client's own auto-pipelining (its default) would send even a single command to the
    // pipeline endpoint.
    const store = new UpstashStore({ redis: fixture.createRedis({ enableAutoPipelining: false }) });
    await warm(store);
    const runId = await startRun(store);
    fixture.endpoint.reset();
    assert.ok((await store.begin(beginRequest(runId, "call_1"))).ok);
    assert.deepEqual(paths(fixture), ["/ x1"]);
  });
});

Deno.test("scripts Redis lost (NOSCRIPT) in a batch are sent again with their source, together", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    await warm(store);
    const runId = await startRun(store);
    await fixture.direct(["SCRIPT", "FLUSH"]);
    fixture.endpoint.reset();
    const begun = await Promise.all(
      [0, 1, 2].map((i) => store.begin(beginRequest(runId, `call_${i}`))),
    );
    assert.ok(begun.every((b) => b.ok));
    assert.deepEqual(paths(fixture), ["/pipeline x3", "/pipeline x3"]);
    const names = fixture.endpoint.commands().map((c) => c[0]!.toUpperCase());
    assert.deepEqual(names, ["EVALSHA", "EVALSHA", "EVALSHA", "EVAL", "EVAL", "EVAL"]);
    const run = await store.getRun(runId);
    assert.equal(run?.used.calls, 3);
  });
});

Deno.test("after NOSCRIPT, the EVALs sent again with their source keep every request under batch.maxBytes", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const ids = ["call_0", "call_1", "call_2", "call_3", "call_4", "call_5"];
    /** Six begins at once after Redis lost the scripts: the requests they took. */
    const beginsAfterFlush = async (store: UpstashStore) => {
      await warm(store);
      const runId = await startRun(store);
      await fixture.direct(["SCRIPT", "FLUSH"]);
      fixture.endpoint.reset();
      const begun = await Promise.all(ids.map((id) => store.begin(beginRequest(runId, id))));
      assert.ok(begun.every((b) => b.ok));
      const log = fixture.endpoint.log.filter((entry) => entry.path === "/pipeline");
      assert.equal((await store.getRun(runId))?.used.calls, ids.length);
      return log;
    };
    const evals = <T extends { commands: string[][] }>(log: T[]) =>
      log.filter((entry) => entry.commands[0]![0]!.toUpperCase() === "EVAL");
    // Under the default cap the six EVALs share one request: each one's bytes, with its comma.
    const measured = evals(
      await beginsAfterFlush(new UpstashStore({ redis: fixture.createRedis() })),
    );
    assert.deepEqual(measured.map((entry) => entry.commands.length), [ids.length]);
    const perCall = (measured[0]!.bytes - 1) / ids.length;
    assert.ok(Number.isInteger(perCall), "the six entries are the same size");

    // Room for three EVALs' entries, not for their body (its brackets): two per request.
    const maxBytes = 3 * perCall;
    const capped = await beginsAfterFlush(
      new UpstashStore({ redis: fixture.createRedis(), batch: { maxBytes } }),
    );
    for (const entry of capped) assert.ok(entry.bytes <= maxBytes, `${entry.bytes} > ${maxBytes}`);
    assert.deepEqual(evals(capped).map((entry) => entry.commands.length), [2, 2, 2]);

    // A cap below one EVAL: each goes alone, the only request ever over the cap.
    const tight = perCall - 1;
    const alone = await beginsAfterFlush(
      new UpstashStore({ redis: fixture.createRedis(), batch: { maxBytes: tight } }),
    );
    assert.deepEqual(evals(alone).map((entry) => entry.commands.length), [1, 1, 1, 1, 1, 1]);
    for (const entry of alone) {
      assert.ok(entry.bytes <= tight || entry.commands.length === 1, `${entry.bytes} > ${tight}`);
    }
  });
});

Deno.test("a call over batch.maxBytes goes alone; the others share one pipeline under the cap", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), batch: { maxBytes: 4096 } });
    await warm(store);
    const runId = await startRun(store);
    const ids = ["call_a", "call_b", "call_big", "call_c"];
    for (const toolCallId of ids) {
      assert.ok((await store.begin(beginRequest(runId, toolCallId))).ok);
    }
    fixture.endpoint.reset();
    const done = await Promise.all(ids.map((toolCallId) =>
      store.complete({
        runId,
        toolCallId,
        attemptId: `attempt-${toolCallId}`,
        outcome: ready(toolCallId === "call_big" ? 8192 : 200),
        now: Date.now(),
      })
    ));
    assert.ok(done.every((d) => d.ok));
    const log = fixture.endpoint.log;
    assert.equal(log.length, 2);
    // In a request of its own: a pipeline of one, which the client's auto-pipelining cannot
    // merge with anything.
    const alone = log.find((entry) => entry.commands.length === 1)!;
    const shared = log.find((entry) => entry.commands.length > 1)!;
    assert.equal(alone.commands.length, 1);
    assert.ok(alone.commands[0]!.some((arg) => arg.length > 8000), "the big complete alone");
    assert.equal(shared.commands.length, 3);
    // The cap splits batches too: with room for about two small completes, three need two.
    const tight = new UpstashStore({ redis: fixture.createRedis(), batch: { maxBytes: 1200 } });
    const runId2 = await startRun(tight);
    for (const toolCallId of ["x", "y", "z"]) {
      assert.ok((await tight.begin(beginRequest(runId2, toolCallId))).ok);
    }
    fixture.endpoint.reset();
    const tightDone = await Promise.all(["x", "y", "z"].map((toolCallId) =>
      tight.complete({
        runId: runId2,
        toolCallId,
        attemptId: `attempt-${toolCallId}`,
        outcome: ready(200),
        now: Date.now(),
      })
    ));
    assert.ok(tightDone.every((d) => d.ok));
    assert.deepEqual(paths(fixture).sort(), ["/pipeline x1", "/pipeline x2"]);
  });
});

Deno.test("one refused begin and one script error in a batch leave the others' answers alone (both stores agree on the refusals)", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const upstash = new UpstashStore({ redis: fixture.createRedis() });
    await warm(upstash);
    const memory = new MemoryStore();
    for (const store of [upstash, memory]) {
      const runId = await startRun(store, 3);
      assert.ok((await store.begin({ ...beginRequest(runId, "call_dup"), attemptId: "first" })).ok);
      const requests = [
        beginRequest(runId, "call_1"),
        { ...beginRequest(runId, "call_dup"), attemptId: "second" }, // DUPLICATE_TOOL_CALL
        beginRequest("run-never-started", "call_2"), // RUN_NOT_FOUND
        beginRequest(runId, "call_3"),
        beginRequest(runId, "call_4"), // over the run budget of 3
      ];
      if (store === upstash) fixture.endpoint.reset();
      const answers = await Promise.all(requests.map((request) => store.begin(request)));
      assert.deepEqual(
        answers.map((a) => (a.ok ? "OK" : a.code)),
        ["OK", "DUPLICATE_TOOL_CALL", "RUN_NOT_FOUND", "OK", "RUN_BUDGET_EXHAUSTED"],
        store.constructor.name,
      );
      if (store === upstash) assert.deepEqual(paths(fixture), ["/pipeline x5"]);
    }
    // A script error (the record key holds a string, not a hash): only that call fails.
    const runId = await startRun(upstash);
    const broken = upstash.keys(runId, "call_broken").record!;
    await fixture.direct(["SET", broken, "not a hash"]);
    fixture.endpoint.reset();
    const settled = await Promise.allSettled(
      ["call_ok1", "call_broken", "call_ok2"].map((toolCallId) =>
        upstash.begin(beginRequest(runId, toolCallId))
      ),
    );
    assert.deepEqual(paths(fixture), ["/pipeline x3"]);
    assert.equal(settled[0]!.status, "fulfilled");
    assert.equal(settled[2]!.status, "fulfilled");
    assert.equal(settled[1]!.status, "rejected");
    const error = (settled[1] as PromiseRejectedResult).reason;
    assert.ok(error instanceof BoundaryError);
    assert.equal(error.code, "STORE_UNAVAILABLE");
    assert.doesNotMatch(String((error.cause as Error).message), /call_broken|not a hash/);
    assert.equal((await upstash.get(runId, "call_ok1"))?.status, "PROJECTING");
    assert.equal((await upstash.get(runId, "call_ok2"))?.status, "PROJECTING");
    assert.equal((await upstash.getRun(runId))?.used.calls, 2);
  });
});

Deno.test("a dropped pipeline response is retried by the client as a whole: every call is begun and completed once", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({
      redis: fixture.createRedis({ retry: { retries: 3, backoff: () => 10 } }),
    });
    await warm(store);
    const runId = await startRun(store);
    const ids = Array.from({ length: 6 }, (_, i) => `call_${i}`);
    fixture.endpoint.reset();
    fixture.endpoint.dropNext(1); // the begins ran; their answer never arrives
    const begun = await Promise.all(
      ids.map((toolCallId) => store.begin(beginRequest(runId, toolCallId))),
    );
    assert.ok(begun.every((b) => b.ok && b.record.status === "PROJECTING"));
    assert.deepEqual(paths(fixture), ["/pipeline x6", "/pipeline x6"]);
    fixture.endpoint.dropNext(1);
    const done = await Promise.all(ids.map((toolCallId) =>
      store.complete({
        runId,
        toolCallId,
        attemptId: `attempt-${toolCallId}`,
        outcome: ready(),
        now: Date.now(),
      })
    ));
    assert.ok(done.every((d) => d.ok && d.record.status === "READY"));
    // Each call counted once against the budget, listed once among the facts.
    assert.equal((await store.getRun(runId))?.used.calls, 6);
    const ended = await store.endRun({ runId, now: Date.now() });
    assert.ok(ended.ok);
    assert.deepEqual([...ended.toolCallIds].sort(), ids);
  });
});

Deno.test("a pipeline whose every answer is lost fails each of its calls; resending each (same attempt) is idempotent", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis({ retry: false }) });
    await warm(store);
    const runId = await startRun(store);
    const ids = ["call_a", "call_b", "call_c"];
    // Every try: fetch's own resend on a new connection, and the client's.
    fixture.endpoint.dropNext(10);
    const lost = await Promise.allSettled(
      ids.map((toolCallId) => store.begin(beginRequest(runId, toolCallId))),
    );
    for (const result of lost) {
      assert.equal(result.status, "rejected");
      assert.equal((result as PromiseRejectedResult).reason.code, "STORE_UNAVAILABLE");
    }
    fixture.endpoint.dropNext(0);
    // The scripts ran: each record exists once, PROJECTING; the same attempt again finds it.
    assert.equal((await store.getRun(runId))?.used.calls, 3);
    const again = await Promise.all(
      ids.map((toolCallId) => store.begin(beginRequest(runId, toolCallId))),
    );
    assert.ok(again.every((b) => b.ok && b.record.status === "PROJECTING"));
    assert.equal((await store.getRun(runId))?.used.calls, 3);
    // A 5xx answer fails the whole request and runs nothing.
    fixture.endpoint.failNext(1, 503);
    const failed = await Promise.allSettled(ids.map((toolCallId) =>
      store.complete({
        runId,
        toolCallId,
        attemptId: `attempt-${toolCallId}`,
        outcome: ready(),
        now: Date.now(),
      })
    ));
    assert.ok(failed.every((r) => r.status === "rejected"));
    for (const toolCallId of ids) {
      assert.equal((await store.get(runId, toolCallId))?.status, "PROJECTING");
    }
  });
});

Deno.test("new UpstashStore() checks batch: false or { maxBytes } of a positive integer, and needs redis.pipeline for it", () => {
  const redis = {
    evalsha: () => Promise.resolve(null),
    eval: () => Promise.resolve(null),
  };
  for (const batch of [{ maxBytes: 0 }, { maxBytes: 1.5 }, { maxBytes: -1 }, null, 5, true]) {
    assert.throws(
      () =>
        new UpstashStore({
          redis: { ...redis, pipeline: () => ({}) as never },
          batch: batch as never,
        }),
      RangeError,
      JSON.stringify(batch),
    );
  }
  assert.throws(() => new UpstashStore({ redis, batch: { maxBytes: 1000 } }), TypeError);
  // Without a pipeline and no batch option, every call goes alone.
  assert.ok(new UpstashStore({ redis }));
  assert.ok(new UpstashStore({ redis, batch: false }));
});
