/**
 * A complete or a run start the store failed (it threw) is tried again with the same attempt,
 * within `storeRetryMs`, on both stores: the outcome a tool produced is kept, a start whose
 * answer was lost answers its run. A refusal, or a value the store refuses, is never tried again;
 * past the window the call is STORE_UNAVAILABLE and its record stays PROJECTING.
 */
import assert from "node:assert/strict";
import {
  type BoundaryResult,
  defineTool,
  ToolBoundary,
  type ToolBoundaryOptions,
} from "../../src/mod.ts";
import { MAX_TIMER_MS } from "../../src/harness/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { createFakeToolkit } from "../../src/testing/fakes.ts";
import { STORES, uniqueId } from "../support/stores.ts";
import { withSharedUpstashFixture } from "../support/upstash_fixture.ts";

/**
 * How a store write fails, try by try: `before` throws without writing, `after` writes and then
 * throws (its answer lost), `refuse` answers RECORD_EXPIRED, `type` throws a TypeError.
 */
type Failure = "before" | "after" | "refuse" | "type";

/** `store`, with `method` failing its first tries as `plan` says (then `always`, if given). */
function failing(
  store: Store,
  method: "complete" | "startRun",
  plan: readonly Failure[],
  always?: Failure,
): { store: Store; tries: () => number } {
  let tries = 0;
  const wrapped = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (key !== method) return typeof value === "function" ? value.bind(target) : value;
      return async (request: unknown) => {
        const failure = plan[tries++] ?? always;
        if (failure === "before") throw new Error("store unreachable");
        if (failure === "type") throw new TypeError("store refused the value");
        if (failure === "refuse") return { ok: false, code: "RECORD_EXPIRED" };
        const answer = await (value as (r: unknown) => Promise<unknown>).call(target, request);
        if (failure === "after") throw new Error("answer lost");
        return answer;
      };
    },
  });
  return { store: wrapped, tries: () => tries };
}

function boundaryOn(store: Store, options: Partial<ToolBoundaryOptions> = {}) {
  const kit = createFakeToolkit();
  return { kit, boundary: new ToolBoundary({ store, tools: kit.tools, ...options }) };
}

const code = (result: BoundaryResult) => result.status === "READY" ? "READY" : result.code;

for (const { name, open } of STORES) {
  /** One call of `fake_success` on `store` wrapped to fail its completes as `plan` says. */
  const callWith = async (
    plan: readonly Failure[],
    always?: Failure,
    options: Partial<ToolBoundaryOptions> = {},
  ) => {
    const opened = await open();
    try {
      const { store, tries } = failing(opened.store, "complete", plan, always);
      const { kit, boundary } = boundaryOn(store, options);
      const run = await boundary.startRun({ budget: { calls: 5 } });
      const result = await boundary.invoke(run, {
        toolCallId: "call_1",
        runId: run.runId,
        toolName: kit.names.success,
        input: { query: "disk" },
      });
      const record = await boundary.inspect(run.runId, "call_1");
      return { result, record, tries: tries(), executed: kit.counts.execute[kit.names.success] };
    } finally {
      await opened.close();
    }
  };

  Deno.test(`${name}: a complete that threw before it wrote is tried again: READY, recorded, the tool ran once`, async () => {
    const { result, record, tries, executed } = await callWith(["before", "before"]);
    assert.equal(code(result), "READY");
    assert.equal(record?.status, "READY");
    assert.deepEqual(record?.agentResult, {
      evidence: "EVIDENCE_FOUND",
      scope: 'fake index, query "disk"',
      content: result.status === "READY" ? result.content : null,
    });
    assert.deepEqual([tries, executed], [3, 1]);
  });

  Deno.test(`${name}: a complete that wrote but lost its answer is tried again with the same attempt: the stored record, READY`, async () => {
    const { result, record, tries, executed } = await callWith(["after"]);
    assert.equal(code(result), "READY");
    assert.equal(record?.status, "READY");
    assert.deepEqual([tries, executed], [2, 1]);
  });

  Deno.test(`${name}: a complete still failing when storeRetryMs is over is STORE_UNAVAILABLE, its record PROJECTING`, async () => {
    const { result, record, tries, executed } = await callWith([], "before", {
      storeRetryMs: 300,
    });
    assert.equal(code(result), "STORE_UNAVAILABLE");
    assert.equal(record?.status, "PROJECTING");
    assert.ok(tries >= 2, `tries: ${tries}`);
    assert.equal(executed, 1);
  });

  Deno.test(`${name}: with storeRetryMs 0, a complete that threw is tried once`, async () => {
    const { result, record, tries } = await callWith(["before"], undefined, { storeRetryMs: 0 });
    assert.equal(code(result), "STORE_UNAVAILABLE");
    assert.equal(record?.status, "PROJECTING");
    assert.equal(tries, 1);
  });

  Deno.test(`${name}: a complete the store refused, or whose values it refused, is not tried again`, async () => {
    const refused = await callWith(["refuse"]);
    assert.deepEqual([code(refused.result), refused.tries], ["RECORD_EXPIRED", 1]);
    const typed = await callWith(["type"]);
    assert.deepEqual([code(typed.result), typed.tries], ["STORE_UNAVAILABLE", 1]);
    assert.equal(typed.record?.status, "PROJECTING");
  });

  Deno.test(`${name}: a run start that wrote but lost its answer is tried again with the same attempt: one run`, async () => {
    const opened = await open();
    try {
      const { store, tries } = failing(opened.store, "startRun", ["after", "before"]);
      const { boundary } = boundaryOn(store);
      const runId = uniqueId("run");
      const run = await boundary.startRun({ runId, budget: { calls: 3 } });
      assert.equal(tries(), 3);
      const state = await opened.store.getRun(runId);
      assert.deepEqual(
        [state?.runId, state?.startedAt, state?.deadline],
        [run.runId, run.startedAt, run.deadline],
      );
    } finally {
      await opened.close();
    }
  });
}

Deno.test("storeRetryMs must be an integer from 0 to MAX_TIMER_MS", () => {
  for (const storeRetryMs of [-1, 1.5, Number.NaN, MAX_TIMER_MS + 1, "5" as unknown as number]) {
    assert.throws(
      () => new ToolBoundary({ tools: [], storeRetryMs }),
      RangeError,
      String(storeRetryMs),
    );
  }
  for (const storeRetryMs of [0, MAX_TIMER_MS]) new ToolBoundary({ tools: [], storeRetryMs });
});

Deno.test("UpstashStore: a complete whose REST answer was dropped after it ran is tried again and the outcome kept", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    // No retries of the client's own: the boundary's are the ones under test.
    const store = new UpstashStore({ redis: fixture.createRedis({ retry: false }), batch: false });
    let executed = 0;
    let drop = false;
    const lookup = defineTool({
      name: "lookup",
      readOnly: true,
      execute: () => {
        executed++;
        // Begin has answered: the next request is the complete, run and its answer dropped.
        if (drop) fixture.endpoint.dropNext(1);
        return { found: true };
      },
      project: () => ({ evidence: "EVIDENCE_FOUND", scope: "the table", content: "found" }),
    });
    const boundary = new ToolBoundary({ store, tools: [lookup] });
    const run = await boundary.startRun({ budget: { calls: 5 } });
    const envelope = (toolCallId: string) => ({
      toolCallId,
      runId: run.runId,
      toolName: "lookup",
      input: {},
    });
    // Redis loads each script on its first use: not what is measured.
    assert.equal(code(await boundary.invoke(run, envelope("call_warm"))), "READY");
    drop = true;
    executed = 0;
    fixture.endpoint.reset();
    const result = await boundary.invoke(run, envelope("call_1"));
    // The begin, the complete whose answer was dropped, and the complete tried again.
    assert.equal(fixture.endpoint.requests, 3);
    assert.equal(code(result), "READY");
    const record = await boundary.inspect(run.runId, "call_1");
    assert.equal(record?.status, "READY");
    assert.deepEqual(record?.agentResult, {
      evidence: "EVIDENCE_FOUND",
      scope: "the table",
      content: "found",
    });
    assert.equal(executed, 1);
  });
});
