/**
 * The Worker the workerd tests serve (bundled with `deno bundle`, `cloudflare:*` left to
 * workerd). One bundle, two roles: the main Worker (ROLE unset) and a second Worker that shares
 * its LEDGER namespace (ROLE "other"). Each route runs one scenario where it must run (in the
 * Worker, in a Durable Object, in an `Agent`) and answers what it saw as JSON, for
 * workerd_test.ts to check.
 */
import { DurableObject } from "cloudflare:workers";
import { Agent, type AgentContext, getAgentByName } from "agents";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import * as v from "valibot";
import {
  type BoundaryResult,
  defineTool,
  generateLedgerKeys,
  ToolBoundary,
} from "@tool-boundary/core";
import type { BeginReply, RunSeal, Store } from "@tool-boundary/core/store";
import { type ConformanceOptions, storeConformance } from "@tool-boundary/core/testing";
import { verifyRun } from "@tool-boundary/core/verify";
import { aiSdkTools } from "@tool-boundary/ai-sdk";
import {
  boundaryStore,
  type DurableObjectContext,
  DurableObjectStore,
  type LedgerNamespace,
  ledgerObject,
  MAX_ROW_BYTES,
  r2Archive,
  type R2BucketLike,
  type SqlStorage,
  type SweepReport,
} from "../mod.ts";

interface Env {
  ROLE?: string;
  LEDGER: LedgerNamespace;
  TEST: LedgerNamespace;
  AGENT: LedgerNamespace;
  ARCHIVE: R2BucketLike & { head(key: string): Promise<unknown> };
  OTHER?: { fetch(url: string, init?: RequestInit): Promise<Response> };
}

/** One conformance case as it ran. */
interface CaseResult {
  name: string;
  ok: boolean;
  error?: string;
}

/** An error's message and stack, and its causes'. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause === undefined ? "" : `\ncaused by: ${describe(error.cause)}`;
  return `${error.message}\n${error.stack}${cause}`;
}

/** Registers the store conformance suite and runs every case in turn, in this isolate. */
async function runSuite(options: Omit<ConformanceOptions, "test">): Promise<CaseResult[]> {
  const cases: [string, () => Promise<void>][] = [];
  await storeConformance({ ...options, test: (name, fn) => void cases.push([name, fn]) });
  const results: CaseResult[] = [];
  for (const [name, fn] of cases) {
    try {
      await fn();
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, error: describe(error) });
    }
  }
  return results;
}

/** A read-only tool that counts its executions by tool call ID and waits a moment. */
function countingTool(executions: Map<string, number>) {
  return defineTool({
    name: "lookup",
    readOnly: true,
    input: v.object({ key: v.string() }),
    execute: async ({ key }, { toolCallId }) => {
      executions.set(toolCallId, (executions.get(toolCallId) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { key, value: `value of ${key}` };
    },
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: `lookup ${raw.key}`, content: raw }),
  });
}

/** Invokes `lookup` once per ID, all at once. */
async function invokeAll(
  boundary: ToolBoundary,
  runId: string,
  ids: string[],
): Promise<BoundaryResult[]> {
  const run = await boundary.getRun(runId);
  if (run === null) throw new Error(`No run ${runId}`);
  return await Promise.all(
    ids.map((toolCallId) =>
      boundary.invoke(run, { toolCallId, runId, toolName: "lookup", input: { key: toolCallId } })
    ),
  );
}

/** What each outcome code (or READY) counted. */
function tally(results: BoundaryResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) {
    const key = result.status === "READY" ? "READY" : result.code;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** 50 parallel calls of distinct IDs under a budget of 30, then 50 of one ID, on `store`. */
async function concurrency(store: Store): Promise<unknown> {
  const executions = new Map<string, number>();
  const boundary = new ToolBoundary({ store, tools: [countingTool(executions)] });
  const ids = Array.from({ length: 50 }, (_, i) => `call_${i}`);
  const budgeted = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 30 } });
  const distinct = tally(await invokeAll(boundary, budgeted.runId, ids));
  const used = (await store.getRun(budgeted.runId))?.used.calls;
  const executed = [...executions.values()];
  executions.clear();
  const same = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 50 } });
  const repeated = tally(await invokeAll(boundary, same.runId, ids.map(() => "call_same")));
  return {
    distinct,
    used,
    executedIds: executed.length,
    mostPerId: Math.max(...executed),
    repeated,
    sameExecutions: executions.get("call_same") ?? 0,
  };
}

/** What each begin answered: BEGUN, or its refusal's code. */
function begunTally(replies: BeginReply[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const reply of replies) {
    const key = reply.ok ? "BEGUN" : reply.code;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/**
 * Cost budgets on `store`, with its clock: 60 begins of cost 5 at once against a budget of 100
 * (exactly 20 begin), 15 of them settled at once (10 spent 2, 5 their reservation) and 5 never
 * completed, then 60 more at once (exactly the 6 the refunds made room for), and the export.
 * `expire`, when given, moves the clock past the records' TTL and sweeps them, before the end.
 */
async function costBudget(
  store: Store & RunSeal,
  clock: () => number,
  expire?: () => Promise<unknown>,
): Promise<unknown> {
  const runId = `run-cost-${crypto.randomUUID()}`;
  await store.startRun({
    runId,
    deadline: clock() + 600_000,
    budget: { calls: 200, perTool: {}, cost: 100 },
    ttlMs: 600_000,
    attemptId: "start",
    now: clock(),
  });
  const begin = (toolCallId: string, cost = 5) =>
    store.begin({
      runId,
      toolCallId,
      toolName: "metered",
      requestJson: "{}",
      requestDigest: `digest-${toolCallId}`,
      attemptId: `attempt-${toolCallId}`,
      ttlMs: 60_000,
      now: clock(),
      cost,
    });
  const wave = (from: number) =>
    Promise.all(Array.from({ length: 60 }, (_, i) => begin(`call_${from + i}`)));
  const runCost = async () => {
    const run = await store.getRun(runId);
    return { cost: run?.cost, calls: run?.used.calls };
  };
  const first = await wave(0);
  const begun = first.flatMap((reply) => reply.ok ? [reply.record] : [])
    .sort((a, b) => a.seq - b.seq).map((record) => record.toolCallId);
  const afterFirst = await runCost();
  const complete = (toolCallId: string, spent?: number) =>
    store.complete({
      runId,
      toolCallId,
      attemptId: `attempt-${toolCallId}`,
      now: clock(),
      outcome: spent === undefined
        ? { status: "ERROR", errorCode: "EXECUTION_FAILED", rawJson: null }
        : { status: "READY", evidence: "NO_EVIDENCE", rawJson: "{}", agentResultJson: "{}" },
      ...(spent === undefined ? {} : { spent }),
    });
  const settled = await Promise.all([
    ...begun.slice(0, 10).map((id) => complete(id, 2)),
    ...begun.slice(10, 15).map((id) => complete(id)),
  ]);
  const afterSettle = await runCost();
  const second = await wave(100);
  const afterSecond = await runCost();
  const exported = await store.exportRun(runId);
  const costs: Record<string, number> = {};
  for (const call of exported?.calls ?? []) {
    const key = JSON.stringify(call.record?.cost ?? null);
    costs[key] = (costs[key] ?? 0) + 1;
  }
  const crashed = begun.slice(15);
  let expired: unknown = null;
  if (expire !== undefined) {
    const swept = await expire();
    expired = {
      swept,
      records: await Promise.all(crashed.map((id) => store.get(runId, id))),
      ...await runCost(),
      // Held by calls that never completed: a cost of 1 does not fit, a cost of 0 does.
      one: begunTally([await begin("call_one", 1)]),
      zero: begunTally([await begin("call_zero", 0)]),
      late: (await complete(crashed[0]!, 0)).ok,
    };
  }
  const ended = await store.endRun({ runId, now: clock() });
  return {
    first: begunTally(first),
    afterFirst,
    settled: settled.map((reply) => reply.ok ? JSON.stringify(reply.record.cost) : reply.code)
      .sort(),
    afterSettle,
    second: begunTally(second),
    afterSecond,
    exported: { cost: exported?.run.cost, budget: exported?.run.budget.cost, records: costs },
    expired,
    ended: ended.ok ? ended.run.cost : ended.code,
  };
}

/**
 * 60 invokes at once of a tool of cost 5, through a boundary, against a budget of 100: exactly
 * 20 run, each spending its reservation.
 */
async function costBoundary(store: Store): Promise<unknown> {
  const executions = new Map<string, number>();
  const metered = defineTool({
    name: "metered",
    readOnly: true,
    cost: 5,
    input: v.object({ key: v.string() }),
    execute: async ({ key }, { toolCallId }) => {
      executions.set(toolCallId, (executions.get(toolCallId) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { key };
    },
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "metered", content: raw }),
  });
  const boundary = new ToolBoundary({ store, tools: [metered] });
  const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 100, cost: 100 } });
  const results = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      boundary.invoke(run, {
        toolCallId: `call_${i}`,
        runId: run.runId,
        toolName: "metered",
        input: { key: `k${i}` },
      })),
  );
  const state = await store.getRun(run.runId);
  return {
    outcomes: tally(results),
    executed: executions.size,
    cost: state?.cost,
    calls: state?.used.calls,
  };
}

/** Rows of the ledger's tables in an object's storage. */
function ledgerRows(sql: SqlStorage, prefix = "tb_"): Record<string, number> {
  const rows: Record<string, number> = {};
  for (const table of ["runs", "calls", "records"]) {
    const [row] = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${prefix}${table}`).toArray();
    rows[table] = row!.n;
  }
  return rows;
}

/** The ledger namespace's class, sweeping as soon as something expired, with a log of alarms. */
export class LedgerObject extends ledgerObject(DurableObject, { sweepEveryMs: 0 }) {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectContext, env: unknown) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec("CREATE TABLE IF NOT EXISTS test_alarms (at INTEGER, report TEXT)");
  }

  override async alarm(): Promise<SweepReport> {
    const report = await super.alarm();
    this.#sql.exec("INSERT INTO test_alarms VALUES (?, ?)", Date.now(), JSON.stringify(report));
    return report;
  }

  /** The ledger's rows, and every alarm so far. */
  inspectStorage(): { rows: Record<string, number>; alarms: SweepReport[] } {
    const alarms = this.#sql.exec<{ report: string }>("SELECT report FROM test_alarms").toArray();
    return {
      rows: ledgerRows(this.#sql),
      alarms: alarms.map((row) => JSON.parse(row.report)),
    };
  }
}

/** A plain Durable Object that holds stores in its own storage, for the in-object scenarios. */
export class TestObject extends DurableObject {
  readonly #ctx: DurableObjectContext;

  constructor(ctx: DurableObjectContext, env: unknown) {
    super(ctx, env);
    this.#ctx = ctx;
  }

  /** The suite on a store in this object's storage, with a clock the suite moves. */
  conformance(): Promise<CaseResult[]> {
    let made = 0;
    return runSuite({
      name: "DurableObjectStore",
      capabilities: ["CallIndex", "RunIndex", "RunSeal"],
      createStore: () => {
        let now = Date.UTC(2026, 0, 1);
        const clock = () => now;
        const store = new DurableObjectStore(this.#ctx, {
          // Each case its own tables, as a fresh store would be.
          prefix: `case${made++}_`,
          clock,
          scheduleSweep: () => {},
        });
        return { store, clock, advance: (ms: number) => void (now += ms) };
      },
    });
  }

  /** 50 parallel calls in this object, through a boundary beside its store. */
  concurrency(): Promise<unknown> {
    return concurrency(this.#concurrencyStore());
  }

  /**
   * A begin and a complete whose row would pass MAX_ROW_BYTES: each refused whole, before
   * SQLite, and the run and record left as they were.
   */
  async rowLimit(): Promise<unknown> {
    const store = new DurableObjectStore(this.#ctx, { prefix: "rows_" });
    const now = Date.now();
    const runId = `run-rows-${crypto.randomUUID()}`;
    await store.startRun({
      runId,
      deadline: now + 60_000,
      budget: { calls: 5, perTool: {} },
      ttlMs: 60_000,
      attemptId: "start",
      now,
    });
    const big = JSON.stringify("x".repeat(MAX_ROW_BYTES));
    const request = (toolCallId: string, requestJson: string) => ({
      runId,
      toolCallId,
      toolName: "lookup",
      requestJson,
      requestDigest: `digest-${toolCallId}`,
      attemptId: `attempt-${toolCallId}`,
      ttlMs: 60_000,
      now,
    });
    const errorOf = (promise: Promise<unknown>) =>
      promise.then(() => "no error", (error: Error) => `${error.name}: ${error.message}`);
    const begin = await errorOf(store.begin(request("call_big", big)));
    await store.begin(request("call_ok", "{}"));
    const complete = await errorOf(store.complete({
      runId,
      toolCallId: "call_ok",
      attemptId: "attempt-call_ok",
      now,
      outcome: { status: "READY", evidence: "NO_EVIDENCE", rawJson: big, agentResultJson: "{}" },
    }));
    return {
      begin,
      complete,
      bigRecord: await store.get(runId, "call_big"),
      okStatus: (await store.get(runId, "call_ok"))?.status,
      used: (await store.getRun(runId))?.used.calls,
      calls: (await store.listCalls(runId))?.calls.map((call) => call.toolCallId),
    };
  }

  /**
   * Sweeps asked of a scheduler that fails once: the write stays, and the next write whose row
   * expires asks again; a row that expires after the sweep asked for asks nothing.
   */
  async scheduling(): Promise<unknown> {
    const asked: number[] = [];
    let now = Date.UTC(2026, 0, 1);
    const store = new DurableObjectStore(this.#ctx, {
      prefix: `sched${crypto.randomUUID().slice(0, 8)}_`,
      clock: () => now,
      scheduleSweep: (at) => {
        asked.push(at);
        if (asked.length === 1) throw new Error("scheduler down");
      },
    });
    const runId = "run-sched";
    const started = await store.startRun({
      runId,
      deadline: now + 600_000,
      budget: { calls: 5, perTool: {} },
      ttlMs: 600_000,
      attemptId: "start",
      now,
    }).then(() => "no error", (error: Error) => error.message);
    const begin = (toolCallId: string, ttlMs: number) =>
      store.begin({
        runId,
        toolCallId,
        toolName: "lookup",
        requestJson: "{}",
        requestDigest: `digest-${toolCallId}`,
        attemptId: `attempt-${toolCallId}`,
        ttlMs,
        now,
      });
    const run = await store.getRun(runId);
    const first = await begin("call_1", 300_000);
    const second = await begin("call_2", 400_000);
    now += 300_000;
    const swept = await store.sweep();
    return {
      started,
      runKept: run?.runId === runId,
      begun: [first.ok, second.ok],
      asked: asked.map((at) => at - Date.UTC(2026, 0, 1)),
      swept,
    };
  }

  /**
   * Cost budgets on a store in this object's storage, with a clock moved past the records' TTL
   * at the end: a reservation whose call never completed stays held once its record is swept.
   */
  costBudget(): Promise<unknown> {
    let now = Date.UTC(2026, 0, 1);
    const clock = () => now;
    const store = new DurableObjectStore(this.#ctx, {
      prefix: `cost${crypto.randomUUID().slice(0, 8)}_`,
      clock,
      scheduleSweep: () => {},
    });
    return costBudget(store, clock, () => {
      now += 120_000;
      return store.sweep();
    });
  }

  /**
   * Tables of layout 1 (before cost budgets), with a run and a completed call: a store of this
   * version adds the cost columns in place, the rows kept (without a cost), and marks them 2.
   */
  async migration(): Promise<unknown> {
    const prefix = `mig${crypto.randomUUID().slice(0, 8)}_`;
    const sql = this.#ctx.storage.sql;
    const now = Date.now();
    const before = new DurableObjectStore(this.#ctx, { prefix, scheduleSweep: () => {} });
    await before.startRun({
      runId: "run-old",
      deadline: now + 600_000,
      budget: { calls: 5, perTool: {} },
      ttlMs: 600_000,
      attemptId: "start",
      now,
    });
    const request = (toolCallId: string, cost?: number) => ({
      runId: "run-old",
      toolCallId,
      toolName: "lookup",
      requestJson: "{}",
      requestDigest: `digest-${toolCallId}`,
      attemptId: `attempt-${toolCallId}`,
      ttlMs: 600_000,
      now,
      ...(cost === undefined ? {} : { cost }),
    });
    await before.begin(request("call_old"));
    await before.complete({
      runId: "run-old",
      toolCallId: "call_old",
      attemptId: "attempt-call_old",
      now,
      outcome: { status: "READY", evidence: "NO_EVIDENCE", rawJson: "{}", agentResultJson: "{}" },
    });
    const oldRecord = await before.get("run-old", "call_old");
    // Layout 1: the same tables without the cost columns.
    const columns = (table: string) =>
      sql.exec<{ name: string }>(`PRAGMA table_info(${prefix}${table})`).toArray()
        .map((row) => row.name);
    for (const column of ["budget_cost", "cost_reserved", "cost_spent"]) {
      sql.exec(`ALTER TABLE ${prefix}runs DROP COLUMN ${column}`);
    }
    for (const column of ["cost_reserved", "cost_spent"]) {
      sql.exec(`ALTER TABLE ${prefix}records DROP COLUMN ${column}`);
    }
    sql.exec(`UPDATE ${prefix}meta SET value = 1 WHERE key = 'schema'`);
    const layout1 = { runs: columns("runs").length, records: columns("records").length };
    const store = new DurableObjectStore(this.#ctx, { prefix, scheduleSweep: () => {} });
    // Opened again: already layout 2, nothing to add.
    new DurableObjectStore(this.#ctx, { prefix, scheduleSweep: () => {} });
    const [schema] = sql.exec<{ value: number }>(
      `SELECT value FROM ${prefix}meta WHERE key = 'schema'`,
    ).toArray();
    const run = await store.getRun("run-old");
    const record = await store.get("run-old", "call_old");
    const costed = await store.begin(request("call_new", 7));
    return {
      layout1,
      layout2: { runs: columns("runs").length, records: columns("records").length },
      added: {
        runs: columns("runs").slice(layout1.runs),
        records: columns("records").slice(layout1.records),
      },
      schema: schema!.value,
      runHasCost: run !== null && ("cost" in run || "cost" in run.budget),
      recordKept: JSON.stringify(record) === JSON.stringify(oldRecord),
      costed: costed.ok ? costed.record.cost : costed.code,
      runCost: (await store.getRun("run-old"))?.cost,
      newRun: await store.startRun({
        runId: "run-new",
        deadline: now + 600_000,
        budget: { calls: 5, perTool: {}, cost: 10 },
        ttlMs: 600_000,
        attemptId: "start",
        now,
      }).then((reply) => reply.ok ? [reply.run.budget.cost, reply.run.cost] : reply.code),
    };
  }

  /** Tables of a layout this version does not know: the store refuses them, writing nothing. */
  schema(): unknown {
    const prefix = `schema${crypto.randomUUID().slice(0, 8)}_`;
    new DurableObjectStore(this.#ctx, { prefix });
    const sql = this.#ctx.storage.sql;
    sql.exec(`UPDATE ${prefix}meta SET value = 3 WHERE key = 'schema'`);
    let refused = "";
    try {
      new DurableObjectStore(this.#ctx, { prefix });
    } catch (error) {
      refused = (error as Error).message.replace(prefix, "<prefix>");
    }
    const [row] = sql.exec<{ value: number }>(
      `SELECT value FROM ${prefix}meta WHERE key = 'schema'`,
    ).toArray();
    return { refused, schema: row!.value };
  }

  /** The object's alarm: the store's sweep (setAlarm needs the handler). */
  async alarm(): Promise<void> {
    await this.#concurrencyStore().sweep();
  }

  #concurrencyStore(): DurableObjectStore {
    return new DurableObjectStore(this.#ctx, { prefix: "conc_" });
  }
}

/** An Agent whose tools go through a boundary on a ledger in its own storage. */
export class SupportAgent extends Agent<Env> {
  readonly ledger: DurableObjectStore;
  readonly boundary: ToolBoundary;
  readonly executions = new Map<string, number>();
  readonly #ctx: DurableObjectContext;

  constructor(ctx: AgentContext, env: Env) {
    super(ctx, env);
    this.#ctx = ctx;
    this.ledger = new DurableObjectStore(ctx, {
      scheduleSweep: (at) => this.schedule(new Date(at), "sweepLedger"),
    });
    const searchLogs = defineTool({
      name: "search_logs",
      description: "Searches the service logs.",
      readOnly: true,
      input: v.object({ query: v.string() }),
      execute: ({ query }, { toolCallId }) => {
        this.executions.set(toolCallId, (this.executions.get(toolCallId) ?? 0) + 1);
        return { lines: [`12:01 ${query}`], apiKey: "sk-live-harness-only" };
      },
      project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "logs", content: raw.lines }),
    });
    const restart = defineTool({
      name: "restart_service",
      readOnly: false,
      execute: () => ({ restarted: true }),
      project: () => ({ evidence: "EVIDENCE_FOUND", scope: "", content: null }),
    });
    this.boundary = new ToolBoundary({ store: this.ledger, tools: [searchLogs, restart] });
  }

  async sweepLedger(): Promise<void> {
    await this.ledger.sweep();
  }

  /** Two agent turns of a scripted model; the second repeats a tool call ID of the first. */
  async turns(): Promise<unknown> {
    const run = await this.boundary.startRun({ ttlMs: 5 * 60_000, budget: { calls: 10 } });
    const call = (toolCallId: string, toolName: string, input: string) => ({
      type: "tool-call" as const,
      toolCallId,
      toolName,
      input,
    });
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    };
    const step = (content: ReturnType<typeof call>[]) => ({
      content,
      finishReason: { unified: "tool-calls" as const, raw: undefined },
      usage,
      warnings: [],
    });
    const answer = (text: string) => ({
      content: [{ type: "text" as const, text }],
      finishReason: { unified: "stop" as const, raw: undefined },
      usage,
      warnings: [],
    });
    const outputsOf = (model: MockLanguageModelV4) => {
      const message = model.doGenerateCalls[1]?.prompt.at(-1);
      return message?.role === "tool"
        ? message.content.map((part) => part.type === "tool-result" ? part.output : null)
        : null;
    };
    const first = new MockLanguageModelV4({
      doGenerate: [
        step([
          call("call_1", "search_logs", '{"query":"timeout"}'),
          call("call_2", "restart_service", "{}"),
        ]),
        answer("An upstream timeout at 12:01."),
      ],
    });
    const one = await generateText({
      model: first,
      tools: aiSdkTools(this.boundary, run),
      prompt: "Why is the api down?",
      stopWhen: isStepCount(3),
    });
    const second = new MockLanguageModelV4({
      doGenerate: [step([call("call_1", "search_logs", '{"query":"timeout"}')]), answer("Same.")],
    });
    const two = await generateText({
      model: second,
      tools: aiSdkTools(this.boundary, run),
      prompt: "And now?",
      stopWhen: isStepCount(3),
    });
    const record = await this.boundary.inspect(run.runId, "call_1");
    const tables = this.#ctx.storage.sql.exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    ).toArray().map((row) => row.name);
    const facts = await this.boundary.endRun(run);
    return {
      texts: [one.text, two.text],
      outputs: [outputsOf(first), outputsOf(second)],
      record: record === null ? null : [record.status, record.raw],
      executions: Object.fromEntries(this.executions),
      facts: facts.map((fact) => fact.toolCallId),
      tables,
      rows: ledgerRows(this.#ctx.storage.sql),
      sweeps: this.getSchedules().filter((s) => s.callback === "sweepLedger").length,
      prompts: JSON.stringify([first, second].map((m) => m.doGenerateCalls.map((c) => c.prompt))),
    };
  }
}

/** Seals a signed run on the namespace with the R2 archive as the boundary's, and verifies it. */
async function archive(env: Env): Promise<unknown> {
  const keys = await generateLedgerKeys();
  const executions = new Map<string, number>();
  const store = r2Archive(env.ARCHIVE);
  const boundary = new ToolBoundary({
    store: boundaryStore(env.LEDGER),
    tools: [countingTool(executions)],
    ledgerKey: keys.privateKey,
    archive: store,
  });
  const run = await boundary.startRun({ ttlMs: 60_000 });
  await invokeAll(boundary, run.runId, ["call_1", "call_2"]);
  const before = await store.get(run.runId);
  // endRun seals the run and writes its bundle to R2 before it answers.
  await boundary.endRun(run);
  const kept = await store.get(run.runId);
  const bundleJson = JSON.stringify(await boundary.exportRun(run.runId));
  await store.put(run.runId, bundleJson);
  let refused = "";
  try {
    await store.put(run.runId, bundleJson.replace("call_2", "call_9"));
  } catch (error) {
    refused = (error as Error).message;
  }
  const tampered = JSON.parse(kept!);
  tampered.records.reverse();
  return {
    before,
    key: (await env.ARCHIVE.head(`runs/${run.runId}.json`)) !== null,
    same: kept === bundleJson,
    refused,
    verdict: await verifyRun(JSON.parse(kept!), keys.publicKey),
    tampered: await verifyRun(tampered, keys.publicKey),
    missing: await store.get("run-never-archived"),
  };
}

/** Starts a run on the namespace and calls once; or reads it back (after a restart). */
async function restart(env: Env, phase: string): Promise<unknown> {
  const executions = new Map<string, number>();
  const boundary = new ToolBoundary({
    store: boundaryStore(env.LEDGER),
    tools: [countingTool(executions)],
  });
  const runId = "run-restart";
  if (phase === "write") {
    await boundary.startRun({ runId, ttlMs: 600_000, budget: { calls: 5 } });
    await invokeAll(boundary, runId, ["call_1"]);
  } else {
    const again = await invokeAll(boundary, runId, ["call_1", "call_2"]);
    return {
      record: await boundary.inspect(runId, "call_1"),
      again: again.map((result) => result.status === "READY" ? "READY" : result.code),
      used: (await boundary.store.getRun(runId))?.used.calls,
      executions: Object.fromEntries(executions),
    };
  }
  return { record: await boundary.inspect(runId, "call_1") };
}

/** TTL by alarm: a run and a record that expire, on the namespace; or what its object holds. */
async function expiry(env: Env, phase: string, runId: string): Promise<unknown> {
  const store = boundaryStore(env.LEDGER);
  if (phase === "start") {
    const boundary = new ToolBoundary({
      store,
      tools: [countingTool(new Map())],
      recordTtlMs: 500,
    });
    await boundary.startRun({ runId, ttlMs: 1_000 });
    const [result] = await invokeAll(boundary, runId, ["call_1"]);
    return { status: result!.status };
  }
  const object = env.LEDGER.get(env.LEDGER.idFromName(runId)) as LedgerObject;
  return {
    run: await store.getRun(runId),
    record: await store.get(runId, "call_1"),
    storage: await object.inspectStorage(),
  };
}

/** One side of the two-Worker scenario: the calls, each through this Worker's boundary. */
async function twoWorkers(env: Env, runId: string, ids: string[]): Promise<unknown> {
  const executions = new Map<string, number>();
  const boundary = new ToolBoundary({
    store: boundaryStore(env.LEDGER),
    tools: [countingTool(executions)],
  });
  const results = await invokeAll(boundary, runId, ids);
  return {
    outcomes: results.map((result) => result.status === "READY" ? "READY" : result.code),
    executions: Object.fromEntries(executions),
  };
}

async function route(request: Request, env: Env): Promise<unknown> {
  const url = new URL(request.url);
  const query = (name: string) => url.searchParams.get(name) ?? "";
  if (env.ROLE === "other") {
    if (url.pathname === "/two-workers") {
      return twoWorkers(env, query("runId"), query("ids").split(","));
    }
    throw new Error(`No route ${url.pathname} in the other Worker`);
  }
  switch (url.pathname) {
    case "/conformance/object": {
      const object = env.TEST.get(env.TEST.idFromName("conformance")) as TestObject;
      return object.conformance();
    }
    case "/conformance/namespace":
      return runSuite({
        name: "boundaryStore",
        createStore: () => ({ store: boundaryStore(env.LEDGER) }),
        // One object per run: no RunIndex.
        capabilities: ["CallIndex", "RunSeal"],
      });
    case "/concurrency/object": {
      const object = env.TEST.get(env.TEST.idFromName("concurrency")) as TestObject;
      return object.concurrency();
    }
    case "/row-limit": {
      const object = env.TEST.get(env.TEST.idFromName("row-limit")) as TestObject;
      return object.rowLimit();
    }
    case "/scheduling": {
      const object = env.TEST.get(env.TEST.idFromName("scheduling")) as TestObject;
      return object.scheduling();
    }
    case "/cost/object": {
      const object = env.TEST.get(env.TEST.idFromName("cost")) as TestObject;
      return object.costBudget();
    }
    case "/cost/namespace":
      return costBudget(boundaryStore(env.LEDGER), Date.now);
    case "/cost/boundary":
      return costBoundary(boundaryStore(env.LEDGER));
    case "/migration": {
      const object = env.TEST.get(env.TEST.idFromName("migration")) as TestObject;
      return object.migration();
    }
    case "/schema": {
      const object = env.TEST.get(env.TEST.idFromName("schema")) as TestObject;
      return object.schema();
    }
    case "/concurrency/namespace":
      return concurrency(boundaryStore(env.LEDGER));
    case "/expiry":
      return expiry(env, query("phase"), query("runId"));
    case "/restart":
      return restart(env, query("phase"));
    case "/archive":
      return archive(env);
    case "/agent": {
      const agent = await getAgentByName(env.AGENT as never, "support") as unknown as SupportAgent;
      return agent.turns();
    }
    case "/two-workers": {
      const runId = `run-two-${crypto.randomUUID()}`;
      const store = boundaryStore(env.LEDGER);
      const boundary = new ToolBoundary({ store, tools: [countingTool(new Map())] });
      await boundary.startRun({ runId, ttlMs: 60_000, budget: { calls: 7 } });
      const ids = (from: number, to: number) =>
        Array.from({ length: to - from + 1 }, (_, i) => `call_${from + i}`).join(",");
      const [main, other] = await Promise.all([
        twoWorkers(env, runId, ids(1, 6).split(",")),
        env.OTHER!.fetch(`http://other/two-workers?runId=${runId}&ids=${ids(4, 9)}`)
          .then(async (res) => {
            if (!res.ok) throw new Error(`other Worker: ${res.status} ${await res.text()}`);
            return res.json();
          }),
      ]);
      return { main, other, run: await store.getRun(runId), calls: await store.listCalls(runId) };
    }
  }
  throw new Error(`No route ${url.pathname}`);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    try {
      return Response.json(await route(request, env));
    } catch (error) {
      return new Response(describe(error), { status: 500 });
    }
  },
};
