/**
 * `ToolBoundary`: the fail-closed boundary around every tool call.
 *
 * @module
 */
import * as v from "valibot";
import { MemoryStore } from "../stores/memory.ts";
import { BoundaryError, ERROR_MESSAGES, type ErrorCode } from "./errors.ts";
import { isSafeRunId, isSafeToolCallId } from "./ids.ts";
import { toInputIssues } from "./issues.ts";
import {
  checkBudget,
  checkEpochMs,
  checkPerTool,
  checkTtlMs,
  MAX_TTL_MS,
  setOwnBudget,
} from "./limits.ts";
import { type JsonObject, snapshotJson, type SnapshotProblem } from "./json.ts";
import { rowsToFacts, snapshotProjection } from "./progress.ts";
import type { CallSummary, CompleteOutcome, RunState, Store, StoredRecord } from "./store.ts";
import { type AnyToolDefinition, isToolName, type ProjectContext } from "./tool.ts";
import {
  type BoundaryResult,
  type CanonicalRecord,
  DEFAULT_LIMITS,
  type ErrorResult,
  type InputIssue,
  type Limits,
  type ObservedFact,
  type Projection,
  type RunBudget,
  type RunContext,
  type RunEnd,
  type ToolCallEnvelope,
} from "./types.ts";
import { utf8ByteLength } from "./utf8.ts";

/** What `authorize` is asked about. */
export interface AuthorizeRequest {
  /** The framework's tool call ID. */
  toolCallId: string;
  /** The tool. */
  tool: AnyToolDefinition;
  /** The input, after schema validation. */
  input: JsonObject;
}

/**
 * Events for the harness's logs and traces. They may carry internal detail (`error`), so they
 * go to the `observe` hook and nowhere else.
 */
export type BoundaryEvent =
  | {
    /** A call was refused before its executor ran: no record was created. */
    type: "call.refused";
    runId: string;
    toolCallId: string | null;
    toolName: string | null;
    code: ErrorCode;
    /** Internal detail (schema issues, a thrown error); never shown to an agent. */
    error?: unknown;
  }
  | {
    /** A call that began has ended (its record is READY or ERROR, or could not be written). */
    type: "call.finished";
    runId: string;
    toolCallId: string;
    toolName: string;
    status: "READY" | "ERROR";
    code: ErrorCode | null;
    durationMs: number;
    /** Internal detail of a failure; never shown to an agent. */
    error?: unknown;
  }
  | {
    /** A run was started. */
    type: "run.started";
    runId: string;
    deadline: number;
  }
  | {
    /** A run was ended and its facts projected. */
    type: "run.ended";
    runId: string;
    facts: number;
    omitted: number;
  };

/** Options of {@linkcode ToolBoundary}. */
export interface ToolBoundaryOptions {
  /** The canonical store. @default new MemoryStore() */
  store?: Store;
  /** The tools agents may call. Names must be unique. */
  tools: readonly AnyToolDefinition[];
  /** Byte and count limits; missing ones take {@linkcode DEFAULT_LIMITS}. */
  limits?: Partial<Limits>;
  /** TTL of each record, set once at creation. @default 86400000 (24 hours) */
  recordTtlMs?: number;
  /** Run length when `startRun` gets neither `deadline` nor `ttlMs`. @default 900000 (15 min) */
  runTtlMs?: number;
  /** Budget when `startRun` gets none. @default { calls: 100 } */
  defaultBudget?: RunBudget;
  /** Decides whether a call is allowed; anything but `true` (or a throw) refuses it. */
  authorize?: (run: RunContext, call: AuthorizeRequest) => boolean | Promise<boolean>;
  /**
   * Milliseconds `authorize` may take. A call whose `authorize` has not answered by then, or by
   * the run deadline if that comes first, is refused (UNAUTHORIZED, or DEADLINE_EXCEEDED) and
   * creates no record. @default 10000 (10 s)
   */
  authorizeTimeoutMs?: number;
  /** Receives events with internal detail, for harness logs and traces. Errors it throws are ignored. */
  observe?: (event: BoundaryEvent) => void;
  /** Epoch ms clock; readings are rounded down to whole milliseconds. @default Date.now */
  clock?: () => number;
}

/** Options of {@linkcode ToolBoundary.startRun}. */
export interface StartRunOptions {
  /** A run ID to use; generated (a UUID) when omitted. */
  runId?: string;
  /** Epoch ms or a Date; wins over `ttlMs`. */
  deadline?: number | Date;
  /** Run length from now, in ms. */
  ttlMs?: number;
  /** Call budgets. */
  budget?: RunBudget;
}

/** A call that passed preflight, with its input read once into the request that is recorded. */
interface Call {
  tool: AnyToolDefinition;
  toolCallId: string;
  input: JsonObject;
  requestJson: string;
  requestBytes: number;
}

/** What running a tool produced: what complete writes, and the agent's copy when READY. */
interface ToolRun {
  outcome: CompleteOutcome;
  error?: unknown;
  projection?: Projection;
}

const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
const MAX_TIMER_MS = 2_147_483_647;
const CONTENT_DEPTH = 256;
/** Allowance for a record's metadata (IDs, status, timestamps) in the record byte limit. */
const RECORD_OVERHEAD_BYTES = 512;
const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * The boundary. Preflight, one atomic begin, the tool, byte limits, the projector, one atomic
 * complete; the agent only ever gets a bounded result or a safe error code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 *
 * const lookup = defineTool({
 *   name: "lookup",
 *   readOnly: true,
 *   execute: (input) => ({ found: input.key === "a", secret: "raw stays harness-only" }),
 *   project: (raw) => ({
 *     evidence: raw.found ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
 *     scope: "the lookup table",
 *     content: { found: raw.found },
 *   }),
 * });
 * const boundary = new ToolBoundary({ tools: [lookup] });
 * const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5 } });
 * const result = await boundary.invoke(run, {
 *   toolCallId: "call_1", runId: run.runId, toolName: "lookup", input: '{"key":"a"}',
 * });
 * assert.deepEqual(result, {
 *   status: "READY", toolCallId: "call_1", evidence: "EVIDENCE_FOUND", scope: "the lookup table",
 *   content: { found: true },
 * });
 * const facts = await boundary.endRun(run);
 * assert.equal(facts.length, 1);
 * ```
 */
export class ToolBoundary {
  /** The store, for harness code that needs it directly. */
  readonly store: Store;
  /** The limits in force. */
  readonly limits: Readonly<Limits>;
  readonly #tools: ReadonlyMap<string, AnyToolDefinition>;
  readonly #recordTtlMs: number;
  readonly #runTtlMs: number;
  readonly #defaultBudget: RunBudget;
  readonly #authorize: ToolBoundaryOptions["authorize"];
  readonly #authorizeTimeoutMs: number;
  readonly #observe: ToolBoundaryOptions["observe"];
  readonly #clock: () => number;
  readonly #ended = new WeakSet<RunContext>();

  /**
   * Creates a boundary over a store and a fixed set of tools.
   *
   * @param options Store, tools, limits, TTLs, authorization, observer and clock.
   * @throws {TypeError} When `tools` is missing, has duplicates or a name that is empty or holds a
   *   lone surrogate, or `store` is not a store.
   * @throws {RangeError} When a limit is not a positive integer or a TTL is not an integer from 1
   *   to `MAX_TTL_MS`.
   */
  constructor(options: ToolBoundaryOptions) {
    if (!options || !Array.isArray(options.tools)) {
      throw new TypeError("Cannot create ToolBoundary: options.tools must be an array");
    }
    const tools = new Map<string, AnyToolDefinition>();
    for (const tool of options.tools) {
      // A tool not made by defineTool could still carry a name the wire would change.
      if (!isToolName(tool?.name)) {
        throw new TypeError(
          "Cannot create ToolBoundary: a tool name must be a non-empty string of well-formed Unicode",
        );
      }
      if (tools.has(tool.name)) {
        throw new TypeError(`Cannot create ToolBoundary: duplicate tool name "${tool.name}"`);
      }
      tools.set(tool.name, tool);
    }
    this.#tools = tools;
    const store = options.store ?? new MemoryStore();
    for (
      const method of ["startRun", "getRun", "begin", "complete", "get", "endRun", "readFacts"]
    ) {
      if (typeof (store as unknown as Record<string, unknown>)[method] !== "function") {
        throw new TypeError(`Cannot create ToolBoundary: store lacks ${method}()`);
      }
    }
    this.store = store;
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    for (const [name, value] of Object.entries(limits)) positive(`limits.${name}`, value);
    this.limits = Object.freeze(limits);
    this.#recordTtlMs = checkTtlMs("recordTtlMs", options.recordTtlMs ?? 86_400_000);
    this.#runTtlMs = checkTtlMs("runTtlMs", options.runTtlMs ?? 900_000);
    this.#defaultBudget = options.defaultBudget ?? { calls: 100 };
    this.#authorize = options.authorize;
    this.#authorizeTimeoutMs = positive("authorizeTimeoutMs", options.authorizeTimeoutMs ?? 10_000);
    this.#observe = options.observe;
    const clock = options.clock;
    // Whole milliseconds, as every store keeps them (a fractional clock would not cross to Redis).
    this.#clock = clock === undefined ? Date.now : () => Math.floor(clock());
  }

  /** The tools, by name. */
  get tools(): ReadonlyMap<string, AnyToolDefinition> {
    return this.#tools;
  }

  /**
   * Starts a run: validates the run ID (or generates one), fixes the deadline and budgets, and
   * creates the run's state in the store.
   *
   * @param options Run ID, deadline or TTL, budget.
   * @returns The immutable run context to pass to every call.
   * @throws {BoundaryError} INVALID_RUN_ID, RUN_ALREADY_EXISTS, DEADLINE_EXCEEDED (a deadline
   *   not in the future) or STORE_UNAVAILABLE.
   * @throws {RangeError} When the deadline is not an integer epoch ms up to `MAX_EPOCH_MS`,
   *   `ttlMs` not an integer from 1 to `MAX_TTL_MS`, `budget.calls` not an integer from 1 to
   *   `MAX_BUDGET`, or a `budget.perTool` key not well-formed Unicode or its value not an integer
   *   from 0 to `MAX_BUDGET` (see `./limits.ts`).
   */
  async startRun(options: StartRunOptions = {}): Promise<RunContext> {
    const runId = options.runId ?? crypto.randomUUID();
    if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
    const now = checkEpochMs("clock()", this.#clock());
    let deadline: number;
    if (options.deadline !== undefined) {
      deadline = Number(options.deadline);
      if (deadline <= now) throw new BoundaryError("DEADLINE_EXCEEDED");
      checkEpochMs("deadline", deadline);
    } else {
      deadline = now + checkTtlMs("ttlMs", options.ttlMs ?? this.#runTtlMs);
      checkEpochMs("deadline (now + ttlMs)", deadline);
    }
    const budget = options.budget ?? this.#defaultBudget;
    const calls = checkBudget("budget.calls", budget?.calls, 1);
    const perTool: Record<string, number> = {};
    for (const tool of this.#tools.values()) {
      if (tool.budget !== undefined) {
        setOwnBudget(perTool, tool.name, checkBudget(`budget of ${tool.name}`, tool.budget));
      }
    }
    if (budget.perTool !== undefined) checkPerTool("budget.perTool", budget.perTool, perTool);
    const outcome = await this.#storeCall(() =>
      this.store.startRun({
        runId,
        deadline,
        budget: { calls, perTool },
        // The run outlives its deadline by a record's TTL, within the one TTL range.
        ttlMs: Math.min(deadline - now + this.#recordTtlMs, MAX_TTL_MS),
        attemptId: crypto.randomUUID(),
        now,
      })
    );
    if (!outcome.ok) throw new BoundaryError(outcome.code);
    const run = toRunContext(outcome.run);
    this.#emit({ type: "run.started", runId, deadline: run.deadline });
    return run;
  }

  /**
   * Loads the context of an existing run, for example in another instance or an HTTP handler.
   *
   * @param runId The run ID.
   * @returns The context, or `null` when the run is unknown, expired or the ID is unsafe.
   * @throws {BoundaryError} STORE_UNAVAILABLE.
   */
  async getRun(runId: string): Promise<RunContext | null> {
    if (!isSafeRunId(runId)) return null;
    const state = await this.#storeCall(() => this.store.getRun(runId));
    return state === null ? null : toRunContext(state);
  }

  /**
   * Runs one tool call through the boundary. Never throws, and never rejects, for anything the
   * agent, the envelope, a tool or its projector does: every value they supply is read once,
   * into a plain copy, and what is recorded is that copy, which is also what the next step gets.
   *
   * @param run The explicit run context from `startRun`.
   * @param envelope The call as the agent framework produced it.
   * @returns The bounded READY result, or an ERROR with a safe code. Never raw data.
   * @throws {TypeError} When `run` is not a run context (a programming error).
   */
  async invoke(run: RunContext, envelope: ToolCallEnvelope): Promise<BoundaryResult> {
    if (!run || typeof run !== "object" || !isSafeRunId(run.runId)) {
      throw new TypeError("Cannot invoke: run must be the RunContext returned by startRun()");
    }
    // Only the observer's durationMs needs the start time.
    const startedAt = this.#observe === undefined ? 0 : this.#clock();
    const call = this.#preflight(run, envelope);
    if ("code" in call) return call;
    const { tool, toolCallId, requestJson } = call;
    if (this.#authorize !== undefined) {
      const refusal = await this.#authorizeCall(run, toolCallId, tool, requestJson);
      if (refusal !== null) {
        return this.#refuse(run, toolCallId, tool.name, refusal.code, refusal.error);
      }
    }
    if (tool.readOnly !== true) return this.#refuse(run, toolCallId, tool.name, "NOT_READ_ONLY");
    if (this.#ended.has(run)) return this.#refuse(run, toolCallId, tool.name, "RUN_INACTIVE");
    const now = this.#clock();
    if (now >= run.deadline) {
      return this.#refuse(run, toolCallId, tool.name, "DEADLINE_EXCEEDED");
    }

    const attemptId = crypto.randomUUID();
    let begun;
    try {
      begun = await this.store.begin({
        runId: run.runId,
        toolCallId,
        toolName: tool.name,
        requestJson,
        attemptId,
        ttlMs: this.#recordTtlMs,
        now,
      });
    } catch (error) {
      return this.#refuse(run, toolCallId, tool.name, "STORE_UNAVAILABLE", error);
    }
    if (!begun.ok) return this.#refuse(run, toolCallId, tool.name, begun.code);

    let ran: ToolRun;
    try {
      ran = await this.#runTool(run, call);
    } catch (error) {
      // Not expected (every step is guarded); a begun record must still end.
      ran = { outcome: { status: "ERROR", errorCode: "EXECUTION_FAILED", rawJson: null }, error };
    }
    const { outcome, error } = ran;
    let code: ErrorCode | null = outcome.status === "ERROR" ? outcome.errorCode : null;
    let failure = error;
    try {
      const completed = await this.store.complete({
        runId: run.runId,
        toolCallId,
        attemptId,
        outcome,
        now: this.#clock(),
      });
      if (!completed.ok) code = completed.code;
    } catch (thrown) {
      code = "STORE_UNAVAILABLE";
      failure = thrown;
    }
    if (this.#observe !== undefined) {
      this.#emit({
        type: "call.finished",
        runId: run.runId,
        toolCallId,
        toolName: tool.name,
        status: code === null ? "READY" : "ERROR",
        code,
        durationMs: this.#clock() - startedAt,
        ...(failure === undefined ? {} : { error: failure }),
      });
    }
    if (code !== null || ran.projection === undefined) {
      return errorResult(toolCallId, code ?? "ILLEGAL_TRANSITION");
    }
    // The projection is the boundary's own copy, exactly JSON.parse of the stored text: the
    // projector never held it, so the agent sees exactly the recorded result.
    const { evidence, scope, content } = ran.projection;
    return { status: "READY", toolCallId, evidence, scope, content };
  }

  /**
   * Reads a canonical record (harness-only: it includes the raw response). Never touches its TTL.
   *
   * @param runId The run ID.
   * @param toolCallId The tool call ID.
   * @returns The record, or `null` when absent, expired, or an ID is unsafe.
   * @throws {BoundaryError} STORE_UNAVAILABLE.
   */
  async inspect(runId: string, toolCallId: string): Promise<CanonicalRecord | null> {
    if (!isSafeRunId(runId) || !isSafeToolCallId(toolCallId)) return null;
    const stored = await this.#storeCall(() => this.store.get(runId, toolCallId));
    return stored === null ? null : toCanonicalRecord(stored);
  }

  /**
   * Every call the run began, in begin order, without payloads: each with its record's status
   * (EXPIRED once the record is gone, the key staying begun). Refused calls were never begun and
   * are not listed. Never touches TTLs.
   *
   * @param runId The run ID.
   * @returns The calls, in begin order.
   * @throws {BoundaryError} INVALID_RUN_ID, RUN_NOT_FOUND (absent or expired) or
   *   STORE_UNAVAILABLE.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   *
   * const echo = defineTool({
   *   name: "echo",
   *   readOnly: true,
   *   execute: (input) => input,
   *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "echo", content: raw }),
   * });
   * const boundary = new ToolBoundary({ tools: [echo] });
   * const run = await boundary.startRun({ ttlMs: 60_000 });
   * await boundary.invoke(run, { toolCallId: "call_1", runId: run.runId, toolName: "echo", input: {} });
   * const calls = await boundary.listCalls(run.runId);
   * assert.deepEqual(calls.map((call) => [call.toolCallId, call.status, call.evidence]), [
   *   ["call_1", "READY", "EVIDENCE_FOUND"],
   * ]);
   * ```
   */
  async listCalls(runId: string): Promise<CallSummary[]> {
    return (await this.inspectRun(runId)).calls;
  }

  /**
   * The run as the store keeps it (status, deadline, budgets and what was used of them) and
   * {@linkcode ToolBoundary.listCalls}, from one store read. Harness-only, like `inspect`: it is
   * what the run inspector and `GET /v1/runs/{runId}` show.
   *
   * @param runId The run ID.
   * @returns The run's state and its calls in begin order.
   * @throws {BoundaryError} INVALID_RUN_ID, RUN_NOT_FOUND (absent or expired) or
   *   STORE_UNAVAILABLE.
   */
  async inspectRun(runId: string): Promise<{ run: RunState; calls: CallSummary[] }> {
    if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
    const listed = await this.#storeCall(() => this.store.listCalls(runId));
    if (listed === null) throw new BoundaryError("RUN_NOT_FOUND");
    const { run } = listed;
    return {
      // Copies: the caller cannot reach what a store keeps.
      run: {
        runId: run.runId,
        status: run.status,
        deadline: run.deadline,
        startedAt: run.startedAt,
        endedAt: run.endedAt,
        budget: { calls: run.budget.calls, perTool: { ...run.budget.perTool } },
        used: { calls: run.used.calls, perTool: { ...run.used.perTool } },
      },
      calls: listed.calls.map((call) => ({ ...call })),
    };
  }

  /**
   * Ends a run and returns its observed facts: only READY records owned by the run, in
   * execution order, within `limits.factCount` and `limits.factBytes`. Ending twice is allowed
   * and returns the same facts while the records live.
   *
   * @param run The run context, or its ID.
   * @returns The facts.
   * @throws {BoundaryError} RUN_NOT_FOUND, INVALID_RUN_ID or STORE_UNAVAILABLE.
   */
  async endRun(run: RunContext | string): Promise<ObservedFact[]> {
    return (await this.endRunReport(run)).facts;
  }

  /**
   * Like {@linkcode ToolBoundary.endRun}, and also says how many READY records the caps left out.
   *
   * @param run The run context, or its ID.
   * @returns The facts and the number omitted.
   * @throws {BoundaryError} RUN_NOT_FOUND, INVALID_RUN_ID or STORE_UNAVAILABLE.
   */
  async endRunReport(run: RunContext | string): Promise<RunEnd> {
    const runId = typeof run === "string" ? run : run?.runId;
    if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
    const ended = await this.#storeCall(() => this.store.endRun({ runId, now: this.#clock() }));
    if (!ended.ok) throw new BoundaryError(ended.code);
    if (typeof run !== "string") this.#ended.add(run);
    const { factCount, factBytes } = this.limits;
    const read = await this.#storeCall(() =>
      this.store.readFacts({
        runId,
        identities: ended.toolCallIds.map((toolCallId) => ({ runId, toolCallId })),
        maxFacts: factCount,
        maxBytes: factBytes,
      })
    );
    const { facts, omitted } = rowsToFacts(runId, read.rows, {
      maxFacts: factCount,
      maxBytes: factBytes,
    });
    const report = { facts, omitted: omitted + read.omitted };
    this.#emit({ type: "run.ended", runId, facts: facts.length, omitted: report.omitted });
    return report;
  }

  /**
   * The checks of the call itself, in order: the envelope's fields (each read once), then the
   * input (read once into the request that is recorded).
   */
  #preflight(run: RunContext, envelope: unknown): ErrorResult | Call {
    let toolCallId: unknown;
    let runId: unknown;
    let toolName: unknown;
    let input: unknown;
    let read = 0;
    let readError: unknown;
    try {
      const fields = (envelope ?? {}) as Partial<ToolCallEnvelope>;
      toolCallId = fields.toolCallId;
      read = 1;
      runId = fields.runId;
      read = 2;
      toolName = fields.toolName;
      read = 3;
      input = fields.input;
      read = 4;
    } catch (error) {
      // A getter on the envelope, or a Proxy envelope, threw: that field is refused.
      readError = error;
    }
    const failed = (at: number) => (read === at ? readError : undefined);
    if (read < 1 || !isSafeToolCallId(toolCallId)) {
      return this.#refuse(run, null, null, "INVALID_TOOL_CALL_ID", failed(0));
    }
    if (read < 2 || runId !== run.runId) {
      return this.#refuse(run, toolCallId, null, "RUN_MISMATCH", failed(1));
    }
    const tool = read >= 3 && typeof toolName === "string" ? this.#tools.get(toolName) : undefined;
    if (tool === undefined) return this.#refuse(run, toolCallId, null, "UNKNOWN_TOOL", failed(2));
    if (read < 4) return this.#refuse(run, toolCallId, tool.name, "INVALID_INPUT", failed(3));

    const parsed = this.#parseInput(tool, input);
    if ("code" in parsed) {
      return this.#refuse(run, toolCallId, tool.name, parsed.code, parsed.error, parsed.issues);
    }
    return { tool, toolCallId, ...parsed };
  }

  #parseInput(
    tool: AnyToolDefinition,
    raw: unknown,
  ):
    | { input: JsonObject; requestJson: string; requestBytes: number }
    | { code: ErrorCode; issues?: InputIssue[]; error?: unknown } {
    const { requestBytes, inputDepth } = this.limits;
    // Stored JSON is never much larger than its text (and a schema may drop keys), so input
    // whose JSON is certain to pass four times the limit is refused without reading further.
    const maxLength = requestBytes * 4;
    let value = raw;
    if (typeof raw === "string") {
      if (raw.length > maxLength) return { code: "REQUEST_TOO_LARGE" };
      try {
        value = JSON.parse(raw);
      } catch {
        return { code: "INVALID_INPUT" };
      }
    }
    let snapshot = snapshotObject(value, inputDepth, maxLength);
    if (tool.input !== undefined && "value" in snapshot) {
      // The schema only ever sees the plain copy; its output is read once again, as it may
      // hold anything a transform returned.
      let checked;
      try {
        checked = v.safeParse(tool.input, snapshot.value);
      } catch (error) {
        // A schema whose own code throws (a custom check or transform) refuses the input.
        return { code: "INVALID_INPUT", error };
      }
      if (!checked.success) return { code: "INVALID_INPUT", issues: toInputIssues(checked.issues) };
      snapshot = snapshotObject(checked.output, inputDepth, maxLength);
    }
    if ("problem" in snapshot) {
      const code = snapshot.problem === "TOO_LARGE" ? "REQUEST_TOO_LARGE" : "INVALID_INPUT";
      return { code, error: snapshot.error };
    }
    const bytes = utf8ByteLength(snapshot.json);
    if (bytes > requestBytes) return { code: "REQUEST_TOO_LARGE" };
    return { input: snapshot.value, requestJson: snapshot.json, requestBytes: bytes };
  }

  /**
   * Asks `authorize`, bounded by the run deadline and `authorizeTimeoutMs`. It gets its own copy
   * of the recorded request, so nothing it does can change what the tool receives.
   *
   * @returns `null` when allowed, else the refusal: UNAUTHORIZED for anything but `true`, a
   *   throw or the timeout; DEADLINE_EXCEEDED when the deadline came first.
   */
  async #authorizeCall(
    run: RunContext,
    toolCallId: string,
    tool: AnyToolDefinition,
    requestJson: string,
  ): Promise<{ code: ErrorCode; error?: unknown } | null> {
    const untilDeadline = run.deadline - this.#clock();
    const deadlineFirst = untilDeadline <= this.#authorizeTimeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let allowed: unknown;
    try {
      allowed = this.#authorize!(run, { toolCallId, tool, input: JSON.parse(requestJson) });
      if (isThenable(allowed)) {
        const asking = Promise.resolve(allowed);
        asking.catch(() => {}); // a late rejection after the timeout is not unhandled
        const waitMs = Math.min(this.#authorizeTimeoutMs, Math.max(0, untilDeadline), MAX_TIMER_MS);
        allowed = await Promise.race([
          asking,
          new Promise<typeof TIMED_OUT>((resolve) => {
            timer = setTimeout(() => resolve(TIMED_OUT), waitMs);
          }),
        ]);
      }
    } catch (error) {
      return { code: "UNAUTHORIZED", error };
    } finally {
      clearTimeout(timer);
    }
    if (allowed === TIMED_OUT) {
      return { code: deadlineFirst ? "DEADLINE_EXCEEDED" : "UNAUTHORIZED" };
    }
    return allowed === true ? null : { code: "UNAUTHORIZED" };
  }

  /**
   * Executes and projects under one timer; returns what complete should write. The projector
   * gets the copy of the raw response that is recorded, and the agent the copy of the
   * projection that is recorded.
   */
  async #runTool(run: RunContext, call: Call): Promise<ToolRun> {
    const { tool, toolCallId, input, requestJson, requestBytes } = call;
    const limits = this.limits;
    const fail = (errorCode: ErrorCode, rawJson: string | null, error?: unknown): ToolRun => ({
      outcome: { status: "ERROR", errorCode, rawJson },
      ...(error === undefined ? {} : { error }),
    });
    // Everything in the record but the raw response and the agent result. The IDs are ASCII
    // (their patterns), so their length is their byte count; a tool name may be any text.
    const recordBaseBytes = requestBytes + RECORD_OVERHEAD_BYTES + run.runId.length +
      toolCallId.length + utf8ByteLength(tool.name);
    const controller = new AbortController();
    const startedAt = this.#clock();
    const budgetMs = Math.min(
      tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      run.deadline - startedAt,
      MAX_TIMER_MS,
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timeout: Promise<typeof TIMED_OUT> | undefined;
    // The timer is armed (for what is left of the budget) only once the executor or the
    // projector returns a promise: a synchronous one cannot be interrupted and always won the
    // race, and a timer costs more than a fast tool call.
    const armTimer = () =>
      timeout ??= new Promise<typeof TIMED_OUT>((resolve) => {
        timer = setTimeout(() => {
          controller.abort(new DOMException("The tool call timed out", "TimeoutError"));
          resolve(TIMED_OUT);
        }, Math.max(0, budgetMs - (this.#clock() - startedAt)));
      });
    try {
      let raw: unknown;
      try {
        raw = tool.execute(input, { signal: controller.signal, run, toolCallId });
      } catch (error) {
        return fail(controller.signal.aborted ? "TOOL_TIMEOUT" : "EXECUTION_FAILED", null, error);
      }
      // Plain data is read once, by the snapshot; only what it refuses is asked whether it is a
      // promise (its `then` read, as `await` would), and then awaited and read once.
      let rawSnapshot = snapshotJson(raw, limits.rawDepth, limits.rawBytes);
      if ("problem" in rawSnapshot) {
        let thenable = false;
        try {
          thenable = isThenable(raw);
        } catch (error) {
          return fail("SERIALIZATION_FAILED", null, error); // a `then` getter or trap threw
        }
        if (thenable) {
          try {
            const running = Promise.resolve(raw);
            running.catch(() => {}); // a late rejection after a timeout is not unhandled
            raw = await Promise.race([running, armTimer()]);
          } catch (error) {
            const code = controller.signal.aborted ? "TOOL_TIMEOUT" : "EXECUTION_FAILED";
            return fail(code, null, error);
          }
          if (raw === TIMED_OUT) return fail("TOOL_TIMEOUT", null);
          rawSnapshot = snapshotJson(raw, limits.rawDepth, limits.rawBytes);
        }
      }
      if ("problem" in rawSnapshot) {
        const problem = rawSnapshot.problem;
        return fail(
          problem === "TOO_LARGE" ? "RESULT_TOO_LARGE" : "SERIALIZATION_FAILED",
          null,
          rawSnapshot.error,
        );
      }
      const rawJson = rawSnapshot.json;
      const rawBytes = utf8ByteLength(rawJson);
      if (rawBytes > limits.rawBytes || recordBaseBytes + rawBytes > limits.recordBytes) {
        return fail("RESULT_TOO_LARGE", null);
      }

      let projected: unknown;
      try {
        projected = tool.project(
          rawSnapshot.value,
          new RecordedContext(run, toolCallId, requestJson),
        );
      } catch (error) {
        return fail("PROJECTION_FAILED", rawJson, error);
      }
      const { agentResultBytes } = limits;
      let checked = snapshotProjection(projected, CONTENT_DEPTH, agentResultBytes);
      if ("problem" in checked) {
        let thenable = false;
        try {
          thenable = isThenable(projected);
        } catch (error) {
          return fail("INVALID_PROJECTION", rawJson, error);
        }
        if (thenable) {
          try {
            const projecting = Promise.resolve(projected);
            projecting.catch(() => {});
            projected = await Promise.race([projecting, armTimer()]);
          } catch (error) {
            return fail("PROJECTION_FAILED", rawJson, error);
          }
          if (projected === TIMED_OUT) return fail("TOOL_TIMEOUT", rawJson);
          checked = snapshotProjection(projected, CONTENT_DEPTH, agentResultBytes);
        }
      }
      if ("problem" in checked) {
        const code = checked.problem === "TOO_LARGE" ? "RESULT_TOO_LARGE" : "INVALID_PROJECTION";
        return fail(code, rawJson, checked.error);
      }
      const agentResultJson = checked.json;
      const agentBytes = utf8ByteLength(agentResultJson);
      if (
        agentBytes > limits.agentResultBytes ||
        recordBaseBytes + rawBytes + agentBytes > limits.recordBytes
      ) {
        return fail("RESULT_TOO_LARGE", rawJson);
      }
      return {
        outcome: {
          status: "READY",
          evidence: checked.projection.evidence,
          rawJson,
          agentResultJson,
        },
        projection: checked.projection,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  #refuse(
    run: RunContext,
    toolCallId: string | null,
    toolName: string | null,
    code: ErrorCode,
    detail?: unknown,
    issues?: InputIssue[],
  ): ErrorResult {
    if (this.#observe !== undefined) {
      this.#emit({
        type: "call.refused",
        runId: run.runId,
        toolCallId,
        toolName,
        code,
        ...(detail === undefined ? {} : { error: detail }),
      });
    }
    const result = errorResult(toolCallId, code);
    // Schema issues name fields and expected types only, never values: safe for the agent.
    return issues === undefined ? result : { ...result, issues };
  }

  async #storeCall<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof BoundaryError) throw error;
      throw new BoundaryError("STORE_UNAVAILABLE", { cause: error });
    }
  }

  #emit(event: BoundaryEvent): void {
    if (this.#observe === undefined) return;
    try {
      this.#observe(event);
    } catch {
      // An observer must never change an outcome.
    }
  }
}

/**
 * What a projector gets besides the raw response. `input` is the recorded request, parsed when
 * first asked for (the tool may have changed its own copy); a class, as an object literal with
 * a getter costs far more to create.
 */
class RecordedContext implements ProjectContext {
  readonly run: RunContext;
  readonly toolCallId: string;
  readonly #requestJson: string;
  #input: JsonObject | undefined;

  constructor(run: RunContext, toolCallId: string, requestJson: string) {
    this.run = run;
    this.toolCallId = toolCallId;
    this.#requestJson = requestJson;
  }

  get input(): JsonObject {
    return this.#input ??= JSON.parse(this.#requestJson) as JsonObject;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/** A snapshot of the input, which must be a JSON object. */
function snapshotObject(
  value: unknown,
  maxDepth: number,
  maxLength: number,
): { json: string; value: JsonObject } | { problem: SnapshotProblem; error?: unknown } {
  const snapshot = snapshotJson(value, maxDepth, maxLength);
  if ("problem" in snapshot) return snapshot;
  const copy = snapshot.value;
  // The copy is the boundary's own plain data: these checks run no foreign code.
  if (typeof copy !== "object" || copy === null || Array.isArray(copy)) {
    return { problem: "NOT_JSON" };
  }
  return { json: snapshot.json, value: copy };
}

function errorResult(toolCallId: string | null, code: ErrorCode): ErrorResult {
  return { status: "ERROR", toolCallId, code, message: ERROR_MESSAGES[code] };
}

function positive(name: string, value: unknown, min = 1): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`Invalid ${name}: expected an integer of at least ${min}`);
  }
  return value;
}

function toRunContext(state: {
  runId: string;
  deadline: number;
  startedAt: number;
  budget: { calls: number; perTool: Record<string, number> };
}): RunContext {
  return Object.freeze({
    runId: state.runId,
    deadline: state.deadline,
    startedAt: state.startedAt,
    budget: Object.freeze({
      calls: state.budget.calls,
      perTool: Object.freeze({ ...state.budget.perTool }),
    }),
  });
}

function toCanonicalRecord(stored: StoredRecord): CanonicalRecord {
  return {
    runId: stored.runId,
    toolCallId: stored.toolCallId,
    toolName: stored.toolName,
    status: stored.status,
    evidence: stored.evidence,
    request: JSON.parse(stored.requestJson),
    ...(stored.rawJson === null ? {} : { raw: JSON.parse(stored.rawJson) }),
    agentResult: stored.agentResultJson === null ? null : JSON.parse(stored.agentResultJson),
    errorCode: stored.errorCode,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
    expiresAt: stored.expiresAt,
  };
}
