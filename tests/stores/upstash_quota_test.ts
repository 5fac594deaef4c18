/**
 * A complete cut off part-way. Upstash refuses writes once a database is past its storage quota
 * (with eviction off), and Redis does not undo a script's earlier writes when a later command
 * fails: whatever the script wrote before the refused command stays. `complete` appends to the
 * progress index before it writes the record, so a cut-off never leaves a READY record that
 * `endRun` misses; an index entry whose record stayed PROJECTING is skipped by the facts, and an
 * ID a repeat appended again is listed once. `startRun` creates the index (with its TTL) before
 * the run hash, so no run ever takes calls without one.
 *
 * Two real techniques on a real redis-server, through the real client and the test endpoint:
 * - a mid-script refusal: the ACL takes one command away from the user the endpoint runs as
 *   (`ACL SETUSER default -hset`), so the script fails at exactly that command, after its
 *   earlier writes. (`maxmemory` cannot cut a script in the middle on redis-server 7: it refuses
 *   only a script's first write, as the second test shows.)
 * - the memory limit: `CONFIG SET maxmemory 1` with `maxmemory-policy noeviction`, as a full
 *   database with eviction off.
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../src/core/boundary.ts";
import { BoundaryError } from "../../src/core/errors.ts";
import type { CompleteOutcome, StartRunRequest } from "../../src/core/store.ts";
import { UpstashStore } from "../../src/stores/upstash/mod.ts";
import { startStoreRun } from "../support/runs.ts";
import { type UpstashFixture, withUpstashFixture } from "../support/upstash_fixture.ts";

const READY: CompleteOutcome = {
  status: "READY",
  evidence: "EVIDENCE_FOUND",
  rawJson: '{"hits":["a"]}',
  agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"index","content":["a"]}',
};

function startRequest(runId: string): StartRunRequest {
  const now = Date.now();
  return {
    runId,
    deadline: now + 600_000,
    budget: { calls: 50, perTool: {} },
    ttlMs: 600_000,
    attemptId: `start-${runId}`,
    now,
  };
}

/** Begins a call; returns the complete request that finishes it READY. */
async function begin(store: UpstashStore, runId: string, toolCallId: string) {
  const now = Date.now();
  const attemptId = `attempt-${toolCallId}`;
  const begun = await store.begin({
    runId,
    toolCallId,
    toolName: "search",
    requestJson: '{"query":"disk"}',
    requestDigest: "test-digest",
    attemptId,
    ttlMs: 600_000,
    now,
  });
  assert.equal(begun.ok, true);
  return { runId, toolCallId, attemptId, outcome: READY, now: Date.now() };
}

async function rejectsUnavailable(operation: Promise<unknown>): Promise<void> {
  await assert.rejects(operation, (error: unknown) => {
    assert.ok(error instanceof BoundaryError);
    assert.equal(error.code, "STORE_UNAVAILABLE");
    return true;
  });
}

/**
 * What Redis holds for a run: the progress list as it is (`entries`, each with its outcome
 * mark; `raw`, the IDs alone), the index as every reader takes it (`index`: without the sentinel,
 * each ID once, where it first appears), and the status of every record key.
 */
async function snapshot(fixture: UpstashFixture, store: UpstashStore, runId: string) {
  const keys = store.keys(runId);
  const entries = await fixture.direct(["LRANGE", keys.progress, "0", "-1"]) as string[];
  const raw = entries.map((entry) => entry.split(" ")[0]!);
  const index = [...new Set(raw.filter((id) => id !== ""))];
  const recordKeys =
    (await fixture.direct(["KEYS", `${store.prefix}:{${runId}}:call:*`])) as string[];
  const status = new Map<string, string>();
  for (const key of recordKeys) {
    status.set(
      key.slice(key.lastIndexOf(":") + 1),
      await fixture.direct(["HGET", key, "status"]) as string,
    );
  }
  return {
    entries,
    raw,
    index,
    status,
    indexTtl: await fixture.direct(["PTTL", keys.progress]) as number,
  };
}

/** The invariant: every READY record of the run is in its progress index, so endRun sees it. */
function assertNoReadyOutsideIndex(seen: Awaited<ReturnType<typeof snapshot>>): void {
  for (const [id, status] of seen.status) {
    if (status === "READY") assert.ok(seen.index.includes(id), `READY ${id} is not in the index`);
  }
}

/** Runs `operation` with `commands` taken away from the user the endpoint runs as. */
async function withoutCommands(
  fixture: UpstashFixture,
  commands: string[],
  operation: () => Promise<unknown>,
): Promise<void> {
  const denied = commands.map((command) => `-${command}`);
  assert.equal(await fixture.direct(["ACL", "SETUSER", "default", ...denied]), "OK");
  try {
    await rejectsUnavailable(operation());
  } finally {
    assert.equal(await fixture.direct(["ACL", "SETUSER", "default", "+@all"]), "OK");
  }
}

/**
 * Runs one complete with `commands` taken away, so the script fails at the first of them, after
 * the writes before it; checks the invariant after.
 */
async function cutOff(
  fixture: UpstashFixture,
  store: UpstashStore,
  request: Awaited<ReturnType<typeof begin>>,
  commands: string[],
): Promise<void> {
  await withoutCommands(fixture, commands, () => store.complete(request));
  assertNoReadyOutsideIndex(await snapshot(fixture, store, request.runId));
}

Deno.test("UpstashStore: a complete cut off at any of its writes leaves no READY record that endRun's facts miss, and a repeat is listed once", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const boundary = new ToolBoundary({ store, tools: [] });
    const runId = "run-cut-off";
    await startStoreRun(store, runId, { calls: 50, ttlMs: 600_000 });
    const first = await begin(store, runId, "call_first");
    assert.equal((await store.complete(first)).ok, true);

    // Cut off at each write of complete: the append, the record.
    const atAppend = await begin(store, runId, "call_append");
    await cutOff(fixture, store, atAppend, ["rpushx", "rpush"]);
    const atRecord = await begin(store, runId, "call_record");
    await cutOff(fixture, store, atRecord, ["hset"]);
    const never = await begin(store, runId, "call_never");
    let seen = await snapshot(fixture, store, runId);
    assert.deepEqual(seen.index, ["call_first", "call_record"], "appended before the cut");
    for (const id of ["call_append", "call_record"]) {
      assert.equal(seen.status.get(id), "PROJECTING", `${id}: the record was not written`);
    }

    const last = await begin(store, runId, "call_last");
    assert.equal((await store.complete(last)).ok, true);

    // A repeat of a cut-off complete (the client resent it, or the caller did) finishes it. The
    // one cut after its append appends again; readers keep the first occurrence.
    for (const request of [atAppend, atRecord]) {
      const repeated = await store.complete(request);
      assert.ok(repeated.ok);
      assert.equal(repeated.record.status, "READY");
    }
    seen = await snapshot(fixture, store, runId);
    assert.deepEqual(seen.raw, [
      "",
      "call_first",
      "call_record",
      "call_last",
      "call_append",
      "call_record",
    ]);
    assert.deepEqual(seen.index, ["call_first", "call_record", "call_last", "call_append"]);
    for (const entry of seen.entries.slice(1)) {
      assert.match(entry, /^call_\w+ r\d+$/, "a READY entry carries its record's expiry");
    }
    assert.equal(seen.status.get(never.toolCallId), "PROJECTING");
    assert.equal((await store.endRun({ runId, now: Date.now() })).ok, true);
    assert.equal((await store.endRun({ runId, now: Date.now() })).ok, true);

    // endRun's facts are exactly the READY records, each once, in index order.
    const ready = [...seen.status].filter(([, s]) => s === "READY").map(([id]) => id).sort();
    assert.deepEqual(ready, ["call_append", "call_first", "call_last", "call_record"]);
    const facts = await boundary.endRun(runId);
    assert.deepEqual(facts.map((fact) => fact.toolCallId), seen.index);
  });
});

Deno.test("UpstashStore: a startRun cut off at any of its writes leaves no run without an index; its repeat makes both, with one TTL", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const boundary = new ToolBoundary({ store, tools: [] });
    // The index's append, its PEXPIRE (the first one the script runs), the run hash.
    for (const commands of [["rpush"], ["pexpire"], ["hset"]]) {
      const runId = `run-cut-${commands[0]}`;
      const request = startRequest(runId);
      await withoutCommands(fixture, commands, () => store.startRun(request));
      assert.equal(await store.getRun(runId), null, `${commands[0]}: no run`);
      const call = await store.begin({
        runId,
        toolCallId: "call_early",
        toolName: "search",
        requestJson: "{}",
        requestDigest: "d",
        attemptId: "a",
        ttlMs: 600_000,
        now: Date.now(),
      });
      assert.deepEqual(call, { ok: false, code: "RUN_NOT_FOUND" });

      assert.equal((await store.startRun(request)).ok, true, "the repeat starts it");
      const done = await begin(store, runId, "call_1");
      assert.equal((await store.complete(done)).ok, true);
      const seen = await snapshot(fixture, store, runId);
      assert.deepEqual(seen.index, ["call_1"]);
      const runTtl = await fixture.direct(["PEXPIRETIME", store.keys(runId).run]);
      assert.equal(
        await fixture.direct(["PEXPIRETIME", store.keys(runId).progress]),
        runTtl,
        "the index dies with its run",
      );
      assert.deepEqual((await boundary.endRun(runId)).map((fact) => fact.toolCallId), ["call_1"]);
    }
  });
});

Deno.test("UpstashStore: an index entry whose record stayed PROJECTING is not a fact", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const boundary = new ToolBoundary({ store, tools: [] });
    const runId = "run-projecting-entry";
    await startStoreRun(store, runId, { calls: 50, ttlMs: 600_000 });
    const done = await begin(store, runId, "call_done");
    assert.equal((await store.complete(done)).ok, true);
    const cut = await begin(store, runId, "call_cut");
    assert.equal(await fixture.direct(["ACL", "SETUSER", "default", "-hset"]), "OK");
    try {
      await rejectsUnavailable(store.complete(cut));
    } finally {
      assert.equal(await fixture.direct(["ACL", "SETUSER", "default", "+@all"]), "OK");
    }
    const seen = await snapshot(fixture, store, runId);
    assert.deepEqual(seen.index, ["call_done", "call_cut"]);
    assert.equal(seen.status.get("call_cut"), "PROJECTING");
    const read = await store.readFacts({
      runId,
      identities: seen.index.map((toolCallId) => ({ runId, toolCallId })),
      maxFacts: 10,
      maxBytes: 10_000,
    });
    assert.deepEqual(read.rows.map((row) => row.toolCallId), ["call_done"]);
    assert.equal(read.omitted, 0, "skipped, not counted as omitted");
    assert.deepEqual((await boundary.endRun(runId)).map((fact) => fact.toolCallId), ["call_done"]);
  });
});

Deno.test("UpstashStore: over the memory limit with eviction off, complete writes nothing and fails closed; it completes once there is room", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const boundary = new ToolBoundary({ store, tools: [] });
    const runId = "run-full";
    await startStoreRun(store, runId, { calls: 50, ttlMs: 600_000 });
    const done = await begin(store, runId, "call_done");
    assert.equal((await store.complete(done)).ok, true);
    const full = await begin(store, runId, "call_full");

    assert.equal(await fixture.direct(["CONFIG", "SET", "maxmemory-policy", "noeviction"]), "OK");
    assert.equal(await fixture.direct(["CONFIG", "SET", "maxmemory", "1"]), "OK");
    try {
      // redis-server refuses a script's first write over the limit (OOM), and none after it:
      // nothing of the complete is written.
      await assert.rejects(store.complete(full), (error: unknown) => {
        assert.ok(error instanceof BoundaryError);
        assert.equal(error.code, "STORE_UNAVAILABLE");
        assert.match(String((error.cause as Error).message), /\bOOM command not allowed\b/);
        return true;
      });
      const seen = await snapshot(fixture, store, runId);
      assert.deepEqual(seen.index, ["call_done"]);
      assert.equal(seen.status.get("call_full"), "PROJECTING");
      // Reads still work while the database is full.
      assert.equal((await store.get(runId, "call_full"))?.status, "PROJECTING");
    } finally {
      assert.equal(await fixture.direct(["CONFIG", "SET", "maxmemory", "0"]), "OK");
    }
    const repeated = await store.complete(full);
    assert.ok(repeated.ok);
    assert.deepEqual((await boundary.endRun(runId)).map((fact) => fact.toolCallId), [
      "call_done",
      "call_full",
    ]);
  });
});
