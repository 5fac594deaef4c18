/**
 * The reference model of the boundary and its store, the commands the property tests generate,
 * and the runner that drives a real system and the model side by side, comparing outcome codes
 * and record states after every step.
 *
 * The model is small on purpose: maps of runs and records, budgets, TTLs, the progress index,
 * and the order of the checks as DESIGN.md and the README state them. Anything the real system
 * does differently is a failure, with the command list as the counterexample.
 *
 * @module
 */
import {
  type BoundaryResult,
  ERROR_MESSAGES,
  type ErrorCode,
  type RunContext,
  ToolBoundary,
} from "../../src/mod.ts";
import type { CanonicalRecord } from "../../src/harness/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { isDeepStrictEqual } from "node:util";
import { MemoryStore } from "../../src/memory/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import { check, checkEqual, type Figures } from "./figures.ts";
import { MODEL_LIMITS, MODEL_TOOLS, modelTools, T_BUDGET, type ToolCounters } from "./tools.ts";

/** Run IDs the commands use: all safe, some of them JSON scalars as text. */
export const RUN_IDS = ["run-a", "42", "null"] as const;
/** A run ID never started: a forged context names it. */
export const FORGED_RUN_ID = "run-forged";
/** Safe tool call IDs, including ones that look like JSON scalars and the longest allowed. */
export const CALL_IDS = [
  "call_0",
  "toolu_01A9",
  "123",
  "true",
  "functions.search:0",
  "550e8400-e29b-41d4-a716-446655440000",
  "1e3",
  "c".repeat(256),
] as const;
/** Unsafe tool call IDs: each must be refused with INVALID_TOOL_CALL_ID. */
export const BAD_CALL_IDS: readonly unknown[] = [
  "",
  " call_0",
  "call_0\n",
  "a{b}",
  "a/b",
  "ünï",
  "c".repeat(257),
  "a b",
  7,
  null,
  ["call_0"],
];

/** How a command shapes the tool input. */
export type InputKind =
  | "obj"
  | "text"
  | "badText"
  | "array"
  | "big"
  | "deep"
  | "schemaBad"
  | "proto";
/** How a command shapes the envelope around it. */
export type EnvelopeKind = "ok" | "badId" | "mismatch" | "unknownTool";

/** One step of a generated program. */
export type Command =
  | {
    t: "start";
    run: number;
    ttlMs: number;
    calls: number;
    perTool: number | null;
    /** The run's cost budget; absent or null: none. */
    cost?: number | null;
  }
  | {
    t: "invoke";
    ctx: number;
    call: number;
    tool: string;
    input: InputKind;
    env: EnvelopeKind;
    bad: number;
    ms: number;
  }
  | { t: "burst"; ctx: number; calls: number[]; tool: "t_found" | "t_none" }
  | { t: "inspect"; run: number; call: number }
  | { t: "end"; run: number; viaCtx: boolean }
  | { t: "advance"; ms: number };

interface ModelRun {
  runId: string;
  /** The instance: a context of an earlier run of the same ID names another start. */
  startedAt: number;
  deadline: number;
  expiresAt: number;
  calls: number;
  perTool: Record<string, number>;
  used: number;
  usedPerTool: Record<string, number>;
  /** The cost budget, or null. */
  cost: number | null;
  /** What its costed calls spent (every one completes before the next command). */
  spent: number;
  /** Whether a costed call began (the run has a `cost` once it has a budget or one did). */
  costed: boolean;
  ended: boolean;
  /** Completed identities: one group per invoke, a burst's group in any order. */
  progress: string[][];
  /**
   * Keys begun in this run (the "ever" of "one record per key, ever"), each with the request it
   * was begun with (its tool and input): the same request again is a duplicate, another (another
   * input, or another tool) a conflict.
   */
  begun: Map<string, unknown>;
}

interface ModelRecord {
  runId: string;
  toolCallId: string;
  toolName: string;
  status: "PROJECTING" | "READY" | "ERROR";
  evidence: "EVIDENCE_FOUND" | "NO_EVIDENCE" | "ERROR" | null;
  errorCode: ErrorCode | null;
  rawKept: boolean;
  request: unknown;
  createdAt: number;
  expiresAt: number;
  agentResult: unknown;
  cost?: { reserved: number; spent: number | null };
}

interface ContextEntry {
  ctx: RunContext;
  /** Ended through this very object: the boundary refuses it in preflight. */
  endedHere: boolean;
}

/** A boundary, its store and clock, wired for the model. */
export interface ModelSystem {
  /** Store name for messages and figures. */
  name: string;
  boundary: ToolBoundary;
  store: Store;
  counters: ToolCounters;
  /** The clock the boundary and the store follow. */
  now(): number;
  /** Moves time forward (a fake clock), or `null` when time is real and cannot be moved. */
  advance: ((ms: number) => void) | null;
  /** Record TTL in force. */
  recordTtlMs: number;
  /** Releases what the system holds. */
  close?: () => Promise<void>;
}

/** Options for a model system's boundary. */
export const MODEL_RECORD_TTL_MS = 1_000;

/**
 * A MemoryStore system on a fake clock.
 *
 * @param recordTtlMs Record TTL.
 * @returns The system.
 */
export function memorySystem(recordTtlMs = MODEL_RECORD_TTL_MS): ModelSystem {
  let now = Date.UTC(2026, 5, 1);
  const clock = () => now;
  const counters: ToolCounters = { execute: new Map(), project: new Map() };
  const advance = (ms: number) => {
    now += ms;
  };
  const store = new MemoryStore({ clock });
  const boundary = new ToolBoundary({
    store,
    tools: modelTools(counters, advance),
    limits: MODEL_LIMITS,
    recordTtlMs,
    clock,
  });
  return { name: "memory", boundary, store, counters, now: clock, advance, recordTtlMs };
}

/**
 * A system on any store, with real time (for remote stores).
 *
 * @param name Store name.
 * @param store The store.
 * @param recordTtlMs Record TTL.
 * @returns The system.
 */
export function realTimeSystem(name: string, store: Store, recordTtlMs: number): ModelSystem {
  const counters: ToolCounters = { execute: new Map(), project: new Map() };
  const boundary = new ToolBoundary({
    store,
    tools: modelTools(counters, (ms) => new Promise((r) => setTimeout(r, ms))),
    limits: MODEL_LIMITS,
    recordTtlMs,
  });
  return { name, boundary, store, counters, now: Date.now, advance: null, recordTtlMs };
}

const key = (runId: string, toolCallId: string) => `${runId}/${toolCallId}`;

function inputFor(kind: InputKind, tool: string, toolCallId: string, ms: number): unknown {
  const obj: Record<string, unknown> = { q: `q-${toolCallId.slice(0, 12)}` };
  if (tool === "t_clock") obj.ms = ms;
  switch (kind) {
    case "obj":
      return obj;
    case "text":
      return JSON.stringify(obj);
    case "badText":
      return '{"q":"unterminated';
    case "array":
      return [obj];
    case "big":
      return { ...obj, pad: "x".repeat(MODEL_LIMITS.requestBytes) };
    case "deep": {
      let deep: unknown = obj;
      for (let i = 0; i < MODEL_LIMITS.inputDepth + 4; i++) deep = { d: deep };
      return deep;
    }
    case "schemaBad":
      return { ...obj, q: 5 };
    case "proto":
      return JSON.stringify({ ...obj }).replace("{", '{"__proto__":{"polluted":1},');
  }
}

/** What preflight makes of the input, before the schema, authorization and read-only checks. */
function inputCode(kind: InputKind, tool: string): ErrorCode | null {
  switch (kind) {
    case "badText":
    case "array":
    case "deep":
      return "INVALID_INPUT";
    case "big":
      // The schema drops the padding, and the size limit applies to what the tool receives.
      return tool === "t_schema" ? null : "REQUEST_TOO_LARGE";
    case "schemaBad":
      return tool === "t_schema" ? "INVALID_INPUT" : null;
    default:
      return null;
  }
}

/** What tells a repeat from another request under a used key: the tool and the stored input. */
function begunAs(input: unknown, tool: string): unknown {
  return { tool, request: storedRequest(input, tool) };
}

/** The request as the record must store it. */
function storedRequest(input: unknown, tool: string): unknown {
  const value = typeof input === "string" ? JSON.parse(input) : input;
  if (tool === "t_schema") return { q: (value as { q: unknown }).q };
  return value;
}

/** A normalized outcome, for comparing stores with each other. */
export type TraceEntry = string;

/** Marks the point after which two stores' traces may differ (a budget race in a burst). */
export const DIVERGED = "~diverged";

/**
 * The part of a trace that must be equal on every store: up to the first budget race.
 *
 * @param trace A trace from {@linkcode runProgram}.
 * @returns Its deterministic prefix.
 */
export function comparable(trace: readonly TraceEntry[]): TraceEntry[] {
  const at = trace.indexOf(DIVERGED);
  return at < 0 ? [...trace] : trace.slice(0, at);
}

/**
 * Runs a program on a system and the model, checking after every step.
 *
 * @param sys The system.
 * @param commands The program.
 * @param f Counters.
 * @returns The trace of normalized outcomes.
 */
export async function runProgram(
  sys: ModelSystem,
  commands: readonly Command[],
  f: Figures,
): Promise<TraceEntry[]> {
  const runs = new Map<string, ModelRun>();
  const records = new Map<string, ModelRecord>();
  const contexts: ContextEntry[] = [];
  const executions = new Map<string, number>();
  const projections = new Map<string, number>();
  const trace: TraceEntry[] = [];
  const ttl = sys.recordTtlMs;
  let modelNow = sys.now();
  const tick = () => {
    if (sys.advance === null) modelNow = sys.now();
  };
  const liveRun = (runId: string) => {
    const run = runs.get(runId);
    if (run !== undefined && run.expiresAt <= modelNow) {
      runs.delete(runId);
      return undefined;
    }
    return run;
  };
  const liveRecord = (k: string) => {
    const record = records.get(k);
    if (record !== undefined && record.expiresAt <= modelNow) {
      records.delete(k);
      return undefined;
    }
    return record;
  };
  // The live run a context names: another instance of its ID is no run of it.
  const runOf = (ctx: RunContext) => {
    const run = liveRun(ctx.runId);
    return run?.startedAt === ctx.startedAt ? run : undefined;
  };
  const where = (i: number, c: Command) => `${sys.name} step ${i} ${JSON.stringify(c)}`;

  for (const [i, command] of commands.entries()) {
    f.steps++;
    tick();
    const at = where(i, command);
    switch (command.t) {
      case "start": {
        const runId = RUN_IDS[command.run % RUN_IDS.length]!;
        const perTool = command.perTool === null ? undefined : { t_found: command.perTool };
        const cost = command.cost ?? null;
        const existing = liveRun(runId);
        let ctx: RunContext | null = null;
        let code: string | null = null;
        try {
          ctx = await sys.boundary.startRun({
            runId,
            ttlMs: command.ttlMs,
            budget: {
              calls: command.calls,
              ...(perTool ? { perTool } : {}),
              ...(cost === null ? {} : { cost }),
            },
          });
        } catch (error) {
          code = (error as { code?: string }).code ?? String(error);
        }
        tick();
        if (existing !== undefined) {
          checkEqual(f, code, "RUN_ALREADY_EXISTS", at);
          trace.push("start:RUN_ALREADY_EXISTS");
          break;
        }
        check(f, ctx !== null, () => `${at}: startRun failed with ${code}`);
        const deadline = ctx!.deadline;
        if (sys.advance !== null) checkEqual(f, deadline, modelNow + command.ttlMs, at);
        checkEqual(
          f,
          ctx!.budget,
          {
            calls: command.calls,
            perTool: { t_budget: T_BUDGET, ...perTool },
            ...(cost === null ? {} : { cost }),
          },
          at,
        );
        runs.set(runId, {
          runId,
          startedAt: ctx!.startedAt,
          deadline,
          expiresAt: deadline + ttl,
          calls: command.calls,
          perTool: { t_budget: T_BUDGET, ...perTool },
          used: 0,
          usedPerTool: {},
          cost,
          spent: 0,
          costed: false,
          ended: false,
          progress: [],
          begun: new Map(),
        });
        contexts.push({ ctx: ctx!, endedHere: false });
        trace.push("start:ok");
        break;
      }
      case "invoke": {
        // ctx 5 (or no run started yet) is a forged context for a run that never existed.
        const entry = command.ctx === 5 ? undefined : contexts[command.ctx % contexts.length];
        const ctx: RunContext = entry?.ctx ?? Object.freeze({
          runId: FORGED_RUN_ID,
          deadline: modelNow + 3_600_000,
          startedAt: modelNow,
          budget: { calls: 10, perTool: {} },
        });
        const goodId = CALL_IDS[command.call % CALL_IDS.length]!;
        const toolCallId: unknown = command.env === "badId"
          ? BAD_CALL_IDS[command.bad % BAD_CALL_IDS.length]
          : goodId;
        const toolName = command.env === "unknownTool" ? "t_missing" : command.tool;
        const input = inputFor(command.input, command.tool, goodId, command.ms);
        const envelope = {
          toolCallId,
          runId: command.env === "mismatch" ? `${ctx.runId}x` : ctx.runId,
          toolName,
          input,
        };
        const behaviour = MODEL_TOOLS[command.tool]!;
        // The model's expected outcome, in the order the boundary and the store check.
        const k = key(ctx.runId, goodId);
        let expected: ErrorCode | "BEGIN" = "BEGIN";
        if (command.env === "badId") expected = "INVALID_TOOL_CALL_ID";
        else if (command.env === "mismatch") expected = "RUN_MISMATCH";
        else if (command.env === "unknownTool") expected = "UNKNOWN_TOOL";
        else if (inputCode(command.input, command.tool) !== null) {
          expected = inputCode(command.input, command.tool)!;
        } else if (behaviour.kind === "BAD_COST") expected = "INVALID_COST";
        else if (behaviour.kind === "NOT_READ_ONLY") expected = "NOT_READ_ONLY";
        else if (entry?.endedHere) expected = "RUN_INACTIVE";
        else if (modelNow >= ctx.deadline) expected = "DEADLINE_EXCEEDED";
        else {
          const run = runOf(ctx);
          if (run === undefined) expected = "RUN_NOT_FOUND";
          else if (run.ended) expected = "RUN_INACTIVE";
          else if (modelNow >= run.deadline) expected = "DEADLINE_EXCEEDED";
          else if (run.begun.has(goodId)) {
            expected = isDeepStrictEqual(run.begun.get(goodId), begunAs(input, command.tool))
              ? "DUPLICATE_TOOL_CALL"
              : "TOOL_CALL_CONFLICT";
          } else if (liveRecord(k) !== undefined) {
            expected = "DUPLICATE_TOOL_CALL";
          } else if (
            run.perTool[command.tool] !== undefined &&
            (run.usedPerTool[command.tool] ?? 0) >= run.perTool[command.tool]!
          ) expected = "TOOL_BUDGET_EXHAUSTED";
          else if (run.used >= run.calls) expected = "RUN_BUDGET_EXHAUSTED";
          else if (
            behaviour.kind === "COSTED" && run.cost !== null &&
            run.spent + behaviour.cost > run.cost
          ) expected = "BUDGET_EXHAUSTED";
        }
        const before = sys.counters.execute.get(k) ?? 0;
        const result = await sys.boundary.invoke(ctx, envelope);
        checkResultSafe(f, result, at);
        if (expected !== "BEGIN") {
          const schemaIssue = expected === "INVALID_INPUT" && command.tool === "t_schema" &&
            command.input === "schemaBad";
          expectCode(
            f,
            result,
            expected,
            command.env === "badId" ? null : goodId,
            at,
            schemaIssue ? [{ path: "q", expected: "string" }] : undefined,
          );
          checkEqual(f, sys.counters.execute.get(k) ?? 0, before, `${at}: a refusal executed`);
          trace.push(`invoke:${expected}`);
          tick();
          break;
        }
        // Begun: the record, the budgets, one execution.
        const run = liveRun(ctx.runId)!;
        run.used++;
        run.usedPerTool[command.tool] = (run.usedPerTool[command.tool] ?? 0) + 1;
        run.begun.set(goodId, begunAs(input, command.tool));
        const createdAt = modelNow;
        executions.set(k, (executions.get(k) ?? 0) + 1);
        if (behaviour.kind === "CLOCK" && sys.advance !== null) modelNow += command.ms;
        tick();
        const record: ModelRecord = {
          runId: ctx.runId,
          toolCallId: goodId,
          toolName: command.tool,
          status: "PROJECTING",
          evidence: null,
          errorCode: null,
          rawKept: false,
          request: storedRequest(input, command.tool),
          createdAt,
          expiresAt: createdAt + ttl,
          agentResult: null,
        };
        records.set(k, record);
        if (behaviour.kind === "COSTED") {
          // The tool settles before it returns, and nothing in between can fail.
          record.cost = { reserved: behaviour.cost, spent: behaviour.spent };
          run.spent += behaviour.spent;
          run.costed = true;
        }
        const projects = behaviour.kind === "READY" || behaviour.kind === "CLOCK" ||
          behaviour.kind === "COSTED" ||
          (behaviour.kind === "ERROR" && behaviour.rawKept);
        if (projects) projections.set(k, (projections.get(k) ?? 0) + 1);
        if (liveRecord(k) === undefined) {
          expectCode(f, result, "RECORD_EXPIRED", goodId, at);
          trace.push("invoke:RECORD_EXPIRED");
        } else if (behaviour.kind === "ERROR") {
          expectCode(f, result, behaviour.code, goodId, at);
          Object.assign(record, {
            status: "ERROR",
            evidence: "ERROR",
            errorCode: behaviour.code,
            rawKept: behaviour.rawKept,
          });
          run.progress.push([goodId]);
          trace.push(`invoke:${behaviour.code}`);
        } else {
          const evidence = behaviour.kind === "READY" ? behaviour.evidence : "EVIDENCE_FOUND";
          check(
            f,
            result.status === "READY",
            () => `${at}: expected READY, got ${JSON.stringify(result)}`,
          );
          if (result.status !== "READY") break;
          checkEqual(f, result.evidence, evidence, at);
          checkEqual(f, result.toolCallId, goodId, at);
          const { status: _s, toolCallId: _t, ...agentResult } = result;
          Object.assign(record, { status: "READY", evidence, rawKept: true, agentResult });
          run.progress.push([goodId]);
          trace.push(`invoke:READY:${evidence}`);
        }
        break;
      }
      case "burst": {
        const entry = contexts[command.ctx % Math.max(1, contexts.length)];
        if (entry === undefined) {
          trace.push("burst:none");
          break;
        }
        const ctx = entry.ctx;
        const ids = command.calls.map((c) => CALL_IDS[c % CALL_IDS.length]!);
        const burstInput = { q: "burst" };
        const results = await Promise.all(ids.map((toolCallId) =>
          sys.boundary.invoke(ctx, {
            toolCallId,
            runId: ctx.runId,
            toolName: command.tool,
            input: burstInput,
          })
        ));
        f.races += ids.length;
        tick();
        const run = runOf(ctx);
        let common: ErrorCode | null = null;
        if (entry.endedHere) common = "RUN_INACTIVE";
        else if (modelNow >= ctx.deadline) common = "DEADLINE_EXCEEDED";
        else if (run === undefined) common = "RUN_NOT_FOUND";
        else if (run.ended) common = "RUN_INACTIVE";
        for (const [j, result] of results.entries()) checkResultSafe(f, result, `${at} #${j}`);
        if (common !== null) {
          for (const [j, result] of results.entries()) {
            expectCode(f, result, common, ids[j]!, `${at} #${j}`);
          }
          trace.push(`burst:${common}`);
          break;
        }
        const fresh = [...new Set(ids)].filter((id) =>
          liveRecord(key(ctx.runId, id)) === undefined && !run!.begun.has(id)
        );
        const toolLeft = run!.perTool[command.tool] === undefined
          ? Number.POSITIVE_INFINITY
          : run!.perTool[command.tool]! - (run!.usedPerTool[command.tool] ?? 0);
        const winnersExpected = Math.min(fresh.length, run!.calls - run!.used, toolLeft);
        const winners: string[] = [];
        const winnerAt = new Map<string, number>();
        for (const [j, result] of results.entries()) {
          const id = ids[j]!;
          if (result.status === "READY") {
            check(f, fresh.includes(id) && !winners.includes(id), `${at}: ${id} ran twice`);
            winners.push(id);
            winnerAt.set(id, j);
          } else if (!fresh.includes(id)) {
            const same = isDeepStrictEqual(
              run!.begun.get(id),
              begunAs(burstInput, command.tool),
            );
            expectCode(
              f,
              result,
              same ? "DUPLICATE_TOOL_CALL" : "TOOL_CALL_CONFLICT",
              id,
              `${at} #${j}`,
            );
          } else {
            check(
              f,
              ["DUPLICATE_TOOL_CALL", "RUN_BUDGET_EXHAUSTED", "TOOL_BUDGET_EXHAUSTED"].includes(
                result.code,
              ),
              () => `${at} #${j}: unexpected ${result.code}`,
            );
          }
        }
        checkEqual(f, winners.length, winnersExpected, `${at}: winners`);
        for (const id of winners) {
          const k = key(ctx.runId, id);
          const result = results[winnerAt.get(id)!]!;
          const { status: _s, toolCallId: _t, ...agentResult } = result as unknown as Record<
            string,
            unknown
          >;
          const evidence = command.tool === "t_found" ? "EVIDENCE_FOUND" : "NO_EVIDENCE";
          run!.used++;
          run!.usedPerTool[command.tool] = (run!.usedPerTool[command.tool] ?? 0) + 1;
          run!.begun.set(id, begunAs(burstInput, command.tool));
          executions.set(k, (executions.get(k) ?? 0) + 1);
          projections.set(k, (projections.get(k) ?? 0) + 1);
          records.set(k, {
            runId: ctx.runId,
            toolCallId: id,
            toolName: command.tool,
            status: "READY",
            evidence,
            errorCode: null,
            rawKept: true,
            request: { q: "burst" },
            createdAt: modelNow,
            expiresAt: modelNow + ttl,
            agentResult,
          });
        }
        if (winners.length > 0) run!.progress.push(winners);
        trace.push(`burst:${winners.length}/${ids.length}`);
        // Which of several fresh keys won a budget race is up to timing: stores may differ.
        if (winners.length < fresh.length) trace.push(DIVERGED);
        break;
      }
      case "inspect": {
        const runId = RUN_IDS[command.run % RUN_IDS.length]!;
        const toolCallId = CALL_IDS[command.call % CALL_IDS.length]!;
        const actual = await sys.boundary.inspect(runId, toolCallId);
        tick();
        const expected = liveRecord(key(runId, toolCallId));
        if (expected === undefined) {
          checkEqual(f, actual, null, at);
          trace.push("inspect:null");
          break;
        }
        checkRecord(f, actual, expected, sys.advance !== null, at);
        trace.push(`inspect:${expected.status}:${expected.errorCode ?? expected.evidence}`);
        break;
      }
      case "end": {
        const runId = RUN_IDS[command.run % RUN_IDS.length]!;
        const latest = contexts.findLast((c) => c.ctx.runId === runId);
        const target = command.viaCtx && latest !== undefined ? latest.ctx : runId;
        let report: { facts: { toolCallId: string; kind: string }[]; omitted: number } | null =
          null;
        let code: string | null = null;
        try {
          report = await sys.boundary.endRunReport(target);
        } catch (error) {
          code = (error as { code?: string }).code ?? String(error);
        }
        tick();
        const run = liveRun(runId);
        if (run === undefined) {
          checkEqual(f, code, "RUN_NOT_FOUND", at);
          trace.push("end:RUN_NOT_FOUND");
          break;
        }
        check(f, report !== null, () => `${at}: endRun failed with ${code}`);
        run.ended = true;
        if (typeof target !== "string") latest!.endedHere = true;
        checkResultSafe(f, report, at);
        const groups = run.progress.map((group) =>
          group.filter((id) => liveRecord(key(runId, id))?.status === "READY")
        ).filter((group) => group.length > 0);
        const total = groups.reduce((n, g) => n + g.length, 0);
        const shown = Math.min(total, MODEL_LIMITS.factCount);
        checkEqual(f, report!.facts.length, shown, `${at}: fact count`);
        checkEqual(f, report!.omitted, total - shown, `${at}: omitted`);
        let at2 = 0;
        for (const group of groups) {
          const take = report!.facts.slice(at2, at2 + group.length);
          at2 += group.length;
          for (const fact of take) {
            check(
              f,
              group.includes(fact.toolCallId),
              () => `${at}: fact ${fact.toolCallId} out of order`,
            );
            const rec = liveRecord(key(runId, fact.toolCallId))!;
            checkEqual(
              f,
              fact.kind,
              rec.evidence === "EVIDENCE_FOUND" ? "EVIDENCE" : "NEGATIVE_OBSERVATION",
              at,
            );
          }
          checkEqual(f, new Set(take.map((x) => x.toolCallId)).size, take.length, `${at}: twice`);
        }
        trace.push(
          `end:${report!.facts.map((x) => x.toolCallId).sort().join(",")}:${report!.omitted}`,
        );
        break;
      }
      case "advance": {
        if (sys.advance === null) {
          trace.push("advance:skipped");
          break;
        }
        sys.advance(command.ms);
        modelNow += command.ms;
        trace.push("advance");
        break;
      }
    }
    // After every step: no key ran twice, executions and projections match the model exactly,
    // and nothing polluted Object.prototype.
    for (const [k, n] of sys.counters.execute) {
      checkEqual(f, n, executions.get(k) ?? 0, `${at}: executions of ${k}`);
    }
    checkEqual(f, sys.counters.execute.size, executions.size, `${at}: executed keys`);
    for (const [k, n] of sys.counters.project) {
      checkEqual(f, n, projections.get(k) ?? 0, `${at}: projections of ${k}`);
    }
    checkPrototypes(f, at);
  }
  return trace;
}

function expectCode(
  f: Figures,
  result: BoundaryResult,
  code: ErrorCode,
  toolCallId: string | null,
  at: string,
  issues?: { path: string; expected: string }[],
): void {
  checkEqual(
    f,
    result,
    {
      status: "ERROR",
      toolCallId,
      code,
      message: ERROR_MESSAGES[code],
      ...(issues === undefined ? {} : { issues }),
    },
    `${at}: expected ${code}`,
  );
}

function checkRecord(
  f: Figures,
  actual: CanonicalRecord | null,
  expected: ModelRecord,
  exactClock: boolean,
  at: string,
): void {
  check(f, actual !== null, `${at}: record missing`);
  const r = actual!;
  checkEqual(
    f,
    [r.runId, r.toolCallId, r.toolName, r.status, r.evidence, r.errorCode],
    [
      expected.runId,
      expected.toolCallId,
      expected.toolName,
      expected.status,
      expected.evidence,
      expected.errorCode,
    ],
    `${at}: record fields`,
  );
  checkEqual(f, "raw" in r, expected.rawKept, `${at}: raw kept`);
  checkEqual(f, r.agentResult, expected.agentResult, `${at}: agent result`);
  checkEqual(f, r.request, expected.request, `${at}: request`);
  checkEqual(f, r.cost, expected.cost, `${at}: cost`);
  if (exactClock) {
    checkEqual(f, [r.createdAt, r.expiresAt], [expected.createdAt, expected.expiresAt], at);
  }
  check(f, r.expiresAt - r.createdAt <= expected.expiresAt - expected.createdAt + 5, `${at}: TTL`);
}

/** No agent-facing value may carry the canary, a stack, or raw-data field names. */
export function checkResultSafe(f: Figures, value: unknown, at: string): void {
  const text = JSON.stringify(value);
  check(f, !text.includes(CANARY_SECRET), () => `${at}: canary leaked: ${text.slice(0, 200)}`);
  check(f, !text.includes("credential") && !/\n\s+at /.test(text), `${at}: raw data leaked`);
}

const PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort().join(",");

/** Object.prototype has its usual keys and nothing called `polluted` exists anywhere. */
export function checkPrototypes(f: Figures, at: string): void {
  checkEqual(
    f,
    Object.getOwnPropertyNames(Object.prototype).sort().join(","),
    PROTOTYPE_KEYS,
    `${at}: Object.prototype changed`,
  );
  check(f, ({} as Record<string, unknown>).polluted === undefined, `${at}: prototype polluted`);
}
