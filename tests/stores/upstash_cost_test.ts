/**
 * Cost budgets on UpstashStore, end to end: boundaries on three app instances (each its own
 * client and store over the same database) share one run's cost budget, and every reservation is
 * made and settled atomically in Redis, so parallel calls never take the run past its budget, the
 * run's spend is its records' spend, and a call whose complete never came keeps its reservation.
 */
import assert from "node:assert/strict";
import type { StoredRecord } from "../../src/core/store.ts";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { startStoreRun } from "../support/runs.ts";
import {
  type UpstashFixture,
  withSharedUpstashFixture,
  withUpstashFixture,
} from "../support/upstash_fixture.ts";

/** Three stores over the fixture's database, as three app instances would have. */
function storesOf(fixture: UpstashFixture): UpstashStore[] {
  return Array.from({ length: 3 }, () => new UpstashStore({ redis: fixture.createRedis() }));
}

/** Starts `runId` on `store` with a cost budget of `cost` and `calls` calls, for ten minutes. */
async function startCostRun(store: UpstashStore, runId: string, cost: number, calls: number) {
  const reply = await store.startRun({
    runId,
    deadline: Date.now() + 600_000,
    budget: { calls, perTool: {}, cost },
    ttlMs: 600_000,
    attemptId: `start-${runId}`,
    now: Date.now(),
  });
  assert.ok(reply.ok, JSON.stringify(reply));
  return reply;
}

function beginRequest(runId: string, toolCallId: string, cost: number, ttlMs = 600_000) {
  return {
    runId,
    toolCallId,
    toolName: "priced",
    requestJson: '{"i":0}',
    requestDigest: `digest-${toolCallId}`,
    attemptId: `attempt-${toolCallId}`,
    ttlMs,
    now: Date.now(),
    cost,
  };
}

for (const engine of ["redis-server", "gopher-lua"] as const) {
  Deno.test(`three boundaries share one run's cost budget: 60 parallel calls never pass it, and the run's spend is its records' (${engine})`, async () => {
    await withSharedUpstashFixture(async (fixture) => {
      const stores = storesOf(fixture);
      const executed = new Map<string, number>();
      const priced = defineTool({
        name: "priced",
        readOnly: true,
        cost: 5,
        execute: async (input: { i: number }, ctx) => {
          executed.set(ctx.toolCallId, (executed.get(ctx.toolCallId) ?? 0) + 1);
          // Long enough for the calls of the three instances to overlap.
          await new Promise((resolve) => setTimeout(resolve, 5 + (input.i % 4) * 5));
          ctx.settle(3 + (input.i % 3)); // 3, 4 or 5 of the 5 reserved
          return { i: input.i };
        },
        project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "priced", content: raw.i }),
      });
      const boundaries = stores.map((store) => new ToolBoundary({ store, tools: [priced] }));
      const run = await boundaries[0]!.startRun({
        ttlMs: 600_000,
        budget: { calls: 1_000, cost: 100 },
      });
      const { runId } = run;
      const reader = stores[0]!;

      // Reads the run while the calls go on: what it holds and spent never passes the budget.
      let calling = true;
      const samples: { reserved: number; spent: number }[] = [];
      const sampler = (async () => {
        while (calling) {
          const state = await reader.getRun(runId);
          assert.ok(state?.cost !== undefined);
          samples.push(state.cost);
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      })();
      // Spread over about 60 ms, so that begins on every instance meet completes that settle less
      // than was reserved (what they give back lets later calls begin).
      const results = await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          await new Promise((resolve) => setTimeout(resolve, (i * 7) % 60));
          return await boundaries[i % 3]!.invoke(run, {
            toolCallId: `call_${i}`,
            runId,
            toolName: "priced",
            input: { i },
          });
        }),
      );
      calling = false;
      await sampler;

      assert.ok(samples.length > 0);
      for (const { reserved, spent } of samples) {
        assert.ok(reserved + spent <= 100, `reserved ${reserved} + spent ${spent} passes 100`);
      }
      const ready = results.filter((r) => r.status === "READY");
      const refused = results.filter((r) => r.status !== "READY");
      // The first 20 reservations fit whatever the order; settling less than 5 lets more begin.
      assert.ok(ready.length >= 20, `${ready.length} READY`);
      for (const result of refused) {
        assert.equal(result.status, "ERROR");
        if (result.status === "ERROR") assert.equal(result.code, "BUDGET_EXHAUSTED");
        assert.equal(executed.has(result.toolCallId!), false, `${result.toolCallId} ran`);
        assert.equal(await reader.get(runId, result.toolCallId!), null, "a refusal writes nothing");
      }
      const instances = new Set(ready.map((r) => Number(r.toolCallId.slice("call_".length)) % 3));
      assert.ok(instances.size >= 2, "calls of more than one instance ran");
      // Each READY call ran once; nothing else ran.
      assert.equal(executed.size, ready.length);
      for (const result of ready) assert.equal(executed.get(result.toolCallId), 1);

      // The run's spend is the sum of its records' spend; nothing is left reserved.
      const listed = await reader.listCalls(runId);
      assert.ok(listed !== null);
      assert.equal(listed.calls.length, ready.length);
      const records = await Promise.all(
        listed.calls.map(({ toolCallId }) => reader.get(runId, toolCallId)),
      );
      let spent = 0;
      for (const record of records as StoredRecord[]) {
        assert.equal(record.status, "READY");
        assert.equal(record.cost?.reserved, 5);
        const i = Number(record.toolCallId.slice("call_".length));
        assert.equal(record.cost?.spent, 3 + (i % 3));
        spent += record.cost!.spent!;
      }
      const state = await reader.getRun(runId);
      assert.deepEqual(state?.cost, { reserved: 0, spent });
      assert.ok(spent <= 100, `spent ${spent}`);
      console.log(`COST ${ready.length} of 60 READY, spent ${spent}, ${samples.length} reads`);
      assert.deepEqual(listed.run.cost, state?.cost);
      assert.deepEqual(state?.budget, { calls: 1_000, perTool: {}, cost: 100 });
      assert.equal(state?.used.calls, ready.length, "refused calls are not counted");
      // Every instance reads the same.
      for (const store of stores) assert.deepEqual((await store.getRun(runId))?.cost, state?.cost);
      const ended = await stores[2]!.endRun({ runId, now: Date.now() });
      assert.ok(ended.ok);
      assert.deepEqual(ended.run.cost, state?.cost);
      const exported = await stores[1]!.exportRun(runId);
      assert.deepEqual(exported?.run.cost, state?.cost);
      assert.deepEqual(exported?.calls.map((call) => call.record), records);
    }, engine === "gopher-lua" ? { engine } : {});
  });
}

Deno.test("60 concurrent begins of cost 5 from three stores against a budget of 100: exactly 20 begin", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const stores = storesOf(fixture);
    const runId = "run-cost-race";
    await startCostRun(stores[0]!, runId, 100, 1_000);
    const results = await Promise.all(
      Array.from(
        { length: 60 },
        (_, i) => stores[i % 3]!.begin(beginRequest(runId, `call_${i}`, 5)),
      ),
    );
    assert.equal(results.filter((r) => r.ok).length, 20);
    for (const r of results) if (!r.ok) assert.equal(r.code, "BUDGET_EXHAUSTED");
    const state = await stores[1]!.getRun(runId);
    assert.deepEqual(state?.cost, { reserved: 100, spent: 0 });
    assert.equal(state?.used.calls, 20);
    const listed = await stores[2]!.listCalls(runId);
    assert.equal(listed?.calls.length, 20);
    assert.deepEqual(listed?.run.cost, state?.cost);
  });
});

Deno.test("a call begun and never completed keeps its reservation held, also once its record expired", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const [store, other] = storesOf(fixture);
    const runId = "run-cost-crashed";
    await startCostRun(store!, runId, 10, 100);
    // The boundary that began it is gone: no complete ever comes. Its record lives 300 ms.
    const begun = await store!.begin(beginRequest(runId, "call_crashed", 7, 300));
    assert.ok(begun.ok);
    assert.deepEqual(begun.record.cost, { reserved: 7, spent: null });
    assert.deepEqual((await other!.getRun(runId))?.cost, { reserved: 7, spent: 0 });
    assert.deepEqual(
      await other!.begin(beginRequest(runId, "call_next", 4)),
      { ok: false, code: "BUDGET_EXHAUSTED" },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await other!.get(runId, "call_crashed"), null, "the record expired");
    assert.deepEqual((await other!.getRun(runId))?.cost, { reserved: 7, spent: 0 });
    const listed = await other!.listCalls(runId);
    assert.deepEqual(listed?.calls.map((call) => call.status), ["EXPIRED"]);
    assert.deepEqual(listed?.run.cost, { reserved: 7, spent: 0 });
    assert.deepEqual(
      await other!.begin(beginRequest(runId, "call_next", 4)),
      { ok: false, code: "BUDGET_EXHAUSTED" },
      "never refunded",
    );
    // What is left still fits, and a call without a cost is never refused by the budget.
    assert.equal((await other!.begin(beginRequest(runId, "call_small", 3))).ok, true);
    const { cost: _cost, ...free } = beginRequest(runId, "call_free", 0);
    assert.equal((await other!.begin(free)).ok, true);
    assert.deepEqual((await store!.getRun(runId))?.cost, { reserved: 10, spent: 0 });
    // A run without a cost budget has no cost until a call with one begins.
    const plain = await startStoreRun(store!, "run-cost-plain");
    assert.equal("cost" in plain, false);
    assert.equal("cost" in (await other!.getRun("run-cost-plain"))!, false);
    assert.equal((await other!.begin({ ...free, runId: "run-cost-plain" })).ok, true);
    assert.equal("cost" in (await other!.getRun("run-cost-plain"))!, false);
    assert.ok((await other!.begin(beginRequest("run-cost-plain", "call_priced", 9))).ok);
    assert.deepEqual((await store!.getRun("run-cost-plain"))?.cost, { reserved: 9, spent: 0 });
    assert.equal("cost" in (await store!.getRun("run-cost-plain"))!.budget, false);
  });
});

/**
 * Runs one complete with `commands` taken away from the user the endpoint runs as (an ACL), so
 * its script fails at the first of them, after the writes before it (see upstash_quota_test.ts).
 */
async function cutOff(
  fixture: UpstashFixture,
  commands: string[],
  complete: () => Promise<unknown>,
): Promise<void> {
  const denied = commands.map((command) => `-${command}`);
  assert.equal(await fixture.direct(["ACL", "SETUSER", "default", ...denied]), "OK");
  try {
    await assert.rejects(complete());
  } finally {
    assert.equal(await fixture.direct(["ACL", "SETUSER", "default", "+@all"]), "OK");
  }
}

Deno.test("a complete with a cost cut off at any of its writes never leaves the run holding less than its calls spent", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const runId = "run-cost-cut";
    await startCostRun(store, runId, 1_000, 100);
    const READY = {
      status: "READY" as const,
      evidence: "EVIDENCE_FOUND" as const,
      rawJson: "{}",
      agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"s","content":1}',
    };
    /** Begins a call of cost 10; returns its complete with `spent`. */
    const begun = async (toolCallId: string, spent: number) => {
      const request = beginRequest(runId, toolCallId, 10);
      assert.ok((await store.begin(request)).ok);
      return () =>
        store.complete({
          runId,
          toolCallId,
          attemptId: request.attemptId,
          outcome: READY,
          now: Date.now(),
          spent,
        });
    };
    const cost = async () => (await store.getRun(runId))!.cost!;
    const total = async () => {
      const { reserved, spent } = await cost();
      return reserved + spent;
    };

    // Cut at the append: nothing written, the reservation held; the repeat settles it exactly.
    const appendCut = await begun("call_append", 14);
    await cutOff(fixture, ["rpushx", "rpush"], appendCut);
    assert.deepEqual(await cost(), { reserved: 10, spent: 0 });
    assert.ok((await appendCut()).ok);
    assert.deepEqual(await cost(), { reserved: 0, spent: 14 });

    // An excess cut before it is counted: settled as its reservation, as much as the run held
    // for it; the repeat counts the excess once.
    const excessCut = await begun("call_excess", 14);
    await cutOff(fixture, ["hincrby"], excessCut);
    assert.equal(await total(), 14 + 10);
    assert.ok((await excessCut()).ok);
    assert.deepEqual(await cost(), { reserved: 0, spent: 28 });

    // An excess counted, the record cut: the repeat counts it again (over, never under).
    const recordCut = await begun("call_record", 14);
    await cutOff(fixture, ["hset"], recordCut);
    assert.deepEqual(await cost(), { reserved: 0, spent: 42 });
    assert.equal((await store.get(runId, "call_record"))?.status, "PROJECTING");
    assert.ok((await recordCut()).ok);
    assert.deepEqual(await cost(), { reserved: 0, spent: 46 });

    // A refund cut after the record: lost, so the run counts the reservation, never less.
    const refundCut = await begun("call_refund", 3);
    await cutOff(fixture, ["hincrby"], refundCut);
    assert.deepEqual((await store.get(runId, "call_refund"))?.cost, { reserved: 10, spent: 3 });
    assert.deepEqual(await cost(), { reserved: 0, spent: 56 });
    const again = await refundCut(); // the record is complete: a repeat changes nothing
    assert.ok(again.ok);
    assert.deepEqual(await cost(), { reserved: 0, spent: 56 });

    // Whatever was cut, the run never holds less than its records spent.
    const listed = await store.listCalls(runId);
    let spent = 0;
    for (const { toolCallId } of listed!.calls) {
      spent += (await store.get(runId, toolCallId))!.cost!.spent!;
    }
    assert.equal(spent, 14 + 14 + 14 + 3);
    assert.ok((await cost()).spent >= spent);
  });
});
