/**
 * `ToolBoundary`: the fail-closed boundary around every tool call.
 *
 * @module
 */
import { MemoryStore } from "../stores/memory.ts";
import { BoundaryError, type ErrorCode } from "./errors.ts";
import { isSafeRunId, isSafeToolCallId } from "./ids.ts";
import type { JsonObject } from "./json.ts";
import { jsonSchemaOf } from "./json_schema.ts";
import {
  checkBudget,
  checkEpochMs,
  checkPerTool,
  checkTtlMs,
  DEFAULT_AUTHORIZE_TIMEOUT_MS,
  DEFAULT_BUDGET,
  DEFAULT_LIMITS,
  DEFAULT_RECORD_TTL_MS,
  DEFAULT_RUN_TTL_MS,
  type Limits,
  MAX_TTL_MS,
  setOwnBudget,
} from "./limits.ts";
import { rowsToFacts } from "./progress.ts";
import { requestDigest } from "./digest.ts";
import type { CallSummary, Store, StoredRecord } from "./store.ts";
import { type AnyToolDefinition, isToolName } from "./tool.ts";
import type {
  BoundaryResult,
  CanonicalRecord,
  Citation,
  ErrorResult,
  ObservedFact,
  RunBudget,
  RunContext,
  RunEnd,
  ToolCallEnvelope,
} from "./types.ts";
import { authorize } from "./steps/authorize.ts";
import { begin } from "./steps/begin.ts";
import { Call, emit, errorResult, type Setup } from "./steps/call.ts";
import { check } from "./steps/check.ts";
import { complete } from "./steps/complete.ts";
import { execute } from "./steps/execute.ts";
import { preflight } from "./steps/preflight.ts";
import { project } from "./steps/project.ts";
import { replayResult } from "./steps/replay.ts";
import { result } from "./steps/result.ts";

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
    /** A copy of what `invoke` returned to the agent. */
    result: ErrorResult;
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
    /** A copy of what `invoke` returned to the agent (its evidence, for traces). */
    result: BoundaryResult;
    /** Internal detail of a failure; never shown to an agent. */
    error?: unknown;
  }
  | {
    /** A used key with the same request got its recorded result again: nothing ran. */
    type: "call.replayed";
    runId: string;
    toolCallId: string;
    toolName: string;
    /** The recorded status. */
    status: "READY" | "ERROR";
    /** The recorded error code of an ERROR record, else `null`. */
    code: ErrorCode | null;
    /** A copy of what `invoke` returned to the agent (`replayed: true`). */
    result: BoundaryResult;
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

/** Most tool call IDs one `checkCitations` takes. */
export const MAX_CITATIONS = 1_000;

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
  /**
   * What `invoke` answers for a tool call ID already used in the run with the same request (an
   * equal input as a JSON value): `"refuse"`, ERROR DUPLICATE_TOOL_CALL; or `"replay"`, the
   * recorded result exactly as first returned plus `replayed: true` (a record still PROJECTING:
   * ERROR OUTCOME_UNKNOWN; one that expired: ERROR RECORD_EXPIRED). Either way the tool never
   * runs again and no budget is used; another request under a used ID is TOOL_CALL_CONFLICT.
   * @default "refuse"
   */
  onDuplicate?: "refuse" | "replay";
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

/** Options of {@linkcode ToolBoundary.invoke}. */
export interface InvokeOptions {
  /**
   * The agent framework's cancellation. Aborted before the call begins: ERROR CANCELLED, no
   * record, the tool never runs. Aborted while the store begins the call: its record ends ERROR
   * CANCELLED and the tool never runs. Aborted while the tool or its projector runs: the tool's
   * `ctx.signal` fires with the same reason and the record ends ERROR CANCELLED (a tool that
   * ran out of time first stays TOOL_TIMEOUT).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, type InvokeOptions, ToolBoundary } from "@tool-boundary/core";
   * const echo = defineTool({
   *   name: "echo",
   *   readOnly: true,
   *   execute: (input) => input,
   *   project: () => ({ evidence: "NO_EVIDENCE", scope: "echo", content: null }),
   * });
   * const boundary = new ToolBoundary({ tools: [echo] });
   * const run = await boundary.startRun();
   * const options: InvokeOptions = { signal: AbortSignal.abort() };
   * const envelope = { toolCallId: "call_1", runId: run.runId, toolName: "echo", input: {} };
   * const result = await boundary.invoke(run, envelope, options);
   * assert.equal(result.status === "ERROR" && result.code, "CANCELLED");
   * ```
   */
  signal?: AbortSignal;
}

/**
 * One tool as {@linkcode ToolBoundary.describeTools} lists it, for a model's tool list.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, ToolBoundary, type ToolDescription } from "@tool-boundary/core";
 * const ping = defineTool({
 *   name: "ping",
 *   readOnly: true,
 *   execute: () => ({}),
 *   project: () => ({ evidence: "NO_EVIDENCE", scope: "ping", content: null }),
 * });
 * const [listed]: ToolDescription[] = new ToolBoundary({ tools: [ping] }).describeTools();
 * assert.deepEqual(listed, { name: "ping", readOnly: true, inputSchema: { type: "object" } });
 * ```
 */
export interface ToolDescription {
  /** The tool's name. */
  name: string;
  /** The tool's description, when it has one. */
  description?: string;
  /** Whether the tool is read-only; a writable one is listed too, and refused NOT_READ_ONLY. */
  readOnly: boolean;
  /** JSON Schema (2020-12) of the input: the tool's valibot schema, or `{ type: "object" }`. */
  inputSchema: JsonObject;
}

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
  /** What the steps of `invoke` read. */
  readonly #setup: Setup;
  readonly #runTtlMs: number;
  readonly #defaultBudget: RunBudget;
  /** The tool list of `describeTools`, as JSON text: each call gets its own copy. */
  readonly #described: string;

  /**
   * Creates a boundary over a store and a fixed set of tools.
   *
   * @param options Store, tools, limits, TTLs, authorization, observer and clock.
   * @throws {TypeError} When `tools` is missing, has duplicates or a name that is empty or holds a
   *   lone surrogate, `store` is not a store, or `onDuplicate` is neither "refuse" nor "replay".
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
    const store = options.store ?? new MemoryStore();
    for (
      const method of [
        "startRun",
        "getRun",
        "begin",
        "complete",
        "get",
        "endRun",
        "readFacts",
        "lookupCall",
        "listCalls",
      ]
    ) {
      if (typeof (store as unknown as Record<string, unknown>)[method] !== "function") {
        throw new TypeError(`Cannot create ToolBoundary: store lacks ${method}()`);
      }
    }
    this.store = store;
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    for (const [name, value] of Object.entries(limits)) positive(`limits.${name}`, value);
    this.limits = Object.freeze(limits);
    this.#runTtlMs = checkTtlMs("runTtlMs", options.runTtlMs ?? DEFAULT_RUN_TTL_MS);
    this.#defaultBudget = options.defaultBudget ?? DEFAULT_BUDGET;
    const clock = options.clock;
    const onDuplicate = options.onDuplicate ?? "refuse";
    if (onDuplicate !== "refuse" && onDuplicate !== "replay") {
      throw new TypeError('Cannot create ToolBoundary: onDuplicate must be "refuse" or "replay"');
    }
    this.#setup = {
      store,
      limits: this.limits,
      tools,
      recordTtlMs: checkTtlMs("recordTtlMs", options.recordTtlMs ?? DEFAULT_RECORD_TTL_MS),
      onDuplicate,
      authorize: options.authorize,
      authorizeTimeoutMs: positive(
        "authorizeTimeoutMs",
        options.authorizeTimeoutMs ?? DEFAULT_AUTHORIZE_TIMEOUT_MS,
      ),
      observe: options.observe,
      // Whole milliseconds, as every store keeps them (a fractional clock would not cross to Redis).
      clock: clock === undefined ? Date.now : () => Math.floor(clock()),
      ended: new WeakSet<RunContext>(),
    };
    this.#described = JSON.stringify([...tools.values()].map(describe));
  }

  /** The tools, by name. */
  get tools(): ReadonlyMap<string, AnyToolDefinition> {
    return this.#setup.tools;
  }

  /**
   * Lists every tool of the boundary, writable ones included, as a model's tool list needs them:
   * name, description, read-only flag and the JSON Schema of the input. Computed once, when the
   * boundary is created; each call returns a fresh copy.
   *
   * @returns One entry per tool, in the order the tools were given.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import * as v from "valibot";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   *
   * const search = defineTool({
   *   name: "search_logs",
   *   description: "Searches the service logs.",
   *   readOnly: true,
   *   input: v.object({ query: v.string() }),
   *   execute: ({ query }) => ({ query }),
   *   project: (raw) => ({ evidence: "NO_EVIDENCE", scope: raw.query, content: [] }),
   * });
   * const restart = defineTool({
   *   name: "restart",
   *   readOnly: false,
   *   execute: () => ({}),
   *   project: () => ({ evidence: "NO_EVIDENCE", scope: "restart", content: null }),
   * });
   * const boundary = new ToolBoundary({ tools: [search, restart] });
   * assert.deepEqual(boundary.describeTools(), [
   *   {
   *     name: "search_logs",
   *     description: "Searches the service logs.",
   *     readOnly: true,
   *     inputSchema: {
   *       type: "object",
   *       properties: { query: { type: "string" } },
   *       required: ["query"],
   *     },
   *   },
   *   { name: "restart", readOnly: false, inputSchema: { type: "object" } },
   * ]);
   * ```
   */
  describeTools(): ToolDescription[] {
    return JSON.parse(this.#described);
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
    const now = checkEpochMs("clock()", this.#setup.clock());
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
    for (const tool of this.#setup.tools.values()) {
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
        ttlMs: Math.min(deadline - now + this.#setup.recordTtlMs, MAX_TTL_MS),
        attemptId: crypto.randomUUID(),
        now,
      })
    );
    if (!outcome.ok) throw new BoundaryError(outcome.code);
    const run = toRunContext(outcome.run);
    emit(this.#setup, { type: "run.started", runId, deadline: run.deadline });
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
   * The steps, each in its own file of `./steps/`: preflight, authorize, begin (the record is
   * created), execute, check, project, complete (the record ends READY or ERROR), result.
   *
   * @param run The explicit run context from `startRun`.
   * @param envelope The call as the agent framework produced it.
   * @param options The caller's `signal` (see {@linkcode InvokeOptions}).
   * @returns The bounded READY result, or an ERROR with a safe code. Never raw data.
   * @throws {TypeError} When `run` is not a run context or `options.signal` not an AbortSignal
   *   (programming errors).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   *
   * const slow = defineTool({
   *   name: "slow_search",
   *   readOnly: true,
   *   execute: (_input, { signal }) =>
   *     new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
   *   project: () => ({ evidence: "NO_EVIDENCE", scope: "never reached", content: null }),
   * });
   * const boundary = new ToolBoundary({ tools: [slow] });
   * const run = await boundary.startRun();
   * const controller = new AbortController();
   * const pending = boundary.invoke(run, {
   *   toolCallId: "call_1", runId: run.runId, toolName: "slow_search", input: {},
   * }, { signal: controller.signal });
   * setTimeout(() => controller.abort(new Error("the user pressed stop")), 10);
   * const result = await pending;
   * assert.equal(result.status === "ERROR" && result.code, "CANCELLED");
   * assert.equal((await boundary.inspect(run.runId, "call_1"))?.errorCode, "CANCELLED");
   * ```
   */
  async invoke(
    run: RunContext,
    envelope: ToolCallEnvelope,
    options?: InvokeOptions,
  ): Promise<BoundaryResult> {
    const call = preflight(this.#setup, run, envelope, options);
    if (!(call instanceof Call)) return call;
    // A step answers with a promise only when it has to wait (for an authorize hook, a tool or
    // a projector that returned one): awaiting a plain value would still cost a turn.
    let refused = authorize(call);
    if (refused instanceof Promise) refused = await refused;
    // A refusal, or (when duplicates are replayed) the recorded result: nothing more runs.
    const answered = refused ?? await begin(call);
    if (answered !== null) return answered;
    // The record exists: whatever happens from here on, complete() ends it READY or ERROR.
    if (call.outcome === null) { // not cancelled while it began
      try {
        let raw = execute(call);
        if (raw instanceof Promise) raw = await raw;
        if (raw !== null && check(call, raw)) {
          const projecting = project(call, raw);
          if (projecting !== undefined) await projecting;
        }
      } catch (error) {
        call.fail("EXECUTION_FAILED", null, error); // not expected: every step guards itself
      } finally {
        call.disarm();
      }
    }
    return result(call, await complete(call));
  }

  /**
   * Gives back the recorded result of a call, for a harness resuming after a crash: never runs
   * anything, never writes, uses no budget, and works after the run ended too. The envelope is
   * checked as `invoke` checks it (ID, run, tool, input read into the request that would be
   * recorded); then the run's begun call under that ID decides:
   * READY or ERROR record of the same request -> the result exactly as first returned, plus
   * `replayed: true`; another request (or another tool) -> ERROR TOOL_CALL_CONFLICT; still
   * PROJECTING -> ERROR OUTCOME_UNKNOWN; never begun -> ERROR RECORD_NOT_FOUND; begun but its
   * record expired -> ERROR RECORD_EXPIRED; the run gone -> ERROR RUN_NOT_FOUND. Never throws
   * for what the envelope holds; tells the observer nothing.
   *
   * @param run The run context (from `startRun` or `getRun`).
   * @param envelope The call as the agent framework produced it.
   * @returns The recorded result, or an ERROR with a safe code.
   * @throws {TypeError} When `run` is not a run context (a programming error).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   * let executed = 0;
   * const lookup = defineTool({
   *   name: "lookup",
   *   readOnly: true,
   *   execute: (input) => (executed++, { key: input.key }),
   *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "the table", content: raw.key }),
   * });
   * const boundary = new ToolBoundary({ tools: [lookup] });
   * const run = await boundary.startRun();
   * const envelope = { toolCallId: "call_1", runId: run.runId, toolName: "lookup", input: { key: "a" } };
   * const first = await boundary.invoke(run, envelope);
   * assert.deepEqual(await boundary.recall(run, envelope), { ...first, replayed: true });
   * const other = await boundary.recall(run, { ...envelope, input: { key: "b" } });
   * assert.equal(other.status === "ERROR" && other.code, "TOOL_CALL_CONFLICT");
   * assert.equal(executed, 1);
   * ```
   */
  async recall(run: RunContext, envelope: ToolCallEnvelope): Promise<BoundaryResult> {
    // The checks of invoke, without its events: a recall is no tool call.
    const call = preflight({ ...this.#setup, observe: undefined }, run, envelope, undefined);
    if (!(call instanceof Call)) return call;
    const { toolCallId } = call;
    let found;
    try {
      const digest = await requestDigest(call.tool.name, call.input);
      found = await this.store.lookupCall(run.runId, toolCallId);
      if (found !== null && found.call !== null && found.call.requestDigest !== digest) {
        return errorResult(toolCallId, "TOOL_CALL_CONFLICT");
      }
    } catch {
      return errorResult(toolCallId, "STORE_UNAVAILABLE");
    }
    if (found === null) return errorResult(toolCallId, "RUN_NOT_FOUND");
    if (found.call === null) return errorResult(toolCallId, "RECORD_NOT_FOUND");
    return replayResult(toolCallId, found.record);
  }

  /**
   * Every call the run began, in begin order, without payloads: each with its record's status
   * (EXPIRED once the record is gone), tool, evidence, error code and times. Refused calls were
   * never begun and are not listed. Never touches TTLs.
   *
   * @param runId The run ID.
   * @returns One summary per begun call.
   * @throws {BoundaryError} INVALID_RUN_ID (an ID outside the allow-list), RUN_NOT_FOUND (absent
   *   or expired) or STORE_UNAVAILABLE.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   * const ping = defineTool({
   *   name: "ping",
   *   readOnly: true,
   *   execute: () => ({}),
   *   project: () => ({ evidence: "NO_EVIDENCE", scope: "ping", content: null }),
   * });
   * const boundary = new ToolBoundary({ tools: [ping] });
   * const run = await boundary.startRun();
   * await boundary.invoke(run, { toolCallId: "call_1", runId: run.runId, toolName: "ping", input: {} });
   * const [call] = await boundary.listCalls(run.runId);
   * assert.equal(call?.toolCallId, "call_1");
   * assert.equal(call?.status, "READY");
   * assert.equal(call?.evidence, "NO_EVIDENCE");
   * ```
   */
  async listCalls(runId: string): Promise<CallSummary[]> {
    if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
    const listed = await this.#storeCall(() => this.store.listCalls(runId));
    if (listed === null) throw new BoundaryError("RUN_NOT_FOUND");
    return listed.calls;
  }

  /**
   * Tells, for each tool call ID a final answer cites, whether the run's records back it: one
   * store read over all of them. EVIDENCE: READY with EVIDENCE_FOUND, of this run;
   * NEGATIVE_OBSERVATION: READY with NO_EVIDENCE, with its scope; NOT_EVIDENCE: anything else
   * (never begun, expired, another run's, PROJECTING, ERROR, an ID outside the allow-list).
   *
   * @param run The run context, or its ID.
   * @param toolCallIds The cited IDs, at most {@linkcode MAX_CITATIONS}.
   * @returns One verdict per ID, in the order given (a repeated ID gets the same verdict again).
   * @throws {BoundaryError} INVALID_RUN_ID or STORE_UNAVAILABLE.
   * @throws {TypeError} When `toolCallIds` is not an array of strings.
   * @throws {RangeError} When it holds more than {@linkcode MAX_CITATIONS} IDs.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   * const search = defineTool({
   *   name: "search",
   *   readOnly: true,
   *   execute: (input) => ({ hits: input.query === "disk" ? ["rotate logs"] : [] }),
   *   project: (raw) => ({
   *     evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
   *     scope: "the runbook",
   *     content: raw.hits,
   *   }),
   * });
   * const boundary = new ToolBoundary({ tools: [search] });
   * const run = await boundary.startRun();
   * const call = (toolCallId: string, query: string) =>
   *   boundary.invoke(run, { toolCallId, runId: run.runId, toolName: "search", input: { query } });
   * await call("call_1", "disk");
   * await call("call_2", "cpu");
   * assert.deepEqual(await boundary.checkCitations(run, ["call_1", "call_2", "call_3"]), [
   *   { toolCallId: "call_1", verdict: "EVIDENCE" },
   *   { toolCallId: "call_2", verdict: "NEGATIVE_OBSERVATION", scope: "the runbook" },
   *   { toolCallId: "call_3", verdict: "NOT_EVIDENCE" },
   * ]);
   * ```
   */
  async checkCitations(
    run: RunContext | string,
    toolCallIds: readonly string[],
  ): Promise<Citation[]> {
    const runId = typeof run === "string" ? run : run?.runId;
    if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
    if (!Array.isArray(toolCallIds) || !toolCallIds.every((id) => typeof id === "string")) {
      throw new TypeError("Cannot check citations: toolCallIds must be an array of strings");
    }
    if (toolCallIds.length > MAX_CITATIONS) {
      throw new RangeError(`Cannot check citations: more than ${MAX_CITATIONS} tool call IDs`);
    }
    const ids = [...new Set(toolCallIds.filter(isSafeToolCallId))];
    const found = new Map<string, Citation>();
    if (ids.length > 0) {
      const read = await this.#storeCall(() =>
        this.store.readFacts({
          runId,
          identities: ids.map((toolCallId) => ({ runId, toolCallId })),
          maxFacts: ids.length,
          maxBytes: Infinity,
        })
      );
      for (const row of read.rows) {
        if (row.runId !== runId || row.status !== "READY") continue;
        if (row.evidence === "EVIDENCE_FOUND") {
          found.set(row.toolCallId, { toolCallId: row.toolCallId, verdict: "EVIDENCE" });
        } else if (row.evidence === "NO_EVIDENCE") {
          const { scope } = JSON.parse(row.agentResultJson) as { scope: string };
          found.set(row.toolCallId, {
            toolCallId: row.toolCallId,
            verdict: "NEGATIVE_OBSERVATION",
            scope,
          });
        }
      }
    }
    return toolCallIds.map((toolCallId) =>
      found.has(toolCallId)
        ? { ...found.get(toolCallId)! }
        : { toolCallId, verdict: "NOT_EVIDENCE" }
    );
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
    const ended = await this.#storeCall(() =>
      this.store.endRun({ runId, now: this.#setup.clock() })
    );
    if (!ended.ok) throw new BoundaryError(ended.code);
    if (typeof run !== "string") this.#setup.ended.add(run);
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
    emit(this.#setup, { type: "run.ended", runId, facts: facts.length, omitted: report.omitted });
    return report;
  }

  async #storeCall<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof BoundaryError) throw error;
      throw new BoundaryError("STORE_UNAVAILABLE", { cause: error });
    }
  }
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

function describe(tool: AnyToolDefinition): ToolDescription {
  let inputSchema: JsonObject = { type: "object" };
  if (tool.input !== undefined) {
    try {
      inputSchema = jsonSchemaOf(tool.input, true) as JsonObject;
    } catch {
      // A schema the converter cannot read is still checked at every call; listed as an object.
    }
  }
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    readOnly: tool.readOnly,
    inputSchema,
  };
}
