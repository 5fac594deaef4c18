/**
 * Through the boundary: cost budgets. A tool's `cost` is reserved before it runs and settled
 * after it, in the store's begin and complete; what does not fit is refused before anything
 * runs, and tools without a cost see no change.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import type { AnyToolDefinition, ExecuteContext } from "../../core/tool.ts";
import type { BoundaryResult, RunContext, ToolCallEnvelope } from "../../core/types.ts";
import { BOUNDARY_RECORD_TTL_MS, type BoundaryContext, type Suite, uniqueId } from "./context.ts";
import { assertAbsent, assertError } from "./helpers.ts";

/** What a costed tool does with its input `{ settle?, fail? }`, and how often it ran. */
interface CostedTool {
  tool: AnyToolDefinition;
  runs: () => number;
}

/**
 * A tool of cost `cost` (a number or a function of the input) that settles `input.settle` when
 * given and then throws when `input.fail` is set.
 */
function costedTool(name: string, cost: AnyToolDefinition["cost"]): CostedTool {
  let runs = 0;
  const tool: AnyToolDefinition = {
    name,
    readOnly: true,
    ...(cost === undefined ? {} : { cost }),
    execute: (input: { settle?: number; fail?: boolean }, ctx: ExecuteContext) => {
      runs++;
      if (input.settle !== undefined) ctx.settle(input.settle);
      if (input.fail === true) throw new Error("upstream failed");
      return { ok: true };
    },
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: name, content: "done" }),
  };
  return { tool, runs: () => runs };
}

/** A boundary on the case's store with the given tools. */
function boundaryWith(ctx: BoundaryContext, ...tools: AnyToolDefinition[]): ToolBoundary {
  return new ToolBoundary({
    store: ctx.store,
    tools,
    clock: ctx.clock,
    recordTtlMs: BOUNDARY_RECORD_TTL_MS,
  });
}

/** Starts a run with a cost budget. */
function costRun(boundary: ToolBoundary, cost: number, calls = 100): Promise<RunContext> {
  return boundary.startRun({ runId: uniqueId("run"), ttlMs: 600_000, budget: { calls, cost } });
}

/** A call of cost 30 (budget 50) held mid-way in its tool, and a second boundary on the store. */
export interface HeldCall {
  /** The run. */
  runId: string;
  /** Another boundary on the same store, with the same tool. */
  second: ToolBoundary;
  /** The envelope of a call of the held tool in the run. */
  envelope: (toolCallId: string) => ToolCallEnvelope;
  /** Lets the held tool return. */
  release: () => void;
  /** The held call's result, once released. */
  pending: Promise<BoundaryResult>;
}

/**
 * Starts `call_held` of a tool of cost 30 in a run with a cost budget of 50 and answers once its
 * tool runs and waits: as another replica sees a call whose boundary crashed mid-way.
 */
export async function heldCall(ctx: BoundaryContext): Promise<HeldCall> {
  let release!: () => void;
  let started!: () => void;
  const running = new Promise<void>((resolve) => started = resolve);
  const gate = new Promise<void>((resolve) => release = resolve);
  const tool: AnyToolDefinition = {
    name: "slow",
    readOnly: true,
    cost: 30,
    execute: async () => {
      started();
      await gate;
      return { ok: true };
    },
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: "slow", content: "done" }),
  };
  const first = boundaryWith(ctx, tool);
  const run = await costRun(first, 50);
  const envelope = (toolCallId: string) => ({
    runId: run.runId,
    toolCallId,
    toolName: "slow",
    input: {},
  });
  const pending = first.invoke(run, envelope("call_held"));
  await running;
  return { runId: run.runId, second: boundaryWith(ctx, tool), envelope, release, pending };
}

/** Registers the cost budget cases through a boundary. */
export function boundaryCostCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "a tool's cost is reserved before it runs; what it settles is spent and the rest given back",
    async (ctx) => {
      const { tool, runs } = costedTool("priced", 5);
      const boundary = boundaryWith(ctx, tool);
      const run = await costRun(boundary, 20);
      const invoke = (toolCallId: string, input: object) =>
        boundary.invoke(run, { runId: run.runId, toolCallId, toolName: "priced", input });
      assert.equal((await invoke("call_settled", { settle: 3 })).status, "READY");
      assert.equal((await invoke("call_unsettled", {})).status, "READY");
      assert.deepEqual((await ctx.store.get(run.runId, "call_settled"))?.cost, {
        reserved: 5,
        spent: 3,
      });
      assert.deepEqual((await ctx.store.get(run.runId, "call_unsettled"))?.cost, {
        reserved: 5,
        spent: 5,
      });
      assert.deepEqual((await boundary.getRun(run.runId))?.budget.cost, 20);
      assert.deepEqual((await ctx.store.getRun(run.runId))?.cost, { reserved: 0, spent: 8 });
      assert.equal(runs(), 2);
    },
  );

  suite.test(
    "a cost that does not fit is BUDGET_EXHAUSTED: the tool does not run and nothing is recorded",
    async (ctx) => {
      const { tool, runs } = costedTool("priced", 5);
      const boundary = boundaryWith(ctx, tool);
      const run = await costRun(boundary, 8);
      const invoke = (toolCallId: string) =>
        boundary.invoke(run, { runId: run.runId, toolCallId, toolName: "priced", input: {} });
      assert.equal((await invoke("call_fits")).status, "READY");
      assertError(await invoke("call_over"), "BUDGET_EXHAUSTED");
      assert.equal(runs(), 1);
      await assertAbsent(ctx, run.runId, "call_over");
      assert.deepEqual((await ctx.store.getRun(run.runId))?.cost, { reserved: 0, spent: 5 });
      assert.equal((await ctx.store.getRun(run.runId))?.used.calls, 1, "a refusal takes no call");
    },
  );

  suite.test(
    "excess is spent and kept: later calls are refused until what is left covers them",
    async (ctx) => {
      const big = costedTool("big", 4);
      const small = costedTool("small", 1);
      const boundary = boundaryWith(ctx, big.tool, small.tool);
      const run = await costRun(boundary, 10);
      const invoke = (toolCallId: string, toolName: string, input: object = {}) =>
        boundary.invoke(run, { runId: run.runId, toolCallId, toolName, input });
      assert.equal((await invoke("call_over_spent", "big", { settle: 9 })).status, "READY");
      assert.deepEqual((await ctx.store.get(run.runId, "call_over_spent"))?.cost, {
        reserved: 4,
        spent: 9,
      });
      assertError(await invoke("call_big", "big"), "BUDGET_EXHAUSTED");
      assert.equal((await invoke("call_small", "small")).status, "READY");
      assertError(await invoke("call_small_2", "small"), "BUDGET_EXHAUSTED");
      assert.deepEqual((await ctx.store.getRun(run.runId))?.cost, { reserved: 0, spent: 10 });
      assert.equal(big.runs() + small.runs(), 2);
    },
  );

  suite.test(
    "a cost of the input: each call reserves its own; a bad value or a throw is INVALID_COST and runs nothing",
    async (ctx) => {
      let seen: unknown = null;
      const tool: AnyToolDefinition = {
        name: "metered",
        readOnly: true,
        cost: (input: { tokens?: unknown; crash?: boolean }) => {
          if (input.crash === true) throw new Error("no price");
          const tokens = input.tokens;
          (input as { tokens?: unknown }).tokens = "changed by the cost function";
          return tokens as number;
        },
        execute: (input: { tokens?: unknown }) => {
          seen = input.tokens;
          return { ok: true };
        },
        project: () => ({ evidence: "EVIDENCE_FOUND", scope: "metered", content: "done" }),
      };
      const boundary = boundaryWith(ctx, tool);
      const run = await costRun(boundary, 100);
      const invoke = (toolCallId: string, input: object) =>
        boundary.invoke(run, { runId: run.runId, toolCallId, toolName: "metered", input });
      assert.equal((await invoke("call_7", { tokens: 7 })).status, "READY");
      assert.equal(seen, 7, "the tool gets the input as asked, not as the cost function left it");
      const record = await ctx.store.get(run.runId, "call_7");
      assert.deepEqual(record?.cost, { reserved: 7, spent: 7 });
      assert.equal(record?.requestJson, '{"tokens":7}');
      seen = null;
      const bad: [string, object][] = [
        ["call_negative", { tokens: -1 }],
        ["call_fraction", { tokens: 1.5 }],
        ["call_text", { tokens: "7" }],
        ["call_missing", {}],
        ["call_too_big", { tokens: 1e13 }],
        ["call_throws", { crash: true }],
      ];
      for (const [toolCallId, input] of bad) {
        assertError(await invoke(toolCallId, input), "INVALID_COST", toolCallId);
        await assertAbsent(ctx, run.runId, toolCallId);
      }
      assert.equal(seen, null, "no bad cost ran the tool");
      assert.deepEqual((await ctx.store.getRun(run.runId))?.cost, { reserved: 0, spent: 7 });
    },
  );

  suite.test(
    "a tool that fails spends its reservation unless it settled; a call cancelled before its tool ran spends nothing",
    async (ctx) => {
      const { tool, runs } = costedTool("priced", 6);
      const boundary = boundaryWith(ctx, tool);
      const run = await costRun(boundary, 100);
      const invoke = (toolCallId: string, input: object, signal?: AbortSignal) =>
        boundary.invoke(
          run,
          { runId: run.runId, toolCallId, toolName: "priced", input },
          signal === undefined ? {} : { signal },
        );
      assertError(await invoke("call_failed", { fail: true }), "EXECUTION_FAILED");
      assertError(
        await invoke("call_settled_failed", { settle: 2, fail: true }),
        "EXECUTION_FAILED",
      );
      assert.deepEqual((await ctx.store.get(run.runId, "call_failed"))?.cost, {
        reserved: 6,
        spent: 6,
      });
      assert.deepEqual((await ctx.store.get(run.runId, "call_settled_failed"))?.cost, {
        reserved: 6,
        spent: 2,
      });
      // Aborted while begin is in the store: the record is begun, the tool never runs.
      const controller = new AbortController();
      const pending = invoke("call_cancelled", {}, controller.signal);
      controller.abort();
      assertError(await pending, "CANCELLED");
      assert.deepEqual((await ctx.store.get(run.runId, "call_cancelled"))?.cost, {
        reserved: 6,
        spent: 0,
      });
      assert.equal(runs(), 2);
      assert.deepEqual((await ctx.store.getRun(run.runId))?.cost, { reserved: 0, spent: 8 });
    },
  );

  suite.test(
    "a call caught mid-way keeps its reservation held: another replica gets no refund",
    async (ctx) => {
      const held = await heldCall(ctx);
      assert.deepEqual((await ctx.store.getRun(held.runId))?.cost, { reserved: 30, spent: 0 });
      assertError(
        await held.second.invoke({ runId: held.runId }, held.envelope("call_next")),
        "BUDGET_EXHAUSTED",
        "the held reservation still counts",
      );
      held.release();
      assert.equal((await held.pending).status, "READY");
      assert.deepEqual((await ctx.store.getRun(held.runId))?.cost, { reserved: 0, spent: 30 });
    },
  );

  suite.test(
    "settle takes a cost only, from a tool with a cost, while its stage runs",
    async (ctx) => {
      const caught: string[] = [];
      let late: ExecuteContext | null = null;
      const priced: AnyToolDefinition = {
        name: "priced",
        readOnly: true,
        cost: 5,
        execute: (_input: object, context: ExecuteContext) => {
          for (const bad of [-1, 0.5, Number.NaN, 1e13, "2" as unknown as number]) {
            try {
              context.settle(bad);
            } catch (error) {
              caught.push((error as Error).name);
            }
          }
          context.settle(4);
          context.settle(2); // the last value stands
          late = context;
          return { ok: true };
        },
        project: () => ({ evidence: "EVIDENCE_FOUND", scope: "priced", content: "done" }),
      };
      const free: AnyToolDefinition = {
        name: "free",
        readOnly: true,
        execute: (_input: object, context: ExecuteContext) => {
          try {
            context.settle(1);
          } catch (error) {
            caught.push(`free: ${(error as Error).name}`);
          }
          return { ok: true };
        },
        project: () => ({ evidence: "EVIDENCE_FOUND", scope: "free", content: "done" }),
      };
      const boundary = boundaryWith(ctx, priced, free);
      const run = await costRun(boundary, 50);
      const invoke = (toolCallId: string, toolName: string) =>
        boundary.invoke(run, { runId: run.runId, toolCallId, toolName, input: {} });
      assert.equal((await invoke("call_priced", "priced")).status, "READY");
      assert.equal((await invoke("call_free", "free")).status, "READY");
      assert.deepEqual(caught, [
        "RangeError",
        "RangeError",
        "RangeError",
        "RangeError",
        "RangeError",
        "free: TypeError",
      ]);
      assert.deepEqual((await ctx.store.get(run.runId, "call_priced"))?.cost, {
        reserved: 5,
        spent: 2,
      });
      assert.equal("cost" in (await ctx.store.get(run.runId, "call_free"))!, false);
      assert.throws(() => late!.settle(1), TypeError, "a settle after the stage changes nothing");
      assert.deepEqual((await ctx.store.getRun(run.runId))?.cost, { reserved: 0, spent: 2 });
    },
  );

  suite.test(
    "tools without a cost are untouched: a cost budget of 0 refuses none, and their records carry no cost",
    async (ctx) => {
      const free = costedTool("free", undefined);
      const nothing = costedTool("nothing", 0);
      const boundary = boundaryWith(ctx, free.tool, nothing.tool);
      const run = await costRun(boundary, 0);
      for (let i = 0; i < 3; i++) {
        const result = await boundary.invoke(run, {
          runId: run.runId,
          toolCallId: `call_free_${i}`,
          toolName: "free",
          input: {},
        });
        assert.equal(result.status, "READY");
        assert.equal("cost" in (await ctx.store.get(run.runId, `call_free_${i}`))!, false);
      }
      const zero = await boundary.invoke(run, {
        runId: run.runId,
        toolCallId: "call_zero",
        toolName: "nothing",
        input: {},
      });
      assert.equal(zero.status, "READY");
      assert.deepEqual((await ctx.store.get(run.runId, "call_zero"))?.cost, {
        reserved: 0,
        spent: 0,
      });
      const priced = await boundary.invoke(run, {
        runId: run.runId,
        toolCallId: "call_priced",
        toolName: "nothing",
        input: { settle: 1 },
      });
      assert.equal(priced.status, "READY", "excess past a zero budget is recorded, not hidden");
      assert.deepEqual((await ctx.store.getRun(run.runId))?.cost, { reserved: 0, spent: 1 });
      // A run without a cost budget has no cost until a costed call begins.
      const plain = await ctx.run();
      assert.equal("cost" in (await ctx.store.getRun(plain.runId))!, false);
      assert.equal((await ctx.call(plain, "call_plain", ctx.kit.names.success)).status, "READY");
      assert.equal("cost" in (await ctx.store.getRun(plain.runId))!, false);
    },
  );

  suite.test(
    "three boundaries on one store, 30 calls at once: reservations never pass the budget and spent is the sum of the records",
    async (ctx) => {
      let running = 0;
      let ran = 0;
      // What the run held and spent, as each call read it while it ran: never past the budget.
      const held: number[] = [];
      const tool: AnyToolDefinition = {
        name: "priced",
        readOnly: true,
        cost: 5,
        execute: async (input: { settle: number }, context: ExecuteContext) => {
          running++;
          ran++;
          const cost = (await ctx.store.getRun(context.run.runId))?.cost;
          held.push(cost === undefined ? Number.NaN : cost.reserved + cost.spent);
          await new Promise((resolve) => setTimeout(resolve, 5));
          context.settle(input.settle);
          running--;
          return { ok: true };
        },
        project: () => ({ evidence: "EVIDENCE_FOUND", scope: "priced", content: "done" }),
      };
      const boundaries = [0, 1, 2].map(() => boundaryWith(ctx, tool));
      const run = await costRun(boundaries[0]!, 50);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          boundaries[i % 3]!.invoke({ runId: run.runId }, {
            runId: run.runId,
            toolCallId: `call_${i}`,
            toolName: "priced",
            input: { settle: 3 + (i % 3) },
          })),
      );
      assert.equal(running, 0);
      const ready = results.filter((result) => result.status === "READY");
      for (const result of results) {
        if (result.status !== "READY") assertError(result, "BUDGET_EXHAUSTED");
      }
      assert.ok(ready.length >= 10, `${ready.length} calls ran`);
      assert.equal(ran, ready.length, "a tool ran for each READY call and no other");
      assert.equal(held.length, ran);
      for (const sum of held) assert.ok(sum >= 5 && sum <= 50, `held and spent ${sum} of 50`);
      let spent = 0;
      for (let i = 0; i < 30; i++) {
        const record = await ctx.store.get(run.runId, `call_${i}`);
        if (record === null) continue;
        assert.equal(record.status, "READY");
        spent += record.cost!.spent!;
      }
      const state = await ctx.store.getRun(run.runId);
      assert.deepEqual(state?.cost, { reserved: 0, spent });
      assert.ok(spent <= 50, `spent ${spent} of 50`);
      assert.equal(state?.used.calls, ready.length);
    },
  );
}
