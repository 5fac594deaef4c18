import assert from "node:assert/strict";
import fc from "fast-check";
import { defineTool, ToolBoundary } from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import { isSafeToolCallId, type Store } from "@tool-boundary/core/store";
import { coreOnly, STORES } from "../../../tests/support/stores.ts";
import {
  invokeOnce,
  MAX_PROBES,
  MAX_STEP_TOOL_CALL_ID_LENGTH,
  probeToolCallId,
  RetryLaterError,
  stepToolCallId,
} from "../mod.ts";

Deno.test("stepToolCallId: safe parts joined, anything else hashed, always within the core's allow-list", async () => {
  assert.equal(await stepToolCallId(["wf-1", "step_2", "0"]), "wf-1:step_2:0");
  assert.equal(await stepToolCallId(["..", "."]), "..:."); // not dots only: the core takes it
  const cases: string[][] = [
    ["wf", "a:b"], // the separator inside a part
    ["wf:a", "b"],
    ["wf", ""],
    ["."],
    ["wf", "x".repeat(MAX_STEP_TOOL_CALL_ID_LENGTH)],
    ["wf", "{braces}", "spaces and ünïcode", "\u0000"],
    ["y".repeat(1_000)],
  ];
  const ids = new Set<string>();
  for (const parts of cases) {
    const id = await stepToolCallId(parts);
    assert.ok(isSafeToolCallId(id), `${JSON.stringify(parts)} -> ${id}`);
    assert.ok(id.length <= MAX_STEP_TOOL_CALL_ID_LENGTH, id);
    assert.match(id, /::[A-Za-z0-9_-]{43}$/);
    assert.ok(isSafeToolCallId(probeToolCallId(id, MAX_PROBES)));
    assert.equal(await stepToolCallId(parts), id, "the same parts, the same ID");
    ids.add(id);
  }
  assert.equal(ids.size, cases.length, "different parts, different IDs");
  // The longest joined ID still fits, and its probes too.
  const longest = await stepToolCallId(["z".repeat(MAX_STEP_TOOL_CALL_ID_LENGTH)]);
  assert.equal(longest.length, MAX_STEP_TOOL_CALL_ID_LENGTH);
  assert.ok(isSafeToolCallId(probeToolCallId(longest, MAX_PROBES)));
});

Deno.test("stepToolCallId never gives two distinct step identities one ID, nor a step a probe's ID", async () => {
  const part = fc.oneof(
    fc.constantFrom("", ".", "..", ":", "::", "p1", "wf", "a:b", "a", "b"),
    fc.stringMatching(/^[A-Za-z0-9_.:-]{0,12}$/),
    fc.string({ unit: "binary", maxLength: 8 }),
    fc.string({ minLength: 90, maxLength: 130 }),
    fc.string({ minLength: MAX_STEP_TOOL_CALL_ID_LENGTH - 2, maxLength: 260 }),
  );
  // Arrays with holes too (a hole is `null` in the selector's JSON: no part is `null`).
  const identity = fc.oneof(
    fc.array(part, { minLength: 1, maxLength: 5 }),
    fc.sparseArray(part, { minNumElements: 1, maxLength: 5 }),
  );
  const identities = fc.uniqueArray(identity, {
    minLength: 2,
    maxLength: 12,
    selector: (parts) => JSON.stringify(parts),
  });
  await fc.assert(
    fc.asyncProperty(identities, async (all) => {
      const ids: string[] = [];
      for (const parts of all) {
        if (Object.keys(parts).length < parts.length) {
          await assert.rejects(stepToolCallId(parts), TypeError, JSON.stringify(parts));
        } else {
          ids.push(await stepToolCallId(parts));
        }
      }
      assert.equal(new Set(ids).size, ids.length, JSON.stringify(all));
      for (const id of ids) {
        assert.ok(isSafeToolCallId(id), id);
        for (const n of [1, 2, MAX_PROBES]) {
          assert.ok(!ids.includes(probeToolCallId(id, n)), `${id} ::p${n}`);
        }
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("stepToolCallId refuses an array with holes, and reads each part once", async () => {
  // ["wf", , "p1"] joined is "wf::p1": the ID of the first probe of step ["wf"].
  for (const parts of [["wf", , "p1"], [, "a"], ["a", ,], new Array(2)]) {
    await assert.rejects(stepToolCallId(parts as never), TypeError, JSON.stringify(parts));
  }
  // A Proxy whose parts change as they are read, a getter that throws, and an array's own
  // toJSON: the ID is that of the values read once, or a TypeError.
  let reads = 0;
  const shifting = new Proxy(["wf", "look up"], {
    get: (target, key) => key === "1" ? `look up ${reads++}` : Reflect.get(target, key) as unknown,
  });
  assert.equal(await stepToolCallId(shifting), await stepToolCallId(["wf", "look up 0"]));
  assert.equal(reads, 1);
  const throwing = ["wf"];
  Object.defineProperty(throwing, 1, {
    get: () => {
      throw new Error("no");
    },
    enumerable: true,
  });
  await assert.rejects(stepToolCallId(throwing), TypeError);
  const masked = Object.assign(["wf", "look up"], { toJSON: () => ["wf", "other"] });
  assert.equal(await stepToolCallId(masked), await stepToolCallId(["wf", "look up"]));
});

Deno.test("stepToolCallId and probeToolCallId refuse what is not a step identity or a probe number", async () => {
  for (const parts of [[], [1], ["a", null], "a", null, { length: 1, 0: "a" }]) {
    await assert.rejects(stepToolCallId(parts as never), TypeError);
  }
  for (const n of [0, -1, 1.5, MAX_PROBES + 1, NaN]) {
    assert.throws(() => probeToolCallId("a", n), RangeError);
  }
});

/**
 * A boundary over `store` whose tool counts its runs and, while `hold` is set, waits for it; a
 * key of "fail" makes it throw.
 */
function lookups(
  store: Store,
  onDuplicate: "refuse" | "replay" = "replay",
  clock: () => number = Date.now,
) {
  const state: { executions: number; hold: Promise<void> | null } = { executions: 0, hold: null };
  const lookup = defineTool({
    name: "lookup",
    readOnly: true,
    execute: async (input) => {
      state.executions++;
      if (state.hold !== null) await state.hold;
      if (input.key === "fail") throw new Error("the table is gone");
      return { key: String(input.key) };
    },
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "the table", content: raw.key }),
  });
  return { boundary: new ToolBoundary({ store, tools: [lookup], onDuplicate, clock }), state };
}

const envelopeOf = (runId: string, toolCallId = "s:1") => ({
  toolCallId,
  runId,
  toolName: "lookup",
  input: { key: "a" },
});

const unknownOutcome = (toolCallId: string) => (error: unknown) =>
  error instanceof RetryLaterError && error.code === "OUTCOME_UNKNOWN" &&
  error.toolCallId === toolCallId;

for (const { name, open } of STORES) {
  Deno.test(`invokeOnce (${name}): "retry" backs off while the first attempt runs, then replays its record`, async () => {
    const { store, close } = await open();
    try {
      const { boundary, state } = lookups(store);
      const run = await boundary.startRun({ runId: `wf-${crypto.randomUUID()}` });
      const envelope = envelopeOf(run.runId);
      const held = Promise.withResolvers<void>();
      state.hold = held.promise;
      const first = invokeOnce(boundary, run, envelope, { onUnknown: "retry" });
      while (state.executions === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const unknowns: string[] = [];
      await assert.rejects(
        invokeOnce(boundary, run, envelope, {
          onUnknown: "retry",
          onOutcomeUnknown: ({ toolCallId, action }) =>
            void unknowns.push(`${toolCallId} ${action}`),
        }),
        unknownOutcome("s:1"),
      );
      assert.deepEqual(unknowns, ["s:1 retry"]);
      held.resolve();
      const result = await first;
      assert.deepEqual(await invokeOnce(boundary, run, envelope, { onUnknown: "retry" }), {
        ...result,
        replayed: true,
      });
      assert.equal(state.executions, 1);
      assert.equal((await boundary.listCalls(run.runId)).length, 1);
    } finally {
      await close();
    }
  });

  Deno.test(`invokeOnce (${name}): "probe" waits out probeAfterMs, then asks again under ::p1, ::p2, up to maxProbes`, async () => {
    const { store, close } = await open();
    try {
      const { boundary, state } = lookups(store);
      const run = await boundary.startRun({ runId: `wf-${crypto.randomUUID()}` });
      const envelope = envelopeOf(run.runId);
      const held = Promise.withResolvers<void>();
      state.hold = held.promise;
      // Two attempts that die while the tool runs: the call and its first probe stay PROJECTING.
      const dying = [
        boundary.invoke(run, envelope),
        boundary.invoke(run, { ...envelope, toolCallId: probeToolCallId("s:1", 1) }),
      ];
      while (state.executions < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      const createdAt = (await boundary.inspect(run.runId, "s:1"))!.createdAt;
      // Too soon: the first attempt may still answer.
      let now = createdAt + 999;
      const options = { onUnknown: "probe", probeAfterMs: 1_000, clock: () => now } as const;
      await assert.rejects(invokeOnce(boundary, run, envelope, options), unknownOutcome("s:1"));
      // Old enough, but one probe allowed and it is PROJECTING too.
      now = createdAt + 60_000;
      await assert.rejects(
        invokeOnce(boundary, run, envelope, { ...options, maxProbes: 1 }),
        unknownOutcome("s:1::p1"),
      );
      assert.equal(state.executions, 2);
      state.hold = null;
      const unknowns: string[] = [];
      const probed = await invokeOnce(boundary, run, envelope, {
        ...options,
        onOutcomeUnknown: ({ toolCallId, action }) => void unknowns.push(`${toolCallId} ${action}`),
      });
      assert.deepEqual(unknowns, ["s:1 probe", "s:1::p1 probe"]);
      assert.equal(probed.toolCallId, "s:1::p2");
      assert.equal(probed.status === "READY" && probed.content, "a");
      assert.equal(state.executions, 3);
      assert.deepEqual(await invokeOnce(boundary, run, envelope, options), {
        ...probed,
        replayed: true,
      });
      assert.equal(state.executions, 3);
      held.resolve();
      await Promise.all(dying);
      assert.deepEqual((await boundary.listCalls(run.runId)).map((call) => call.toolCallId), [
        "s:1",
        "s:1::p1",
        "s:1::p2",
      ]);
    } finally {
      await close();
    }
  });

  Deno.test(`invokeOnce (${name}): a call begun before the run ended or passed its deadline gets its recorded outcome, one never begun the run's refusal`, async () => {
    const { store, close } = await open();
    try {
      let now = Date.now();
      const { boundary, state } = lookups(store, "replay", () => now);
      const run = await boundary.startRun({ runId: `wf-${crypto.randomUUID()}`, ttlMs: 60_000 });
      const ready = envelopeOf(run.runId, "s:ready");
      const failed = { ...envelopeOf(run.runId, "s:failed"), input: { key: "fail" } };
      const inFlight = envelopeOf(run.runId, "s:in-flight");
      const never = envelopeOf(run.runId, "s:never");
      const retry = { onUnknown: "retry" } as const;
      const first = await invokeOnce(boundary, run, ready, retry);
      assert.equal(first.status, "READY");
      const error = await invokeOnce(boundary, run, failed, retry);
      assert.equal(error.status === "ERROR" && error.code, "EXECUTION_FAILED");
      const held = Promise.withResolvers<void>();
      state.hold = held.promise;
      const dying = boundary.invoke(run, inFlight);
      while (state.executions < 3) await new Promise((resolve) => setTimeout(resolve, 5));

      now = run.deadline; // the deadline passed
      assert.deepEqual(await invokeOnce(boundary, run, ready, retry), { ...first, replayed: true });
      assert.deepEqual(await invokeOnce(boundary, run, failed, retry), {
        ...error,
        replayed: true,
      });
      await assert.rejects(
        invokeOnce(boundary, run, inFlight, retry),
        unknownOutcome("s:in-flight"),
      );
      assert.deepEqual(await invokeOnce(boundary, run, never, retry), {
        status: "ERROR",
        toolCallId: "s:never",
        code: "DEADLINE_EXCEEDED",
        message: "The run's deadline has passed.",
      });

      now = run.deadline - 1;
      await boundary.endRun(run); // the run ended
      assert.deepEqual(await invokeOnce(boundary, run, ready, retry), { ...first, replayed: true });
      assert.deepEqual(await invokeOnce(boundary, run, failed, retry), {
        ...error,
        replayed: true,
      });
      const refused = await invokeOnce(boundary, run, never, retry);
      assert.equal(refused.status === "ERROR" && refused.code, "RUN_INACTIVE");
      // The call in flight at the end completes, and its retried step gets what it recorded.
      held.resolve();
      const completed = await dying;
      assert.equal(completed.status, "READY");
      assert.deepEqual(await invokeOnce(boundary, run, inFlight, retry), {
        ...completed,
        replayed: true,
      });
      // Another request under a recorded ID is still a conflict, not the run's refusal.
      const other = await invokeOnce(boundary, run, { ...ready, input: { key: "b" } }, retry);
      assert.equal(other.status === "ERROR" && other.code, "TOOL_CALL_CONFLICT");
      assert.equal(state.executions, 3);
      assert.deepEqual(
        (await boundary.listCalls(run.runId)).map((call) => call.toolCallId),
        ["s:ready", "s:failed", "s:in-flight"],
      );
    } finally {
      await close();
    }
  });
}

Deno.test("invokeOnce: refusals are the step's value, a store that fails is a RetryLaterError", async () => {
  const { boundary } = lookups(new MemoryStore());
  const run = await boundary.startRun({ budget: { calls: 1 } });
  const refused = await invokeOnce(boundary, run, { ...envelopeOf(run.runId), input: "[]" }, {
    onUnknown: "retry",
  });
  assert.equal(refused.status === "ERROR" && refused.code, "INVALID_INPUT");

  const failing = new MemoryStore();
  failing.begin = () => Promise.reject(new Error("the store is down"));
  const down = lookups(failing);
  const downRun = await down.boundary.startRun();
  await assert.rejects(
    invokeOnce(down.boundary, downRun, envelopeOf(downRun.runId), { onUnknown: "retry" }),
    (error) => error instanceof RetryLaterError && error.code === "STORE_UNAVAILABLE",
  );
  assert.equal(down.state.executions, 0);
});

Deno.test("invokeOnce: a boundary that refuses duplicates, and bad options, are programming errors", async () => {
  const { boundary, state } = lookups(new MemoryStore(), "refuse");
  const run = await boundary.startRun();
  const envelope = envelopeOf(run.runId);
  await invokeOnce(boundary, run, envelope, { onUnknown: "retry" });
  await assert.rejects(invokeOnce(boundary, run, envelope, { onUnknown: "retry" }), TypeError);
  assert.equal(state.executions, 1);
  for (
    const options of [{ onUnknown: "later" }, { onUnknown: "probe", maxProbes: 0 }, {
      onUnknown: "probe",
      probeAfterMs: -1,
    }]
  ) {
    await assert.rejects(invokeOnce(boundary, run, envelope, options as never), Error);
  }
  assert.equal(state.executions, 1);
});

Deno.test("invokeOnce refuses at its first call a boundary whose store has no CallIndex, before the tool runs", async () => {
  let executions = 0;
  const lookup = defineTool({
    name: "lookup",
    readOnly: true,
    execute: () => (executions++, { total: 42 }),
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "billing", content: raw.total }),
  });
  const memory = new MemoryStore();
  const boundary = new ToolBoundary({
    store: coreOnly(memory),
    tools: [lookup],
    onDuplicate: "replay",
  });
  const run = await boundary.startRun({ runId: "wf-core" });
  const envelope = { toolCallId: "wf-core:0", runId: run.runId, toolName: "lookup", input: {} };
  await assert.rejects(invokeOnce(boundary, run, envelope, { onUnknown: "retry" }), {
    name: "TypeError",
    message: "Cannot invoke once: the store has no CallIndex (lookupCall, listCalls)",
  });
  assert.equal(executions, 0);
  // The same boundary over the whole MemoryStore: the call runs.
  const whole = new ToolBoundary({ store: memory, tools: [lookup], onDuplicate: "replay" });
  const result = await invokeOnce(whole, run, envelope, { onUnknown: "retry" });
  assert.equal(result.status, "READY");
  assert.equal(executions, 1);
});
