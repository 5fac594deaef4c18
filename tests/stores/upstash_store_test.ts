/**
 * UpstashStore beyond the shared conformance suite: round trips, TTL discipline, NOSCRIPT,
 * client retries under dropped responses, awkward IDs, redaction, time bounds. Always through
 * the real `@upstash/redis` client, over HTTP, against a real redis-server.
 */
import assert from "node:assert/strict";
import { BoundaryError } from "../../src/core/errors.ts";
import type { CompleteOutcome, StoredRecord } from "../../src/core/store.ts";
import { ToolBoundary } from "../../src/core/boundary.ts";
import { RedisStoreError, UpstashStore } from "../../src/upstash/mod.ts";
import { createFakeToolkit } from "../../src/testing/mod.ts";
import { startStoreRun } from "../support/runs.ts";
import { withSharedUpstashFixture, withUpstashFixture } from "../support/upstash_fixture.ts";

const CANARY = "canary-7c1f-secret";

let seq = 0;
const id = (prefix: string) => `${prefix}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;

/** A run of `calls` calls on the store, under a new ID unless one is given: its ID. */
const startRun = async (store: UpstashStore, runId = id("run"), calls = 100): Promise<string> =>
  (await startStoreRun(store, runId, { calls, attemptId: id("start") })).runId;

function beginRequest(runId: string, toolCallId: string, over: Record<string, unknown> = {}) {
  return {
    runId,
    toolCallId,
    toolName: "search",
    requestJson: '{"query":"disk"}',
    requestDigest: "test-digest",
    attemptId: id("attempt"),
    ttlMs: 60_000,
    now: Date.now(),
    ...over,
  };
}

const READY: CompleteOutcome = {
  status: "READY",
  evidence: "EVIDENCE_FOUND",
  rawJson: `{"hits":["a"],"secret":"${CANARY}"}`,
  agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"index","content":["a"]}',
};

const FAILED: CompleteOutcome = { status: "ERROR", errorCode: "EXECUTION_FAILED", rawJson: null };

/** Runs every script once, so the next request of each is a single EVALSHA. */
async function warmScripts(store: UpstashStore): Promise<void> {
  const runId = await startRun(store);
  const request = beginRequest(runId, "call_warm");
  assert.ok((await store.begin(request)).ok);
  const done = await store.complete({
    runId,
    toolCallId: "call_warm",
    attemptId: request.attemptId,
    outcome: READY,
    now: Date.now(),
  });
  assert.ok(done.ok);
  await store.get(runId, "call_warm");
  await store.getRun(runId);
  const ended = await store.endRun({ runId, now: Date.now() });
  assert.ok(ended.ok);
  await store.readFacts({
    runId,
    identities: [{ runId, toolCallId: "call_warm" }],
    maxFacts: 10,
    maxBytes: 10_000,
  });
}

/** Commands that set, change or drop a TTL. */
const EXPIRY_COMMANDS = new Set(["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "PERSIST", "GETEX"]);

function isExpiryCommand(args: readonly string[]): boolean {
  const name = (args[0] ?? "").toUpperCase();
  if (EXPIRY_COMMANDS.has(name)) return true;
  return name === "SET" &&
    args.slice(3).some((a) => ["EX", "PX", "EXAT", "PXAT"].includes(a.toUpperCase()));
}

/** Parses a MONITOR line: `<ts> [<db> <source>] "CMD" "arg" ...`. */
function parseMonitorLine(line: string): { lua: boolean; args: string[] } {
  const bracket = line.indexOf("]");
  const source = line.slice(line.indexOf("[") + 1, bracket);
  const args = [...line.slice(bracket + 1).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) =>
    m[1]!.replace(/\\(.)/g, "$1")
  );
  return { lua: source.endsWith("lua"), args };
}

Deno.test("UpstashStore: one REST round trip per operation, two for the end-of-run projection", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const { endpoint } = fixture;
    // The first use of each script in a fresh Redis costs EVALSHA + EVAL; measure after that.
    await warmScripts(store);

    const measured: Record<string, number> = {};
    const measure = async (name: string, op: () => Promise<unknown>) => {
      endpoint.reset();
      await op();
      measured[name] = endpoint.requests;
      for (const entry of endpoint.log) {
        // startRun: its script and the run index's, in one pipeline request.
        const scripts = name === "startRun" ? ["evalsha", "evalsha"] : ["evalsha"];
        assert.deepEqual(entry.commands.map((c) => c[0]), scripts, name);
      }
    };
    const runId = id("run");
    await measure("startRun", () => startRun(store, runId));
    const request = beginRequest(runId, "call_1");
    await measure("begin", () => store.begin(request));
    await measure("complete", () =>
      store.complete({
        runId,
        toolCallId: "call_1",
        attemptId: request.attemptId,
        outcome: READY,
        now: Date.now(),
      }));
    await measure("get", () => store.get(runId, "call_1"));
    await measure("getRun", () => store.getRun(runId));
    await measure("endRun", () => store.endRun({ runId, now: Date.now() }));
    await measure("readFacts", () =>
      store.readFacts({
        runId,
        identities: [{ runId, toolCallId: "call_1" }],
        maxFacts: 10,
        maxBytes: 10_000,
      }));
    assert.deepEqual(measured, {
      startRun: 1,
      begin: 1,
      complete: 1,
      get: 1,
      getRun: 1,
      endRun: 1,
      readFacts: 1,
    });

    // Through the boundary: a call is begin + complete; ending a run is two, for 1 or 60 calls.
    const kit = createFakeToolkit();
    const boundary = new ToolBoundary({ store, tools: kit.tools });
    const endCost: Record<number, number> = {};
    for (const calls of [1, 60]) {
      const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls } });
      for (let i = 0; i < calls; i++) {
        endpoint.reset();
        const result = await boundary.invoke(run, {
          toolCallId: `call_${i}`,
          runId: run.runId,
          toolName: kit.names.success,
          input: { query: "disk" },
        });
        assert.equal(result.status, "READY");
        assert.equal(endpoint.requests, 2, "invoke = begin + complete");
      }
      endpoint.reset();
      const facts = await boundary.endRun(run);
      assert.equal(facts.length, Math.min(calls, boundary.limits.factCount));
      endCost[calls] = endpoint.requests;
      // The projection reads no request or raw payload: the reply carries fact fields only.
      assert.ok(!JSON.stringify(endpoint.log).includes("credential"));
    }
    assert.deepEqual(endCost, { 1: 2, 60: 2 });
    console.log(
      `round trips: ${JSON.stringify(measured)}, invoke 2, endRun+projection ${
        JSON.stringify(endCost)
      } (calls: round trips)`,
    );
  });
});

Deno.test("UpstashStore: the TTL is set once at creation; reads and complete never touch it", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = await startRun(store);
    const keys = store.keys(runId, "call_ttl");
    const recordKey = keys.record!;

    const stopCreate = await fixture.monitor();
    fixture.endpoint.reset();
    const request = beginRequest(runId, "call_ttl", { ttlMs: 120_000 });
    const begun = await store.begin(request);
    assert.ok(begun.ok);
    const created = (await stopCreate()).map(parseMonitorLine);
    const createExpiry = created.filter((c) => isExpiryCommand(c.args));
    // The run's first begin too: the run hash keeps its begun keys, so nothing else is created.
    assert.deepEqual(createExpiry.map((c) => c.args.slice(0, 2)), [["PEXPIRE", recordKey]]);
    assert.equal(createExpiry[0]?.args[2], "120000");
    assert.ok(createExpiry.every((c) => c.lua), "set inside the begin script");

    const expireTime = await fixture.direct(["PEXPIRETIME", recordKey]);
    assert.equal(typeof expireTime, "number");
    assert.ok(Math.abs((expireTime as number) - begun.record.expiresAt) < 1_000);

    const stopAfter = await fixture.monitor();
    fixture.endpoint.reset();
    for (let i = 0; i < 3; i++) {
      await store.get(runId, "call_ttl");
      await store.getRun(runId);
      assert.equal(await fixture.direct(["PEXPIRETIME", recordKey]), expireTime, "after reads");
    }
    const done = await store.complete({
      runId,
      toolCallId: "call_ttl",
      attemptId: request.attemptId,
      outcome: READY,
      now: Date.now(),
    });
    assert.ok(done.ok);
    assert.equal(done.record.expiresAt, begun.record.expiresAt);
    assert.equal(await fixture.direct(["PEXPIRETIME", recordKey]), expireTime, "after complete");
    // A second complete appends to the index that exists: it sets no TTL.
    const second = beginRequest(runId, "call_ttl_2");
    assert.ok((await store.begin(second)).ok);
    const secondDone = await store.complete({
      runId,
      toolCallId: "call_ttl_2",
      attemptId: second.attemptId,
      outcome: READY,
      now: Date.now(),
    });
    assert.ok(secondDone.ok);
    await store.get(runId, "call_ttl");
    await store.readFacts({
      runId,
      identities: [{ runId, toolCallId: "call_ttl" }],
      maxFacts: 5,
      maxBytes: 5_000,
    });
    await store.endRun({ runId, now: Date.now() });
    assert.equal(await fixture.direct(["PEXPIRETIME", recordKey]), expireTime, "after the end");
    const afterLines = (await stopAfter()).map(parseMonitorLine);

    // Between creation and the end: no TTL command on the record or the run, from any source.
    for (const entry of afterLines.filter((c) => isExpiryCommand(c.args))) {
      assert.notEqual(entry.args[1], recordKey, `TTL touched: ${entry.args.join(" ")}`);
      assert.notEqual(entry.args[1], keys.run, `TTL touched: ${entry.args.join(" ")}`);
    }
    // The only one: the second record, at its creation (startRun gave the index its TTL).
    assert.deepEqual(
      afterLines.filter((c) => isExpiryCommand(c.args)).map((c) => c.args.slice(0, 2)),
      [["PEXPIRE", store.keys(runId, "call_ttl_2").record]],
    );
    const runTtl = await fixture.direct(["PEXPIRETIME", keys.run]);
    assert.equal(
      await fixture.direct(["PEXPIRETIME", keys.progress]),
      runTtl,
      "index dies with run",
    );
    // Nothing at the REST level either.
    assert.equal(fixture.endpoint.commands().filter(isExpiryCommand).length, 0);
  });
});

Deno.test("UpstashStore: complete on an expired record gives RECORD_EXPIRED and does not re-create it", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = await startRun(store);
    const request = beginRequest(runId, "call_gone");
    assert.ok((await store.begin(request)).ok);
    // Expire it the way Redis would: the key is gone.
    await fixture.direct(["DEL", store.keys(runId, "call_gone").record!]);
    const done = await store.complete({
      runId,
      toolCallId: "call_gone",
      attemptId: request.attemptId,
      outcome: READY,
      now: Date.now(),
    });
    assert.deepEqual(done, { ok: false, code: "RECORD_EXPIRED" });
    assert.equal(await fixture.direct(["EXISTS", store.keys(runId, "call_gone").record!]), 0);
    // Not indexed: the index holds only startRun's sentinel.
    assert.deepEqual(await fixture.direct(["LRANGE", store.keys(runId).progress, "0", "-1"]), [""]);
    // The tool call ID stays used for the life of the run.
    assert.deepEqual(await store.begin(beginRequest(runId, "call_gone")), {
      ok: false,
      code: "DUPLICATE_TOOL_CALL",
    });
    assert.equal((await store.getRun(runId))?.used.calls, 1);
  });
});

Deno.test("UpstashStore: at a spent budget a begun tool call ID is still a duplicate, and a refused one is never marked begun", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const begin = (runId: string, toolCallId: string) =>
      store.begin(beginRequest(runId, toolCallId));
    // A begun key is a field of the run hash: it dies with its run.
    const isBegun = (runId: string, toolCallId: string) =>
      fixture.direct(["HEXISTS", store.keys(runId).run, `c:${toolCallId}`]);

    const empty = await startRun(store, id("run"), 0);
    assert.deepEqual(await begin(empty, "call_none"), { ok: false, code: "RUN_BUDGET_EXHAUSTED" });
    assert.equal(await isBegun(empty, "call_none"), 0, "a refusal marks nothing");

    // Run budget: 1 call, spent by call_a.
    const runId = await startRun(store, id("run"), 1);
    assert.ok((await begin(runId, "call_a")).ok);
    assert.equal(await isBegun(runId, "call_a"), 1);
    const duplicate = { ok: false, code: "DUPLICATE_TOOL_CALL" };
    assert.deepEqual(await begin(runId, "call_a"), duplicate, "record live");
    await fixture.direct(["DEL", store.keys(runId, "call_a").record!]);
    assert.deepEqual(await begin(runId, "call_a"), duplicate, "record expired");
    assert.deepEqual(await begin(runId, "call_b"), { ok: false, code: "RUN_BUDGET_EXHAUSTED" });
    assert.equal(await isBegun(runId, "call_b"), 0, "a refusal marks nothing");

    // Tool budget: 1 call of "search", spent by call_t.
    const now = Date.now();
    const tools = id("run");
    const started = await store.startRun({
      runId: tools,
      deadline: now + 600_000,
      budget: { calls: 10, perTool: { search: 1 } },
      ttlMs: 1_200_000,
      attemptId: id("start"),
      now,
    });
    assert.ok(started.ok);
    assert.ok((await begin(tools, "call_t")).ok);
    await fixture.direct(["DEL", store.keys(tools, "call_t").record!]);
    assert.deepEqual(await begin(tools, "call_t"), duplicate, "record expired");
    assert.deepEqual(await begin(tools, "call_u"), { ok: false, code: "TOOL_BUDGET_EXHAUSTED" });
    assert.equal(await isBegun(tools, "call_u"), 0, "a refusal marks nothing");
    const state = await store.getRun(tools);
    assert.equal(state?.used.calls, 1);
    assert.deepEqual(state?.used.perTool, { search: 1 });
  });
});

Deno.test("UpstashStore: a run started by the earlier layout (begun set, no index yet) still refuses its begun keys and indexes its completes", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = id("run");
    const keys = store.keys(runId, "call_old");
    const begunSet = `${store.prefix}:{${runId}}:begun`;
    const now = Date.now();
    // What the earlier scripts left after one begin: no 'layout' field, no c: fields, the set.
    const hset = (key: string, fields: Record<string, string | number>) =>
      fixture.direct(["HSET", key, ...Object.entries(fields).flat().map(String)]);
    await hset(keys.run, {
      runId,
      status: "ACTIVE",
      deadline: now + 600_000,
      startedAt: now,
      calls: 10,
      used: 1,
      attemptId: "start-old",
      "u:search": 1,
    });
    await fixture.direct(["PEXPIRE", keys.run, "600000"]);
    await fixture.direct(["SADD", begunSet, "call_old"]);
    await fixture.direct(["PEXPIRE", begunSet, "600000"]);
    await hset(keys.record!, {
      runId,
      toolCallId: "call_old",
      toolName: "search",
      status: "PROJECTING",
      requestJson: "{}",
      attemptId: "attempt-old",
      createdAt: now,
      updatedAt: now,
      expiresAt: now + 60_000,
    });
    await fixture.direct(["PEXPIRE", keys.record!, "60000"]);

    const duplicate = { ok: false, code: "DUPLICATE_TOOL_CALL" };
    for (const over of [{}, { requestDigest: "other" }, { replay: true }]) {
      assert.deepEqual(await store.begin(beginRequest(runId, "call_old", over)), duplicate);
    }
    // Begun before the set existed: its record tells.
    await fixture.direct(["SREM", begunSet, "call_old"]);
    assert.deepEqual(await store.begin(beginRequest(runId, "call_old")), duplicate);

    const fresh = beginRequest(runId, "call_new");
    assert.ok((await store.begin(fresh)).ok);
    const completes: [string, string][] = [["call_new", fresh.attemptId], [
      "call_old",
      "attempt-old",
    ]];
    for (const [toolCallId, attemptId] of completes) {
      const done = await store.complete({ runId, toolCallId, attemptId, outcome: READY, now });
      assert.ok(done.ok, toolCallId);
      // The earlier layout kept no position.
      assert.equal(done.record.seq, toolCallId === "call_old" ? 0 : 2, toolCallId);
      assert.equal((await store.get(runId, toolCallId))?.seq, done.record.seq);
    }
    const entries = await fixture.direct(["LRANGE", keys.progress, "0", "-1"]) as string[];
    assert.deepEqual(entries, [
      `call_new r${fresh.now + fresh.ttlMs}`,
      `call_old r${now + 60_000}`,
    ]);
    const ttl = await fixture.direct(["PTTL", keys.progress]) as number;
    assert.ok(ttl > 0 && ttl <= 600_000, `the index got the run's TTL: ${ttl}`);
    const ended = await store.endRun({ runId, now });
    assert.ok(ended.ok);
    assert.deepEqual(ended.toolCallIds, ["call_new", "call_old"]);
    assert.deepEqual(ended.run.used, { calls: 2, perTool: { search: 2 } });
    // Only the keys begun with this layout are listed.
    assert.deepEqual((await store.listCalls(runId))?.calls.map((c) => c.toolCallId), ["call_new"]);
  });
});

Deno.test("UpstashStore: a run started by layout 2 (c: fields, no tools list) reads, begins and ends as before", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = id("run");
    const keys = store.keys(runId);
    const now = Date.now();
    // What layout 2 left after two begins and one complete: no 'tools' field.
    await fixture.direct([
      "HSET",
      keys.run,
      ...Object.entries({
        runId,
        status: "ACTIVE",
        deadline: now + 600_000,
        startedAt: now,
        calls: 10,
        used: 2,
        attemptId: "start-2",
        layout: "2",
        "b:search": 5,
        "u:search": 1,
        "u:other": 1,
        "c:call_1": "1:attempt-1:test-digest",
        "c:call_2": "2:attempt-2:test-digest",
      }).flat().map(String),
    ]);
    await fixture.direct(["RPUSH", keys.progress, "", "call_1"]);
    for (const key of [keys.run, keys.progress]) {
      await fixture.direct(["PEXPIRE", key, "600000"]);
    }
    const run = await store.getRun(runId);
    assert.deepEqual([run?.budget, run?.used], [
      { calls: 10, perTool: { search: 5 } },
      { calls: 2, perTool: { search: 1, other: 1 } },
    ]);
    assert.deepEqual(await store.begin(beginRequest(runId, "call_1")), {
      ok: false,
      code: "DUPLICATE_TOOL_CALL",
    });
    assert.ok((await store.begin(beginRequest(runId, "call_3", { toolName: "third" }))).ok);
    assert.equal(await fixture.direct(["HEXISTS", keys.run, "tools"]), 0, "the layout stays");
    assert.deepEqual((await store.getRun(runId))?.used.perTool, { search: 1, other: 1, third: 1 });
    const ended = await store.endRun({ runId, now });
    assert.ok(ended.ok);
    assert.deepEqual(ended.toolCallIds, ["call_1"]);
    assert.deepEqual([ended.run.status, ended.run.used.calls], ["ENDED", 3]);
  });
});

Deno.test("UpstashStore: a run read names only the tools a run has a budget or a count for, first-used tools included", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = id("run");
    const now = Date.now();
    const started = await store.startRun({
      runId,
      deadline: now + 600_000,
      budget: { calls: 10, perTool: { search: 3, 'a/\\"b': 1 } },
      ttlMs: 600_000,
      attemptId: id("start"),
      now,
    });
    assert.ok(started.ok);
    for (const [toolCallId, toolName] of [["c1", "search"], ["c2", "fetch"], ["c3", "fetch"]]) {
      assert.ok((await store.begin(beginRequest(runId, toolCallId!, { toolName }))).ok);
    }
    const tools = await fixture.direct(["HGET", store.keys(runId).run, "tools"]) as string;
    // Each once: a tool with a budget from the start, the first call of another.
    assert.deepEqual(JSON.parse(tools).sort(), ['a/\\"b', "fetch", "search"]);
    const run = await store.getRun(runId);
    assert.deepEqual([run?.budget.perTool, run?.used], [
      { search: 3, 'a/\\"b': 1 },
      { calls: 3, perTool: { search: 1, fetch: 2 } },
    ]);
  });
});

Deno.test("UpstashStore: the first end counts the READY entries once; a later page walks only up to itself, and past the soonest expiry counts by expiry", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = await startRun(store);
    const keys = store.keys(runId);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const request = beginRequest(runId, `call_${i}`, { ttlMs: i === 30 ? 1_000 : 600_000 });
      assert.ok((await store.begin(request)).ok);
      const outcome: CompleteOutcome = i % 4 === 3 ? FAILED : READY;
      const { toolCallId, attemptId } = request;
      assert.ok(
        (await store.complete({ runId, toolCallId, attemptId, outcome, now: request.now }))
          .ok,
      );
      if (outcome === READY) ids.push(toolCallId);
    }
    const now = Date.now();
    const first = await store.endRun({ runId, now, page: { from: 0, limit: 5 } });
    assert.ok(first.ok);
    assert.deepEqual([first.toolCallIds, first.page], [ids.slice(0, 5), { next: 5, left: 25 }]);
    const [counted, soonest] = await fixture.direct([
      "HMGET",
      keys.run,
      "endedReady",
      "endedExpiry",
    ]) as string[];
    assert.equal(counted, "30");
    assert.ok(Number(soonest) < now + 2_000, "call_30's short TTL");
    const later = await store.endRun({ runId, now, page: { from: 5, limit: 3 } });
    assert.ok(later.ok);
    assert.deepEqual([later.toolCallIds, later.page], [ids.slice(5, 8), { next: 8, left: 22 }]);
    // Past call_30's expiresAt: counted by each entry's expiry, call_30 no longer.
    const late = await store.endRun({ runId, now: now + 5_000, page: { from: 5, limit: 3 } });
    assert.ok(late.ok);
    assert.deepEqual([late.toolCallIds, late.page], [ids.slice(5, 8), { next: 8, left: 21 }]);
  });
});

Deno.test("UpstashStore: the run index keys expire with their latest run, never before a live one, and are gone once every run expired", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), prefix: "ix" });
    const [started, expires] = ["ix:{runs}:started", "ix:{runs}:expires"];
    const startFor = async (ttlMs: number) => {
      const runId = id("run");
      const now = Date.now();
      const begun = await store.startRun({
        runId,
        deadline: now + ttlMs,
        budget: { calls: 1, perTool: {} },
        ttlMs,
        attemptId: id("start"),
        now,
      });
      assert.equal(begun.ok, true);
      return runId;
    };
    const expiryOf = async (key: string) => Number(await fixture.direct(["PEXPIRETIME", key]));
    const scoreOf = async (runId: string) =>
      Number(await fixture.direct(["ZSCORE", expires, runId]));
    // An index an earlier version left without an expiry, holding a run that outlives the next.
    const legacyExpiry = Date.now() + 1_500;
    await fixture.direct(["ZADD", started, String(Date.now()), "run-legacy"]);
    await fixture.direct(["ZADD", expires, String(legacyExpiry), "run-legacy"]);
    assert.equal(await expiryOf(expires), -1);

    const short = await startFor(600);
    assert.ok(await scoreOf(short) < legacyExpiry);
    assert.equal(await expiryOf(started), legacyExpiry, "the latest run's, not the new one's");
    assert.equal(await expiryOf(expires), legacyExpiry);
    const long = await startFor(2_000);
    const latest = await scoreOf(long);
    assert.ok(latest > legacyExpiry);
    assert.equal(await expiryOf(started), latest, "pushed out to the new latest run");
    assert.equal(await expiryOf(expires), latest);
    await startFor(300); // expires first: the indexes keep the latest run's expiry
    assert.equal(await expiryOf(started), latest);
    assert.equal(await expiryOf(expires), latest);
    assert.ok((await store.listRuns({ limit: 10 })).runs.some((run) => run.runId === long));

    // Past every run's expiry, by Redis's clock: nothing of the store is left.
    const time = await fixture.direct(["TIME"]) as string[];
    const redisNow = Number(time[0]) * 1_000 + Math.floor(Number(time[1]) / 1_000);
    await new Promise((resolve) => setTimeout(resolve, latest - redisNow + 50));
    assert.equal(await fixture.direct(["EXISTS", started, expires]), 0);
    assert.deepEqual(await fixture.direct(["KEYS", "ix:*"]), []);
  });
});

Deno.test("UpstashStore: a complete after its run expired is stored but not indexed", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = await startRun(store);
    const keys = store.keys(runId);
    const first = beginRequest(runId, "call_1");
    const second = beginRequest(runId, "call_2");
    assert.ok((await store.begin(first)).ok);
    assert.ok((await store.begin(second)).ok);
    const complete = (request: typeof first) =>
      store.complete({
        runId,
        toolCallId: request.toolCallId,
        attemptId: request.attemptId,
        outcome: READY,
        now: Date.now(),
      });
    // Before the run's first complete, and after it: the run and its index expire together.
    for (const request of [first, second]) {
      await fixture.direct(["DEL", keys.run, keys.progress]);
      const done = await complete(request);
      assert.ok(done.ok, "the record outlives its run");
      assert.equal(await fixture.direct(["EXISTS", keys.progress]), 0, "not indexed");
    }
  });
});

Deno.test("UpstashStore: after SCRIPT FLUSH, EVALSHA gets NOSCRIPT and EVAL runs the script once", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = await startRun(store);
    await store.getRun(runId);
    assert.equal(await fixture.direct(["SCRIPT", "FLUSH"]), "OK");
    fixture.endpoint.reset();
    const state = await store.getRun(runId);
    assert.equal(state?.runId, runId);
    assert.deepEqual(fixture.endpoint.commands().map((c) => c[0]), ["evalsha", "eval"]);
    fixture.endpoint.reset();
    assert.equal((await store.getRun(runId))?.runId, runId);
    assert.deepEqual(fixture.endpoint.commands().map((c) => c[0]), ["evalsha"], "loaded again");
  });
});

Deno.test("UpstashStore: a begin whose response is dropped is retried by the client and counted once", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = await startRun(store, id("run"), 1);
    const request = beginRequest(runId, "call_drop");
    await warmScripts(store); // the next request is the begin alone
    fixture.endpoint.reset();
    fixture.endpoint.dropNext(1);
    const begun = await store.begin(request);
    assert.ok(begun.ok, "the retry is the same begin: not a duplicate, not over budget");
    assert.equal(fixture.endpoint.requests, 2, "the client resent the request once");
    assert.equal(
      fixture.endpoint.commands().filter((c) => c[0] === "evalsha").length,
      2,
      "the script ran twice",
    );
    assert.equal(begun.record.attemptId, request.attemptId);
    assert.equal(begun.record.status, "PROJECTING");
    const run = await store.getRun(runId);
    assert.equal(run?.used.calls, 1);
    assert.equal(run?.used.perTool.search, 1);
    // Another attempt at the same key is still a duplicate.
    assert.deepEqual(await store.begin({ ...request, attemptId: id("other") }), {
      ok: false,
      code: "DUPLICATE_TOOL_CALL",
    });
  });
});

Deno.test("UpstashStore: a complete whose response is dropped returns the same outcome, indexed once", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    await warmScripts(store);
    const runId = await startRun(store);
    const request = beginRequest(runId, "call_drop");
    assert.ok((await store.begin(request)).ok);
    fixture.endpoint.reset();
    fixture.endpoint.dropNext(1);
    const done = await store.complete({
      runId,
      toolCallId: "call_drop",
      attemptId: request.attemptId,
      outcome: READY,
      now: Date.now(),
    });
    assert.equal(fixture.endpoint.requests, 2);
    assert.ok(done.ok);
    assert.equal(done.record.status, "READY");
    assert.deepEqual(done.record, await store.get(runId, "call_drop"));
    const ended = await store.endRun({ runId, now: Date.now() });
    assert.ok(ended.ok);
    assert.deepEqual(ended.toolCallIds, ["call_drop"]);
  });
});

Deno.test("UpstashStore: through the boundary, a begin resent by fetch or by the client still gives one READY record", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const kit = createFakeToolkit();
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const boundary = new ToolBoundary({ store, tools: kit.tools });
    await warmScripts(store);
    const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 2 } });
    const ids = ["call_a", "call_b"];
    for (const [i, toolCallId] of ids.entries()) {
      fixture.endpoint.reset();
      // One drop: fetch resends on a new connection. Two: fetch throws, @upstash/redis retries.
      fixture.endpoint.dropNext(i + 1);
      const result = await boundary.invoke(run, {
        toolCallId,
        runId: run.runId,
        toolName: kit.names.success,
        input: { query: "disk" },
      });
      assert.equal(result.status, "READY", JSON.stringify(result));
      assert.equal(fixture.endpoint.requests, 2 + i + 1);
    }
    assert.equal(kit.counts.execute[kit.names.success], 2, "each tool ran once");
    const state = await store.getRun(run.runId);
    assert.equal(state?.used.calls, 2, "the run budget of 2 was enough");
    const facts = await boundary.endRun(run);
    assert.deepEqual(facts.map((f) => f.toolCallId), ids);
  });
});

Deno.test("UpstashStore: IDs and payloads that look like JSON round-trip exactly, with or without automatic deserialization", async () => {
  const awkward = ["123", "true", "null", "007", "1e3", "-0", "0.10"];
  const payloads = [...awkward, '{"a":1}', '"x"', "[1,2]", " 42 ", "~", "!", "OK"];
  for (const automaticDeserialization of [true, false]) {
    await withSharedUpstashFixture(async (fixture) => {
      const store = new UpstashStore({ redis: fixture.createRedis({ automaticDeserialization }) });
      for (const runId of awkward) {
        await startRun(store, runId);
        const run = await store.getRun(runId);
        assert.equal(run?.runId, runId);
        for (const [i, text] of payloads.entries()) {
          const toolCallId = i < awkward.length ? text : `${i}`;
          const request = beginRequest(runId, toolCallId, {
            toolName: text,
            requestJson: text,
            requestDigest: "test-digest",
            attemptId: text + i,
          });
          const begun = await store.begin(request);
          assert.ok(begun.ok, `${runId}/${toolCallId}`);
          const done = await store.complete({
            runId,
            toolCallId,
            attemptId: request.attemptId,
            outcome: {
              status: "READY",
              evidence: "NO_EVIDENCE",
              rawJson: text,
              agentResultJson: text,
            },
            now: Date.now(),
          });
          assert.ok(done.ok);
          const stored = await store.get(runId, toolCallId);
          const expected: Partial<StoredRecord> = {
            runId,
            toolCallId,
            toolName: text,
            requestJson: text,
            rawJson: text,
            agentResultJson: text,
            attemptId: text + i,
          };
          for (const [key, value] of Object.entries(expected)) {
            assert.strictEqual(stored?.[key as keyof StoredRecord], value, `${key} of ${text}`);
          }
        }
        const ended = await store.endRun({ runId, now: Date.now() });
        assert.ok(ended.ok);
        assert.deepEqual(
          ended.toolCallIds,
          payloads.map((t, i) => i < awkward.length ? t : `${i}`),
        );
        assert.equal(ended.run.runId, runId);
        const facts = await store.readFacts({
          runId,
          identities: ended.toolCallIds.map((toolCallId) => ({ runId, toolCallId })),
          maxFacts: 100,
          maxBytes: 100_000,
        });
        assert.deepEqual(facts.rows.map((r) => r.agentResultJson), payloads);
        assert.deepEqual(facts.rows.map((r) => r.toolName), payloads);
      }
    });
  }
});

Deno.test("UpstashStore: Redis and transport errors become STORE_UNAVAILABLE with a redacted cause", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = await startRun(store);
    const secretCall = `call_${CANARY}`;

    const expectUnavailable = async (op: () => Promise<unknown>): Promise<RedisStoreError> => {
      const error = await op().then(() => null, (e) => e);
      assert.ok(error instanceof BoundaryError, String(error));
      assert.equal(error.code, "STORE_UNAVAILABLE");
      assert.ok(error.cause instanceof RedisStoreError);
      const text = `${error.message} ${error.cause.name} ${error.cause.message} ${
        JSON.stringify(error)
      }`;
      assert.ok(!text.includes(CANARY), `leaked an argument: ${text}`);
      assert.ok(!/command was/i.test(text), text);
      assert.ok(!text.includes(fixture.endpoint.url) && !text.includes("127.0.0.1"), text);
      assert.ok(!text.includes(fixture.endpoint.token), text);
      return error.cause;
    };

    // A Redis error: the record key holds a string, so the script's HMGET fails.
    await fixture.direct(["SET", store.keys(runId, secretCall).record!, CANARY]);
    const wrongType = await expectUnavailable(() => store.get(runId, secretCall));
    assert.equal(wrongType.name, "UpstashError");
    assert.match(wrongType.message, /WRONGTYPE/);

    // An HTTP error status (not retried by the client).
    fixture.endpoint.failNext(1, 500);
    fixture.endpoint.reset();
    const status = await expectUnavailable(() =>
      store.begin(beginRequest(runId, "call_x", { requestJson: `{"k":"${CANARY}"}` }))
    );
    assert.equal(status.message, "Injected failure");
    assert.equal(fixture.endpoint.requests, 1);

    // The boundary maps it and the agent sees only the code.
    const kit = createFakeToolkit();
    const boundary = new ToolBoundary({ store, tools: kit.tools });
    const run = await boundary.startRun({ ttlMs: 60_000 });
    fixture.endpoint.failNext(1, 503);
    const result = await boundary.invoke(run, {
      toolCallId: "call_down",
      runId: run.runId,
      toolName: kit.names.success,
      input: { query: CANARY },
    });
    assert.equal(result.status, "ERROR");
    assert.equal(result.status === "ERROR" && result.code, "STORE_UNAVAILABLE");
    assert.ok(!JSON.stringify(result).includes(CANARY));
    assert.equal(kit.counts.execute[kit.names.success] ?? 0, 0, "the tool never ran");

    // Nobody listening: fetch throws, the client gives up after its retries.
    const closed = fixture.createRedis({ retry: { retries: 1, backoff: () => 5 } });
    await fixture.endpoint.stop();
    const refused = await expectUnavailable(() =>
      new UpstashStore({ redis: closed }).getRun(runId)
    );
    assert.equal(refused.name, "TypeError");
  });
});

Deno.test("UpstashStore: a hung Redis is bounded by timeoutMs", async () => {
  // Its own redis-server: the test pauses it.
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), timeoutMs: 300 });
    const runId = await startRun(store);
    fixture.server.pause();
    const started = Date.now();
    try {
      const error = await store.getRun(runId).then(() => null, (e) => e);
      const elapsed = Date.now() - started;
      assert.ok(error instanceof BoundaryError);
      assert.equal(error.code, "STORE_UNAVAILABLE");
      assert.ok(error.cause instanceof RedisStoreError);
      assert.equal(error.cause.name, "TimeoutError");
      assert.ok(elapsed >= 290 && elapsed < 2_000, `took ${elapsed} ms`);
    } finally {
      fixture.server.resume();
    }
    // The late request completes once Redis is back; nothing is left pending.
    await fixture.endpoint.idle();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await store.getRun(runId))?.runId, runId);
  });
});

Deno.test("UpstashStore: refuses unsafe IDs before they reach a key", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    fixture.endpoint.reset();
    for (const runId of ["a}b", "{x}", "a b", "", "r/1", "x".repeat(129)]) {
      assert.deepEqual(
        await store.startRun({
          runId,
          deadline: Date.now() + 1_000,
          budget: { calls: 1, perTool: {} },
          ttlMs: 1_000,
          attemptId: "a",
          now: Date.now(),
        }),
        { ok: false, code: "INVALID_RUN_ID" },
      );
      assert.equal(await store.getRun(runId), null);
      assert.throws(() => store.keys(runId), TypeError);
    }
    const runId = await startRun(store);
    fixture.endpoint.reset();
    for (const toolCallId of ["call{1}", "call 1", "", "call\n1", "x".repeat(257)]) {
      assert.deepEqual(await store.begin(beginRequest(runId, toolCallId)), {
        ok: false,
        code: "INVALID_TOOL_CALL_ID",
      });
      assert.equal(await store.get(runId, toolCallId), null);
    }
    assert.equal(fixture.endpoint.requests, 0, "nothing unsafe was sent");
    assert.throws(
      () => new UpstashStore({ redis: fixture.createRedis(), prefix: "a{b}" }),
      TypeError,
    );
    assert.throws(
      () => new UpstashStore({ redis: fixture.createRedis(), timeoutMs: 0 }),
      RangeError,
    );
  });
});
