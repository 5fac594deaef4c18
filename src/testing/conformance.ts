/**
 * The store conformance suite: every rule of the canonical store, checked against any
 * {@linkcode Store} implementation, through the store directly and through a `ToolBoundary`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../core/boundary.ts";
import type { ErrorCode } from "../core/errors.ts";
import type { BeginRequest, CompleteOutcome, Store, StoredRecord } from "../core/store.ts";
import type { BoundaryResult, Limits, RunContext } from "../core/types.ts";
import { CANARY_SECRET, createFakeToolkit, type FakeToolkit } from "./fakes.ts";

/** A store prepared for one test case. */
export interface StoreUnderTest {
  /** The store. */
  store: Store;
  /** The clock the store's expiry follows, when it is a fake one. @default Date.now */
  clock?: () => number;
  /** Moves that clock forward; stores on real time leave it out and the suite waits instead. */
  advance?: (ms: number) => void | Promise<void>;
  /** Releases what the store holds (connections, servers). */
  close?: () => void | Promise<void>;
}

/** Registers one test; `Deno.test`-compatible. */
export type TestRegistrar = (name: string, fn: () => Promise<void>) => void;

/** Options of {@linkcode storeConformance}. */
export interface ConformanceOptions {
  /** Prefix of every test name, e.g. the store's class name. */
  name: string;
  /** Makes a fresh store (or a fresh view of a shared one) for each test. */
  createStore: () => StoreUnderTest | Promise<StoreUnderTest>;
  /** Registers each test. @default Deno.test, when present */
  test?: TestRegistrar;
  /** Record TTL used by the expiry tests, in ms; real-time stores wait about 1.5x of it. @default 400 */
  ttlMs?: number;
}

/** Small limits so the size cases stay fast on remote stores. */
const SUITE_LIMITS: Partial<Limits> = {
  requestBytes: 1024,
  rawBytes: 64 * 1024,
  recordBytes: 96 * 1024,
  agentResultBytes: 2048,
};

interface Ctx {
  store: Store;
  boundary: ToolBoundary;
  kit: FakeToolkit;
  clock: () => number;
  advance: (ms: number) => Promise<void>;
  ttlMs: number;
  run: (budget?: { calls: number; perTool?: Record<string, number> }) => Promise<RunContext>;
  call: (
    run: RunContext,
    toolCallId: string,
    toolName: string,
    input?: unknown,
  ) => Promise<BoundaryResult>;
}

type Case = [name: string, fn: (ctx: Ctx) => Promise<void>];

/**
 * Registers the conformance suite for a store: a test for every Requirement and Scenario of the
 * specification (named after it), and the concurrency, lifecycle, TTL, retry and progress rules.
 *
 * @param options The store factory, a name, and optionally a test registrar.
 * @returns The names of the registered tests.
 *
 * @example
 * ```ts ignore
 * import { storeConformance } from "@tool-boundary/core/testing";
 * import { MemoryStore } from "@tool-boundary/core/memory";
 *
 * storeConformance({
 *   name: "MemoryStore",
 *   createStore: () => {
 *     let now = Date.now();
 *     return { store: new MemoryStore({ clock: () => now }), clock: () => now, advance: (ms) => { now += ms; } };
 *   },
 * });
 * ```
 */
export function storeConformance(options: ConformanceOptions): string[] {
  const register = options.test ?? defaultRegistrar();
  const ttlMs = options.ttlMs ?? 400;
  const names: string[] = [];
  for (const [caseName, fn] of CASES) {
    const name = `${options.name}: ${caseName}`;
    names.push(name);
    register(name, async () => {
      const sut = await options.createStore();
      try {
        await fn(makeCtx(sut, ttlMs));
      } finally {
        await sut.close?.();
      }
    });
  }
  return names;
}

function defaultRegistrar(): TestRegistrar {
  const deno =
    (globalThis as { Deno?: { test?: (t: { name: string; fn: () => Promise<void> }) => void } })
      .Deno;
  if (typeof deno?.test !== "function") {
    throw new TypeError("Cannot register conformance tests: pass options.test outside Deno");
  }
  return (name, fn) => deno.test!({ name, fn });
}

function makeCtx(sut: StoreUnderTest, ttlMs: number): Ctx {
  const clock = sut.clock ?? Date.now;
  const advance = async (ms: number) => {
    if (sut.advance) await sut.advance(ms);
    else await new Promise((resolve) => setTimeout(resolve, ms));
  };
  const kit = createFakeToolkit();
  const boundary = new ToolBoundary({
    store: sut.store,
    tools: kit.tools,
    limits: SUITE_LIMITS,
    recordTtlMs: 60_000,
    clock,
  });
  return {
    store: sut.store,
    boundary,
    kit,
    clock,
    advance,
    ttlMs,
    run: (budget = { calls: 50 }) =>
      boundary.startRun({ runId: uniqueId("run"), ttlMs: 600_000, budget }),
    call: (run, toolCallId, toolName, input = { query: "disk" }) =>
      boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input }),
  };
}

function uniqueId(prefix: string): string {
  return `${prefix}-${crypto.randomUUID()}`;
}

async function storeRun(store: Store, clock: () => number, budget = { calls: 100, perTool: {} }) {
  const runId = uniqueId("run");
  const started = await store.startRun({
    runId,
    deadline: clock() + 600_000,
    budget,
    ttlMs: 1_200_000,
    attemptId: uniqueId("start"),
    now: clock(),
  });
  assert.equal(started.ok, true);
  return runId;
}

function beginRequest(
  runId: string,
  toolCallId: string,
  clock: () => number,
  over: Partial<BeginRequest> = {},
): BeginRequest {
  return {
    runId,
    toolCallId,
    toolName: "fake_success",
    requestJson: '{"query":"disk"}',
    attemptId: uniqueId("attempt"),
    ttlMs: 60_000,
    now: clock(),
    ...over,
  };
}

const READY: CompleteOutcome = {
  status: "READY",
  evidence: "EVIDENCE_FOUND",
  rawJson: '{"hits":["a"]}',
  agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"fake","content":["a"]}',
};
const NO_EVIDENCE: CompleteOutcome = {
  status: "READY",
  evidence: "NO_EVIDENCE",
  rawJson: '{"hits":[]}',
  agentResultJson: '{"evidence":"NO_EVIDENCE","scope":"fake, query q","content":[]}',
};
const FAILED: CompleteOutcome = { status: "ERROR", errorCode: "EXECUTION_FAILED", rawJson: null };

async function beginAndComplete(
  ctx: Ctx,
  runId: string,
  toolCallId: string,
  outcome: CompleteOutcome | null,
  ttlMs = 60_000,
): Promise<string> {
  const request = beginRequest(runId, toolCallId, ctx.clock, { ttlMs });
  const begun = await ctx.store.begin(request);
  assert.equal(begun.ok, true, `begin ${toolCallId}`);
  if (outcome !== null) {
    const done = await ctx.store.complete({
      runId,
      toolCallId,
      attemptId: request.attemptId,
      outcome,
      now: ctx.clock(),
    });
    assert.equal(done.ok, true, `complete ${toolCallId}`);
  }
  return request.attemptId;
}

function assertError(result: BoundaryResult, code: ErrorCode, message = ""): void {
  assert.equal(
    result.status,
    "ERROR",
    `${message} expected ${code}, got ${JSON.stringify(result)}`,
  );
  if (result.status === "ERROR") assert.equal(result.code, code, message);
}

/** Nothing agent-facing may carry the canary, raw fields, or exception text. */
function assertSafe(value: unknown): void {
  const text = JSON.stringify(value);
  assert.ok(!text.includes(CANARY_SECRET), `leaked the canary: ${text.slice(0, 200)}`);
  assert.ok(!text.includes("credential"), "leaked a raw field");
  assert.ok(!/Error:|\n\s+at /.test(text), "leaked exception text");
}

async function assertAbsent(ctx: Ctx, runId: string, toolCallId: string): Promise<void> {
  assert.equal(await ctx.store.get(runId, toolCallId), null, `record ${toolCallId} must not exist`);
}

function executed(ctx: Ctx, name: string): number {
  return ctx.kit.counts.execute[name] ?? 0;
}

const CASES: Case[] = [
  [
    "Requirement: ToolBoundary SHALL enforce explicit preflight before execution",
    async (ctx) => {
      const { names } = ctx.kit;
      const run = await ctx.run({ calls: 50, perTool: { [names.noEvidence]: 1 } });
      const refusals: [string, string, string, unknown, ErrorCode][] = [
        ["", run.runId, names.success, {}, "INVALID_TOOL_CALL_ID"],
        ["call with space", run.runId, names.success, {}, "INVALID_TOOL_CALL_ID"],
        ["call_x", "other-run", names.success, {}, "RUN_MISMATCH"],
        ["call_unknown", run.runId, "no_such_tool", {}, "UNKNOWN_TOOL"],
        ["call_array", run.runId, names.success, [1, 2], "INVALID_INPUT"],
        ["call_text", run.runId, names.success, "{not json", "INVALID_INPUT"],
        ["call_big", run.runId, names.success, { q: "x".repeat(2000) }, "REQUEST_TOO_LARGE"],
        ["call_write", run.runId, names.writable, {}, "NOT_READ_ONLY"],
      ];
      for (const [toolCallId, runId, toolName, input, code] of refusals) {
        const result = await ctx.boundary.invoke(run, { toolCallId, runId, toolName, input });
        assertError(result, code, toolCallId);
        assertSafe(result);
        if (toolCallId !== "" && toolCallId !== "call with space") {
          await assertAbsent(ctx, run.runId, toolCallId);
        }
      }
      const total = Object.values(ctx.kit.counts.execute).reduce((a, b) => a + b, 0);
      assert.equal(total, 0, "no executor may run for a refused call");

      // Duplicate and tool budget: the first call runs, the refused one creates nothing new.
      assert.equal((await ctx.call(run, "call_dup", names.noEvidence)).status, "READY");
      assertError(await ctx.call(run, "call_dup", names.success), "DUPLICATE_TOOL_CALL");
      assertError(await ctx.call(run, "call_budget", names.noEvidence), "TOOL_BUDGET_EXHAUSTED");
      await assertAbsent(ctx, run.runId, "call_budget");
      assert.equal(executed(ctx, names.success), 0);
      assert.equal(executed(ctx, names.noEvidence), 1);

      // Run budget.
      const small = await ctx.run({ calls: 1 });
      assert.equal((await ctx.call(small, "call_1", names.success)).status, "READY");
      assertError(await ctx.call(small, "call_2", names.success), "RUN_BUDGET_EXHAUSTED");
      await assertAbsent(ctx, small.runId, "call_2");

      // Unauthorized.
      const guarded = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        authorize: (_run, call) => call.tool.name !== names.success,
      });
      const guardedRun = await guarded.startRun({ runId: uniqueId("run"), ttlMs: 60_000 });
      const denied = await guarded.invoke(guardedRun, {
        toolCallId: "call_denied",
        runId: guardedRun.runId,
        toolName: names.success,
        input: { query: "disk" },
      });
      assertError(denied, "UNAUTHORIZED");
      await assertAbsent(ctx, guardedRun.runId, "call_denied");

      // Inactive run, then a run past its deadline.
      const ended = await ctx.run();
      await ctx.boundary.endRun(ended);
      assertError(await ctx.call(ended, "call_late", names.success), "RUN_INACTIVE");
      const short = await ctx.boundary.startRun({ runId: uniqueId("run"), ttlMs: 50 });
      await ctx.advance(80);
      assertError(await ctx.call(short, "call_after", names.success), "DEADLINE_EXCEEDED");
      await assertAbsent(ctx, ended.runId, "call_late");
      await assertAbsent(ctx, short.runId, "call_after");
      assert.equal(executed(ctx, names.success), 1, "only the one allowed call ran");
    },
  ],
  [
    "Scenario: Cross-Run Tool Call is rejected",
    async (ctx) => {
      const runA = await ctx.run();
      const runB = await ctx.run();
      const result = await ctx.boundary.invoke(runA, {
        toolCallId: "call_cross",
        runId: runB.runId,
        toolName: ctx.kit.names.success,
        input: { query: "disk" },
      });
      assertError(result, "RUN_MISMATCH");
      assertSafe(result);
      await assertAbsent(ctx, runA.runId, "call_cross");
      await assertAbsent(ctx, runB.runId, "call_cross");
      assert.equal(executed(ctx, ctx.kit.names.success), 0);
    },
  ],
  [
    "Scenario: Unauthorized or writable Tool is rejected",
    async (ctx) => {
      const secretInput = { query: `needle ${CANARY_SECRET}` };
      const guarded = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        authorize: () => false,
      });
      const run = await guarded.startRun({ runId: uniqueId("run"), ttlMs: 60_000 });
      const envelope = { runId: run.runId, input: secretInput };
      const denied = await guarded.invoke(run, {
        ...envelope,
        toolCallId: "call_denied",
        toolName: ctx.kit.names.success,
      });
      assertError(denied, "UNAUTHORIZED");
      assertSafe(denied);
      const open = await ctx.run();
      const writable = await ctx.call(open, "call_write", ctx.kit.names.writable, secretInput);
      assertError(writable, "NOT_READ_ONLY");
      assertSafe(writable);
      await assertAbsent(ctx, run.runId, "call_denied");
      await assertAbsent(ctx, open.runId, "call_write");
      assert.equal(executed(ctx, ctx.kit.names.success) + executed(ctx, ctx.kit.names.writable), 0);
    },
  ],
  [
    "Requirement: Canonical invocation SHALL keep complete data in one record",
    async (ctx) => {
      const run = await ctx.run();
      const input = { query: "disk ✓ 日本", limit: 3, nested: { flag: true, none: null } };
      const result = await ctx.call(run, "call_full", ctx.kit.names.success, input);
      assert.equal(result.status, "READY");
      assertSafe(result);
      const record = await ctx.boundary.inspect(run.runId, "call_full");
      assert.ok(record);
      assert.equal(record.runId, run.runId);
      assert.equal(record.toolCallId, "call_full");
      assert.equal(record.toolName, ctx.kit.names.success);
      assert.equal(record.status, "READY");
      assert.equal(record.evidence, "EVIDENCE_FOUND");
      assert.deepEqual(record.request, input);
      assert.deepEqual(record.raw, {
        query: input.query,
        hits: ["line 1: match", "line 2: match"],
        credential: CANARY_SECRET,
      });
      assert.deepEqual(record.agentResult, {
        evidence: "EVIDENCE_FOUND",
        scope: `fake index, query "${input.query}"`,
        content: ["line 1: match", "line 2: match"],
      });
      assert.equal(record.errorCode, null);
      assert.ok(record.createdAt <= record.updatedAt);
      assert.ok(record.expiresAt > record.createdAt);
    },
  ],
  [
    "Scenario: Tool begins execution",
    async (ctx) => {
      const run = await ctx.run();
      let during: StoredRecord | null = null;
      const store = ctx.store;
      const probe = new ToolBoundary({
        store,
        clock: ctx.clock,
        tools: [{
          name: "probe",
          readOnly: true,
          execute: async () => {
            during = await store.get(run.runId, "toolu_01ProbeXyz");
            return { ok: true };
          },
          project: () => ({ evidence: "NO_EVIDENCE", scope: "probe", content: null }),
        }],
      });
      const result = await probe.invoke(run, {
        toolCallId: "toolu_01ProbeXyz",
        runId: run.runId,
        toolName: "probe",
        input: '{"query": "a", "n": 1}',
      });
      assert.equal(result.status, "READY");
      const seen = during as StoredRecord | null;
      assert.ok(seen, "the record exists while the tool runs");
      assert.equal(seen.status, "PROJECTING");
      assert.equal(seen.toolCallId, "toolu_01ProbeXyz");
      assert.equal(seen.requestJson, '{"query":"a","n":1}');
      assert.equal(seen.agentResultJson, null);
      assert.equal(seen.rawJson, null);
      assert.equal(seen.evidence, null);
    },
  ],
  [
    "Scenario: Projector succeeds",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_ok", ctx.kit.names.success);
      assert.deepEqual(result, {
        status: "READY",
        toolCallId: "call_ok",
        evidence: "EVIDENCE_FOUND",
        scope: 'fake index, query "disk"',
        content: ["line 1: match", "line 2: match"],
      });
      const stored = await ctx.store.get(run.runId, "call_ok");
      assert.ok(stored);
      assert.equal(stored.status, "READY");
      assert.ok(stored.rawJson?.includes(CANARY_SECRET), "raw data stays in the record");
      assert.deepEqual(JSON.parse(stored.agentResultJson ?? "null"), {
        evidence: result.status === "READY" ? result.evidence : null,
        scope: 'fake index, query "disk"',
        content: ["line 1: match", "line 2: match"],
      });
    },
  ],
  [
    "Requirement: Invocation lifecycle and evidence semantics SHALL be enforced centrally",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const complete = (toolCallId: string, attemptId: string, outcome: CompleteOutcome) =>
        store.complete({ runId, toolCallId, attemptId, outcome, now: clock() });

      // READY with evidence ERROR is refused and the record stays PROJECTING.
      const a = await beginAndComplete(ctx, runId, "call_a", null);
      const bad = { ...READY, evidence: "ERROR" } as unknown as CompleteOutcome;
      assert.deepEqual(await complete("call_a", a, bad), { ok: false, code: "ILLEGAL_TRANSITION" });
      assert.equal((await store.get(runId, "call_a"))?.status, "PROJECTING");
      // Another attempt cannot complete someone else's record.
      assert.deepEqual(await complete("call_a", "other-attempt", READY), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });

      // READY -> ERROR and READY -> READY (other content) are refused; the record is unchanged.
      const b = await beginAndComplete(ctx, runId, "call_b", READY);
      const readyRecord = await store.get(runId, "call_b");
      assert.deepEqual(await complete("call_b", b, FAILED), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      assert.deepEqual(await complete("call_b", b, NO_EVIDENCE), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      assert.deepEqual(await store.get(runId, "call_b"), readyRecord);

      // ERROR -> READY is refused; ERROR carries evidence ERROR and no agent result.
      const c = await beginAndComplete(ctx, runId, "call_c", FAILED);
      assert.deepEqual(await complete("call_c", c, READY), {
        ok: false,
        code: "ILLEGAL_TRANSITION",
      });
      const errorRecord = await store.get(runId, "call_c");
      assert.equal(errorRecord?.status, "ERROR");
      assert.equal(errorRecord?.evidence, "ERROR");
      assert.equal(errorRecord?.errorCode, "EXECUTION_FAILED");
      assert.equal(errorRecord?.agentResultJson, null);

      // A complete of a key that never existed is RECORD_EXPIRED and creates nothing.
      assert.deepEqual(await complete("call_none", "x", READY), {
        ok: false,
        code: "RECORD_EXPIRED",
      });
      await assertAbsent(ctx, runId, "call_none");

      // ERROR is never referencable.
      const { rows } = await store.readFacts({
        runId,
        identities: [{ runId, toolCallId: "call_c" }, { runId, toolCallId: "call_a" }],
        maxFacts: 10,
        maxBytes: 10_000,
      });
      assert.deepEqual(rows, []);
    },
  ],
  [
    "Scenario: No evidence projection completes",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_none", ctx.kit.names.noEvidence, {
        query: "kernel panic",
      });
      assert.equal(result.status, "READY");
      if (result.status !== "READY") return;
      assert.equal(result.evidence, "NO_EVIDENCE");
      assert.equal(result.scope, 'fake index, query "kernel panic"');
      assert.equal(executed(ctx, ctx.kit.names.noEvidence), 1, "NO_EVIDENCE is never retried");
      const record = await ctx.boundary.inspect(run.runId, "call_none");
      assert.equal(record?.status, "READY");
      assert.equal(record?.evidence, "NO_EVIDENCE");
      assert.equal(record?.agentResult?.scope, 'fake index, query "kernel panic"');
      const facts = await ctx.boundary.endRun(run);
      assert.equal(facts.length, 1);
      assert.equal(facts[0]?.kind, "NEGATIVE_OBSERVATION");
      assert.equal(facts[0]?.evidence, "NO_EVIDENCE");
      assert.equal(facts[0]?.scope, 'fake index, query "kernel panic"');
    },
  ],
  [
    "Scenario: Projection fails",
    async (ctx) => {
      const run = await ctx.run();
      const { names } = ctx.kit;
      const cases: [string, string, ErrorCode][] = [
        ["call_throw", names.secretError, "PROJECTION_FAILED"],
        ["call_invalid", names.invalidEvidence, "INVALID_PROJECTION"],
      ];
      for (const [id, tool, code] of cases) {
        const result = await ctx.call(run, id, tool);
        assertError(result, code);
        assertSafe(result);
        assert.equal(Object.hasOwn(result, "content"), false, "no agent result is returned");
        const stored = await ctx.store.get(run.runId, id);
        assert.equal(stored?.status, "ERROR");
        assert.equal(stored?.evidence, "ERROR");
        assert.equal(stored?.errorCode, code);
        assert.equal(stored?.agentResultJson, null);
        assert.ok(
          stored?.rawJson?.includes("hits"),
          "valid raw data stays harness-only in the record",
        );
      }
      assert.deepEqual(await ctx.boundary.endRun(run), []);
    },
  ],
  [
    "Requirement: Tool Call ID and Run ownership SHALL be preserved",
    async (ctx) => {
      const run = await ctx.run();
      const ids = [
        "call_Xy12AbCdEf34",
        "toolu_01A09q90qw90lq917835lq9",
        "fc_67d9a0c1b2e3f4a5",
        "3f2b8c1e-9d4a-4b7e-8f6a-2c5d9e1b7a40",
        "functions.search_logs:0",
        "123",
        "007",
        "1e3",
        "true",
        "null",
      ];
      for (const id of ids) {
        const result = await ctx.call(run, id, ctx.kit.names.noEvidence);
        assert.equal(result.status, "READY", id);
        assert.equal(result.toolCallId, id);
        const stored = await ctx.store.get(run.runId, id);
        assert.equal(stored?.toolCallId, id);
        assert.equal(stored?.runId, run.runId);
      }
      const unsafe = [
        " call_1",
        "call_1 ",
        "call_1\n",
        "call\u0000",
        "a{b}",
        "a/b",
        'a"b',
        "x".repeat(257),
      ];
      for (const id of unsafe) {
        const result = await ctx.call(run, id, ctx.kit.names.noEvidence);
        assertError(result, "INVALID_TOOL_CALL_ID", JSON.stringify(id));
        assert.equal(result.toolCallId, null, "an unsafe ID is never echoed or replaced");
      }
      for (const id of [42, null, undefined, { id: "call_1" }]) {
        const result = await ctx.call(run, id as unknown as string, ctx.kit.names.noEvidence);
        assertError(result, "INVALID_TOOL_CALL_ID");
      }
      assert.equal(executed(ctx, ctx.kit.names.noEvidence), ids.length);
      const { toolCallIds } = await endRunIndex(ctx, run.runId);
      assert.deepEqual(toolCallIds, ids);
    },
  ],
  [
    "Scenario: Duplicate Tool Call ID is submitted",
    async (ctx) => {
      const run = await ctx.run();
      const first = await ctx.call(run, "call_same", ctx.kit.names.success);
      assert.equal(first.status, "READY");
      const before = await ctx.store.get(run.runId, "call_same");
      const second = await ctx.call(run, "call_same", ctx.kit.names.noEvidence, { query: "other" });
      assertError(second, "DUPLICATE_TOOL_CALL");
      assertSafe(second);
      assert.equal(executed(ctx, ctx.kit.names.noEvidence), 0, "the second tool is not executed");
      assert.deepEqual(
        await ctx.store.get(run.runId, "call_same"),
        before,
        "first record untouched",
      );
      const used = await ctx.store.getRun(run.runId);
      assert.equal(used?.used.calls, 1, "a refused duplicate uses no budget");
    },
  ],
  [
    "Scenario: Framework ID is preserved",
    async (ctx) => {
      const run = await ctx.run();
      const id = "call_AbC-123_xYz.9:0";
      const result = await ctx.call(run, id, ctx.kit.names.success);
      assert.equal(result.toolCallId, id);
      const stored = await ctx.store.get(run.runId, id);
      assert.equal(stored?.toolCallId, id);
      assert.equal(await ctx.store.get(run.runId, id.toLowerCase()), null, "no case folding");
      const facts = await ctx.boundary.endRun(run);
      assert.equal(facts[0]?.toolCallId, id);
    },
  ],
  [
    "Requirement: TTL and size limits SHALL fail closed",
    async (ctx) => {
      const run = await ctx.run();
      // 400 three-byte characters: 400 UTF-16 units but 1,200+ bytes, over the 1,024-byte limit.
      const wide = await ctx.call(run, "call_wide", ctx.kit.names.success, { q: "日".repeat(400) });
      assertError(wide, "REQUEST_TOO_LARGE");
      await assertAbsent(ctx, run.runId, "call_wide");
      const narrow = await ctx.call(run, "call_narrow", ctx.kit.names.noEvidence, {
        q: "a".repeat(400),
      });
      assert.equal(narrow.status, "READY", "the same length in ASCII fits");
      // The record TTL is fixed at creation.
      const stored = await ctx.store.get(run.runId, "call_narrow");
      assert.ok(stored);
      assert.equal(stored.expiresAt - stored.createdAt, 60_000);
    },
  ],
  [
    "Scenario: Read does not renew TTL",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      await beginAndComplete(ctx, runId, "call_ttl", READY, ctx.ttlMs);
      const first = await ctx.store.get(runId, "call_ttl");
      assert.ok(first);
      for (let i = 0; i < 3; i++) {
        await ctx.advance(Math.floor(ctx.ttlMs * 0.25));
        const again = await ctx.store.get(runId, "call_ttl");
        assert.equal(again?.expiresAt, first.expiresAt, "a read leaves the expiry where it was");
      }
      await ctx.advance(Math.ceil(ctx.ttlMs * 0.4));
      await assertAbsent(ctx, runId, "call_ttl");
    },
  ],
  [
    "Scenario: Raw response is too large",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_huge", ctx.kit.names.oversized, { bytes: 200_000 });
      assertError(result, "RESULT_TOO_LARGE");
      assertSafe(result);
      assert.equal(
        ctx.kit.counts.project[ctx.kit.names.oversized] ?? 0,
        0,
        "projector not invoked",
      );
      const stored = await ctx.store.get(run.runId, "call_huge");
      assert.equal(stored?.status, "ERROR");
      assert.equal(stored?.errorCode, "RESULT_TOO_LARGE");
      assert.equal(stored?.rawJson, null, "the raw payload is not stored truncated");
      // Just over the raw limit in UTF-8 bytes but not in UTF-16 units is refused too.
      const wide = defineWideRaw(ctx);
      const wideResult = await wide.boundary.invoke(run, {
        toolCallId: "call_wide_raw",
        runId: run.runId,
        toolName: "wide_raw",
        input: {},
      });
      assertError(wideResult, "RESULT_TOO_LARGE");
      assert.equal(wide.projected(), 0);
    },
  ],
  [
    "Scenario: Agent result is too large",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_big_view", ctx.kit.names.oversizedProjection, {
        bytes: 4096,
      });
      assertError(result, "RESULT_TOO_LARGE");
      assert.ok(JSON.stringify(result).length < 400, "the oversized result is not returned");
      const stored = await ctx.store.get(run.runId, "call_big_view");
      assert.equal(stored?.status, "ERROR");
      assert.equal(stored?.errorCode, "RESULT_TOO_LARGE");
      assert.equal(stored?.agentResultJson, null);
      assert.ok(stored?.rawJson, "the raw response, within limits, stays in the record");
      const fits = await ctx.call(run, "call_small_view", ctx.kit.names.oversizedProjection, {
        bytes: 1500,
      });
      assert.equal(fits.status, "READY", "a projection within the limit passes");
    },
  ],
  [
    "Requirement: Tool and store failures SHALL return safe errors",
    async (ctx) => {
      const run = await ctx.run();
      const { names } = ctx.kit;
      const outcomes: [string, string, ErrorCode][] = [
        ["call_e1", names.throwing, "EXECUTION_FAILED"],
        ["call_e2", names.secretError, "PROJECTION_FAILED"],
        ["call_e3", names.notJson, "SERIALIZATION_FAILED"],
        ["call_e4", names.oversized, "RESULT_TOO_LARGE"],
        ["call_e5", names.slow, "TOOL_TIMEOUT"],
      ];
      for (const [id, tool, code] of outcomes) {
        const result = await ctx.call(run, id, tool, {
          query: CANARY_SECRET.slice(0, 0) + "q",
          bytes: 100_000,
        });
        assertError(result, code, id);
        assertSafe(result);
        assert.deepEqual(Object.keys(result).sort(), ["code", "message", "status", "toolCallId"]);
        assert.equal((await ctx.store.get(run.runId, id))?.errorCode, code);
      }
      // Store failures: the store's error text (with a secret in it) never reaches the agent.
      const failing = failingStore(ctx.store, new Set(["begin"]));
      const broken = new ToolBoundary({ store: failing, tools: ctx.kit.tools, clock: ctx.clock });
      const down = await broken.invoke(run, {
        toolCallId: "call_down",
        runId: run.runId,
        toolName: names.success,
        input: {},
      });
      assertError(down, "STORE_UNAVAILABLE");
      assertSafe(down);
      assert.equal(executed(ctx, names.success), 0, "nothing runs when begin fails");
      const lost = new ToolBoundary({
        store: failingStore(ctx.store, new Set(["complete"])),
        tools: ctx.kit.tools,
        clock: ctx.clock,
      });
      const unrecorded = await lost.invoke(run, {
        toolCallId: "call_unrecorded",
        runId: run.runId,
        toolName: names.success,
        input: {},
      });
      assertError(unrecorded, "STORE_UNAVAILABLE");
      assertSafe(unrecorded);
    },
  ],
  [
    "Scenario: Tool execution throws",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_throws", ctx.kit.names.throwing);
      assertError(result, "EXECUTION_FAILED");
      assertSafe(result);
      const stored = await ctx.store.get(run.runId, "call_throws");
      assert.equal(stored?.status, "ERROR");
      assert.equal(stored?.errorCode, "EXECUTION_FAILED");
      assert.equal(stored?.evidence, "ERROR");
      assert.equal(stored?.rawJson, null);
      assert.equal(ctx.kit.counts.project[ctx.kit.names.throwing] ?? 0, 0);
    },
  ],
  [
    "Requirement: Stage 3A SHALL remain reusable and independent from legacy audit",
    async (ctx) => {
      // Two independent boundaries (say, two services with different tools) share the store and
      // its rules without sharing code: one starts the run, the other resumes it by ID.
      const other = new ToolBoundary({
        store: ctx.store,
        clock: ctx.clock,
        tools: [{
          name: "rag_search",
          readOnly: true,
          execute: () => ({ passages: ["p1"] }),
          project: (raw: { passages: string[] }) => ({
            evidence: "EVIDENCE_FOUND",
            scope: "rag index",
            content: raw.passages,
          }),
        }],
      });
      const run = await ctx.run();
      const resumed = await other.getRun(run.runId);
      assert.deepEqual(resumed, run);
      assert.ok(resumed);
      assert.equal((await ctx.call(run, "call_shared", ctx.kit.names.success)).status, "READY");
      const dup = await other.invoke(resumed, {
        toolCallId: "call_shared",
        runId: run.runId,
        toolName: "rag_search",
        input: {},
      });
      assertError(dup, "DUPLICATE_TOOL_CALL", "duplicates are caught across boundaries");
      const rag = await other.invoke(resumed, {
        toolCallId: "call_rag",
        runId: run.runId,
        toolName: "rag_search",
        input: {},
      });
      assert.equal(rag.status, "READY");
      const facts = await ctx.boundary.endRun(run);
      assert.deepEqual(facts.map((f) => f.toolCallId), ["call_shared", "call_rag"]);
      assertError(
        await other.invoke(resumed, {
          toolCallId: "call_after_end",
          runId: run.runId,
          toolName: "rag_search",
          input: {},
        }),
        "RUN_INACTIVE",
        "an end seen by one boundary binds the other",
      );
    },
  ],
  [
    "Scenario: Fake projector tests pass",
    async (ctx) => {
      const { names } = ctx.kit;
      const run = await ctx.run({ calls: 20, perTool: { [names.success]: 2 } });
      const expect: [string, string, "READY" | ErrorCode][] = [
        ["call_f1", names.success, "READY"],
        ["call_f2", names.noEvidence, "READY"],
        ["call_f3", names.throwing, "EXECUTION_FAILED"],
        ["call_f1", names.noEvidence, "DUPLICATE_TOOL_CALL"],
        ["call_f4", names.oversized, "RESULT_TOO_LARGE"],
        ["call_f5", names.oversizedProjection, "RESULT_TOO_LARGE"],
        ["call_f6", names.invalidEvidence, "INVALID_PROJECTION"],
        ["call_f7", names.success, "READY"],
        ["call_f8", names.success, "TOOL_BUDGET_EXHAUSTED"],
      ];
      for (const [id, tool, outcome] of expect) {
        const result = await ctx.call(run, id, tool);
        if (outcome === "READY") assert.equal(result.status, "READY", id);
        else assertError(result, outcome, id);
      }
      const facts = await ctx.boundary.endRun(run);
      assert.deepEqual(facts.map((f) => [f.toolCallId, f.kind]), [
        ["call_f1", "EVIDENCE"],
        ["call_f2", "NEGATIVE_OBSERVATION"],
        ["call_f7", "EVIDENCE"],
      ]);
    },
  ],
  [
    "Requirement: Run progress projection SHALL reference canonical records without duplicating truth",
    async (ctx) => {
      const run = await ctx.run();
      await ctx.call(run, "call_p1", ctx.kit.names.success);
      await ctx.call(run, "call_p2", ctx.kit.names.throwing);
      const { toolCallIds } = await endRunIndex(ctx, run.runId);
      assert.deepEqual(toolCallIds, ["call_p1", "call_p2"], "the index holds identities only");
      const { rows } = await ctx.store.readFacts({
        runId: run.runId,
        identities: toolCallIds.map((toolCallId) => ({ runId: run.runId, toolCallId })),
        maxFacts: 10,
        maxBytes: 100_000,
      });
      assert.equal(rows.length, 1);
      const row = rows[0]!;
      assert.ok(!JSON.stringify(row).includes(CANARY_SECRET), "no raw response in a fact row");
      assert.equal("rawJson" in row || "requestJson" in row, false);
      const record = await ctx.store.get(run.runId, "call_p1");
      assert.equal(row.agentResultJson, record?.agentResultJson, "facts resolve the record itself");
    },
  ],
  [
    "Scenario: Completed calls are projected",
    async (ctx) => {
      const run = await ctx.run();
      const order = ["call_c3", "call_c1", "call_c2", "call_c4"];
      for (const [i, id] of order.entries()) {
        await ctx.call(run, id, i % 2 === 0 ? ctx.kit.names.success : ctx.kit.names.noEvidence, {
          query: `q${i}`,
        });
      }
      const report = await ctx.boundary.endRunReport(run);
      assert.deepEqual(report.facts.map((f) => f.toolCallId), order, "in execution order");
      assert.equal(report.omitted, 0);
      assert.deepEqual(report.facts.map((f) => f.kind), [
        "EVIDENCE",
        "NEGATIVE_OBSERVATION",
        "EVIDENCE",
        "NEGATIVE_OBSERVATION",
      ]);
      assert.equal(report.facts[1]?.scope, 'fake index, query "q1"');
      assertSafe(report);
      // Ending again returns the same facts.
      assert.deepEqual((await ctx.boundary.endRunReport(run)).facts, report.facts);
      // Caps: count and bytes.
      const capped = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        limits: { factCount: 2 },
      });
      const countCapped = await capped.endRunReport(run);
      assert.deepEqual(countCapped.facts.map((f) => f.toolCallId), order.slice(0, 2));
      assert.equal(countCapped.omitted, 2);
      const rowBytes = new TextEncoder().encode(
        JSON.stringify({
          evidence: "EVIDENCE_FOUND",
          scope: 'fake index, query "q0"',
          content: ["line 1: match", "line 2: match"],
        }),
      ).length;
      const byteCapped = new ToolBoundary({
        store: ctx.store,
        tools: ctx.kit.tools,
        clock: ctx.clock,
        limits: { factBytes: rowBytes },
      });
      const bytesReport = await byteCapped.endRunReport(run);
      assert.deepEqual(bytesReport.facts.map((f) => f.toolCallId), ["call_c3"]);
      assert.equal(bytesReport.omitted, 3);
    },
  ],
  [
    "Scenario: Indexed identity is invalid",
    async (ctx) => {
      const { store, clock } = ctx;
      const runId = await storeRun(store, clock);
      const otherRun = await storeRun(store, clock);
      await beginAndComplete(ctx, runId, "call_ready", READY);
      await beginAndComplete(ctx, runId, "call_projecting", null);
      await beginAndComplete(ctx, runId, "call_error", FAILED);
      await beginAndComplete(ctx, runId, "call_expiring", NO_EVIDENCE, ctx.ttlMs);
      await beginAndComplete(ctx, otherRun, "call_foreign", READY);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      const identities = [
        { runId, toolCallId: "call_missing" },
        { runId, toolCallId: "call_expiring" },
        { runId: otherRun, toolCallId: "call_foreign" },
        { runId, toolCallId: "call_projecting" },
        { runId, toolCallId: "call_error" },
        { runId, toolCallId: "call_ready" },
      ];
      const { rows } = await store.readFacts({
        runId,
        identities,
        maxFacts: 10,
        maxBytes: 100_000,
      });
      assert.deepEqual(rows.map((r) => r.toolCallId), ["call_ready"]);
      // Through the boundary: only the READY record of this run becomes a fact.
      const ended = await new ToolBoundary({ store, tools: [], clock }).endRun(runId);
      assert.deepEqual(ended.map((f) => f.toolCallId), ["call_ready"]);
      assert.equal(ended[0]?.kind, "EVIDENCE");
    },
  ],
  [
    "begin: 100 concurrent begins of one key, exactly one wins",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const results = await Promise.all(
        Array.from(
          { length: 100 },
          () => ctx.store.begin(beginRequest(runId, "call_race", ctx.clock)),
        ),
      );
      assert.equal(results.filter((r) => r.ok).length, 1);
      for (const r of results) if (!r.ok) assert.equal(r.code, "DUPLICATE_TOOL_CALL");
      assert.equal((await ctx.store.getRun(runId))?.used.calls, 1);
    },
  ],
  [
    "begin: 60 concurrent distinct calls against a run budget of 7, exactly 7 begin",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock, { calls: 7, perTool: {} });
      const results = await Promise.all(
        Array.from(
          { length: 60 },
          (_, i) => ctx.store.begin(beginRequest(runId, `call_${i}`, ctx.clock)),
        ),
      );
      assert.equal(results.filter((r) => r.ok).length, 7);
      for (const r of results) if (!r.ok) assert.equal(r.code, "RUN_BUDGET_EXHAUSTED");
      const state = await ctx.store.getRun(runId);
      assert.equal(state?.used.calls, 7);
    },
  ],
  [
    "begin: 60 concurrent distinct calls against a tool budget of 5, exactly 5 begin",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock, {
        calls: 100,
        perTool: { fake_success: 5 },
      });
      const results = await Promise.all(
        Array.from(
          { length: 60 },
          (_, i) => ctx.store.begin(beginRequest(runId, `call_${i}`, ctx.clock)),
        ),
      );
      assert.equal(results.filter((r) => r.ok).length, 5);
      for (const r of results) if (!r.ok) assert.equal(r.code, "TOOL_BUDGET_EXHAUSTED");
      const other = await ctx.store.begin(
        beginRequest(runId, "call_other", ctx.clock, { toolName: "fake_no_evidence" }),
      );
      assert.equal(other.ok, true, "another tool still has room");
      const state = await ctx.store.getRun(runId);
      assert.equal(state?.used.calls, 6);
      assert.equal(state?.used.perTool.fake_success, 5);
    },
  ],
  [
    "begin: refusals create nothing and count nothing",
    async (ctx) => {
      const { store, clock } = ctx;
      assert.deepEqual(await store.begin(beginRequest("run-unknown", "call_1", clock)), {
        ok: false,
        code: "RUN_NOT_FOUND",
      });
      const runId = await storeRun(store, clock, { calls: 2, perTool: {} });
      assert.equal((await store.begin(beginRequest(runId, "call_1", clock))).ok, true);
      assert.deepEqual(await store.begin(beginRequest(runId, "call_1", clock)), {
        ok: false,
        code: "DUPLICATE_TOOL_CALL",
      });
      const late = await store.begin(
        beginRequest(runId, "call_late", clock, { now: clock() + 700_000 }),
      );
      assert.deepEqual(late, { ok: false, code: "DEADLINE_EXCEEDED" });
      const ended = await store.endRun({ runId, now: clock() });
      assert.equal(ended.ok, true);
      assert.deepEqual(await store.begin(beginRequest(runId, "call_2", clock)), {
        ok: false,
        code: "RUN_INACTIVE",
      });
      const state = await store.getRun(runId);
      assert.equal(state?.status, "ENDED");
      assert.equal(state?.used.calls, 1);
      for (const id of ["call_late", "call_2"]) await assertAbsent(ctx, runId, id);
    },
  ],
  [
    "begin: a key stays used for the life of its run after its record expires",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      await beginAndComplete(ctx, runId, "call_once", READY, ctx.ttlMs);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      await assertAbsent(ctx, runId, "call_once");
      assert.deepEqual(await ctx.store.begin(beginRequest(runId, "call_once", ctx.clock)), {
        ok: false,
        code: "DUPLICATE_TOOL_CALL",
      });
      assert.equal((await ctx.store.getRun(runId))?.used.calls, 1, "counted once");
    },
  ],
  [
    "begin: a repeat of the same attempt is the same begin, not a duplicate, counted once",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock, { calls: 1, perTool: {} });
      const request = beginRequest(runId, "call_retry", ctx.clock);
      const first = await ctx.store.begin(request);
      const again = await ctx.store.begin(request);
      assert.equal(first.ok && again.ok, true);
      assert.deepEqual(again, first);
      assert.equal((await ctx.store.getRun(runId))?.used.calls, 1);
    },
  ],
  [
    "complete: a repeat of the same attempt and outcome returns the same record",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const attemptId = await beginAndComplete(ctx, runId, "call_once", READY);
      const first = await ctx.store.get(runId, "call_once");
      const again = await ctx.store.complete({
        runId,
        toolCallId: "call_once",
        attemptId,
        outcome: READY,
        now: ctx.clock(),
      });
      assert.deepEqual(again, { ok: true, record: first });
      const { toolCallIds } = await endRunIndex(ctx, runId);
      assert.deepEqual(toolCallIds, ["call_once"], "a repeated complete is indexed once");
    },
  ],
  [
    "complete: after expiry gives RECORD_EXPIRED and the record stays absent",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const request = beginRequest(runId, "call_gone", ctx.clock, { ttlMs: ctx.ttlMs });
      assert.equal((await ctx.store.begin(request)).ok, true);
      await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
      const done = await ctx.store.complete({
        runId,
        toolCallId: "call_gone",
        attemptId: request.attemptId,
        outcome: READY,
        now: ctx.clock(),
      });
      assert.deepEqual(done, { ok: false, code: "RECORD_EXPIRED" });
      await assertAbsent(ctx, runId, "call_gone");
      assert.deepEqual((await endRunIndex(ctx, runId)).toolCallIds, []);
    },
  ],
  [
    "complete: an update keeps the remaining TTL",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const request = beginRequest(runId, "call_keep", ctx.clock, { ttlMs: ctx.ttlMs });
      const begun = await ctx.store.begin(request);
      assert.ok(begun.ok);
      await ctx.advance(Math.floor(ctx.ttlMs * 0.5));
      const done = await ctx.store.complete({
        runId,
        toolCallId: "call_keep",
        attemptId: request.attemptId,
        outcome: READY,
        now: ctx.clock(),
      });
      assert.ok(done.ok);
      assert.equal(done.record.expiresAt, begun.record.expiresAt);
      await ctx.advance(Math.ceil(ctx.ttlMs * 0.75));
      await assertAbsent(ctx, runId, "call_keep");
    },
  ],
  [
    "startRun: refuses an existing run ID, and a repeat of the same attempt returns the run",
    async (ctx) => {
      const request = {
        runId: uniqueId("run"),
        deadline: ctx.clock() + 60_000,
        budget: { calls: 3, perTool: { fake_success: 1 } },
        ttlMs: 120_000,
        attemptId: "start-1",
        now: ctx.clock(),
      };
      const first = await ctx.store.startRun(request);
      assert.ok(first.ok);
      assert.deepEqual(first.run.budget, { calls: 3, perTool: { fake_success: 1 } });
      assert.deepEqual(first.run.used, { calls: 0, perTool: {} });
      assert.equal(first.run.status, "ACTIVE");
      assert.deepEqual(await ctx.store.startRun(request), first);
      assert.deepEqual(await ctx.store.startRun({ ...request, attemptId: "start-2" }), {
        ok: false,
        code: "RUN_ALREADY_EXISTS",
      });
      assert.deepEqual(await ctx.store.getRun(request.runId), first.run);
      assert.equal(await ctx.store.getRun("run-never"), null);
      assert.deepEqual(await ctx.store.endRun({ runId: "run-never", now: ctx.clock() }), {
        ok: false,
        code: "RUN_NOT_FOUND",
      });
    },
  ],
  [
    "payloads and IDs that look like JSON scalars round-trip exactly",
    async (ctx) => {
      const runId = await storeRun(ctx.store, ctx.clock);
      const awkward = ["123", "true", "null", "007", "1e3", '{"a":1}', '"quoted"', "[1,2]", "-0"];
      for (const [i, text] of awkward.entries()) {
        const toolCallId = /^[A-Za-z0-9_.:-]+$/.test(text) ? text : `call_${i}`;
        const request = beginRequest(runId, toolCallId, ctx.clock, {
          requestJson: JSON.stringify({ value: text }),
          toolName: text.replace(/[^a-z0-9]/gi, "_") || "t",
        });
        assert.ok((await ctx.store.begin(request)).ok, text);
        const outcome: CompleteOutcome = {
          status: "READY",
          evidence: "NO_EVIDENCE",
          rawJson: text,
          agentResultJson: JSON.stringify({ evidence: "NO_EVIDENCE", scope: text, content: text }),
        };
        const done = await ctx.store.complete({
          runId,
          toolCallId,
          attemptId: request.attemptId,
          outcome,
          now: ctx.clock(),
        });
        assert.ok(done.ok, text);
        const stored = await ctx.store.get(runId, toolCallId);
        assert.equal(stored?.toolCallId, toolCallId);
        assert.equal(typeof stored?.toolCallId, "string");
        assert.equal(stored?.rawJson, text);
        assert.equal(stored?.requestJson, request.requestJson);
        assert.equal(stored?.toolName, request.toolName);
        assert.equal(typeof stored?.createdAt, "number");
      }
      const unicode = '{"text":"naïve 日本 😀 \\u0000 \\ud800"}';
      const request = beginRequest(runId, "call_unicode", ctx.clock, { requestJson: unicode });
      assert.ok((await ctx.store.begin(request)).ok);
      assert.equal((await ctx.store.get(runId, "call_unicode"))?.requestJson, unicode);
    },
  ],
];

async function endRunIndex(ctx: Ctx, runId: string): Promise<{ toolCallIds: string[] }> {
  const ended = await ctx.store.endRun({ runId, now: ctx.clock() });
  assert.ok(ended.ok);
  return { toolCallIds: ended.toolCallIds };
}

function defineWideRaw(ctx: Ctx): { boundary: ToolBoundary; projected: () => number } {
  let projected = 0;
  const rawLimit = SUITE_LIMITS.rawBytes!;
  // Each "é" is one UTF-16 unit but two UTF-8 bytes: under the limit by length, over by bytes.
  const text = "é".repeat(Math.floor(rawLimit / 2) + 10);
  const boundary = new ToolBoundary({
    store: ctx.store,
    clock: ctx.clock,
    limits: SUITE_LIMITS,
    tools: [{
      name: "wide_raw",
      readOnly: true,
      execute: () => text,
      project: () => {
        projected++;
        return { evidence: "EVIDENCE_FOUND", scope: "wide", content: null };
      },
    }],
  });
  return { boundary, projected: () => projected };
}

/** Wraps a store so the named operations throw an error carrying the canary. */
function failingStore(store: Store, failing: ReadonlySet<keyof Store>): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (failing.has(property as keyof Store)) {
        return () => Promise.reject(new Error(`connection to redis://:${CANARY_SECRET}@db failed`));
      }
      return value.bind(target);
    },
  });
}
