/**
 * What the steps of `invoke` share: the state of one call as it moves through the steps, and
 * the one stop of its tool stage (the time limit or the caller's signal).
 *
 * Each step of `ToolBoundary.invoke` has its own file in this folder, named as `invoke` calls
 * it (preflight, authorize, begin, execute, check, project, complete, result), so that reading
 * `invoke` tells where each rule lives; `recall` (the recorded result of one call) and `replay`
 * (the recorded result given again) read a call without running it.
 *
 * @module
 */
import { ERROR_MESSAGES, type ErrorCode } from "../errors.ts";
import { readFailure } from "../failure.ts";
import type { JsonObject } from "../json.ts";
import { checkCost, MAX_TIMER_MS, RECORD_OVERHEAD_BYTES } from "../limits.ts";
import { utf8ByteLength } from "../utf8.ts";
import { emit, type Setup } from "../setup.ts";
import type { CompleteOutcome, StoredRecord } from "../store.ts";
import type { AnyToolDefinition } from "../tool.ts";
import type { ErrorResult, InputIssue, Projection, RunContext, RunInstance } from "../types.ts";

/**
 * The run `invoke` was given, read once: its ID, the instance it names (if any) and, for a
 * {@linkcode RunContext}, the context itself (`null` for a {@linkcode RunRef}).
 */
export interface GivenRun {
  runId: string;
  startedAt: number | undefined;
  context: RunContext | null;
}

/** What a race resolves to when the tool stage was stopped. */
export const STOPPED: unique symbol = Symbol("stopped");

/**
 * One call that passed preflight, with its input read once into the request that is recorded,
 * and what the later steps decide. One object per call, so that no step allocates its own.
 */
export class Call {
  readonly setup: Setup;
  /** The run ID, read once from what `invoke` was given. */
  readonly runId: string;
  /** The `startedAt` of the run instance the call is for, when `invoke` was given one. */
  readonly instance: number | undefined;
  /** The caller's run context; `null` when `invoke` was given a run reference. */
  readonly given: RunContext | null;
  /**
   * The run as the tool sees it: the caller's context, or (given a run reference) the context
   * read for the `authorize` hook or the instance the store's begin answered; `null` until then.
   */
  run: RunInstance | null;
  readonly tool: AnyToolDefinition;
  readonly toolCallId: string;
  /** The recorded request, as the tool receives it. */
  readonly input: JsonObject;
  readonly requestJson: string;
  readonly requestBytes: number;
  /** The caller's signal, if `invoke` was given one. */
  readonly signal: AbortSignal | undefined;
  /** Clock reading when `invoke` began: only the observer's `durationMs` needs it. */
  readonly invokedAt: number;
  /** The attempt that began the record. */
  attemptId = "";
  /** The PROJECTING record begin created: what complete signs starts from it. */
  begun: StoredRecord | null = null;
  /** What complete writes, once a step has decided it. */
  outcome: CompleteOutcome | null = null;
  /** Internal detail of a failure, for the observer only. */
  error: unknown = undefined;
  /** The agent's copy of the projection, when READY. */
  projection: Projection | null = null;
  /** `execute` returned `toolError(raw)`: the raw response is checked, then the call fails. */
  toolFailed = false;
  /**
   * Bytes of the raw response's JSON, once checked: exact when `rawBytesExact`, else a bound
   * that kept every limit (`utf8ByteBound`).
   */
  rawBytes = 0;
  rawBytesExact = false;
  /** Why the tool stage was stopped: its time limit or the caller's signal. */
  stopCode: "TOOL_TIMEOUT" | "CANCELLED" | null = null;
  /** The call's cost (preflight, from the tool's `cost`); `undefined` for a tool without one. */
  cost: number | undefined = undefined;
  /** What the tool settled (`ctx.settle`) while its stage ran; `undefined` when it did not. */
  settled: number | undefined = undefined;
  /** Whether the executor was called: a call that never ran spends nothing. */
  toolRan = false;
  #settling = false;
  #controller: AbortController | undefined = undefined;
  #toolStartedAt = 0;
  #toolBudgetMs = 0;
  #stopped: Promise<typeof STOPPED> | undefined = undefined;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #onAbort: (() => void) | undefined = undefined;

  constructor(
    setup: Setup,
    run: GivenRun,
    tool: AnyToolDefinition,
    toolCallId: string,
    request: { input: JsonObject; requestJson: string; requestBytes: number },
    signal: AbortSignal | undefined,
    invokedAt: number,
  ) {
    this.setup = setup;
    this.runId = run.runId;
    this.instance = run.startedAt;
    this.given = run.context;
    this.run = run.context;
    this.tool = tool;
    this.toolCallId = toolCallId;
    this.input = request.input;
    this.requestJson = request.requestJson;
    this.requestBytes = request.requestBytes;
    this.signal = signal;
    this.invokedAt = invokedAt;
  }

  /**
   * Bytes of the record but for the raw response and the agent result: the request, the IDs,
   * the tool name and the overhead. The IDs are ASCII (their patterns), so their length is their
   * byte count; a tool name may be any text.
   */
  fixedRecordBytes(): number {
    return this.requestBytes + RECORD_OVERHEAD_BYTES + this.runId.length +
      this.toolCallId.length + utf8ByteLength(this.tool.name);
  }

  /**
   * `ctx.settle` of a tool with a cost: what the call spent, while the tool stage runs; the last
   * value stands.
   *
   * @throws {RangeError} For a value that is not a cost (nothing is settled).
   * @throws {TypeError} Once the tool stage is over.
   */
  settle(spent: number): void {
    if (!this.#settling) {
      throw new TypeError("Cannot settle: the tool stage of this call is over");
    }
    this.settled = checkCost("spent", spent);
  }

  /**
   * What complete writes as the record's `cost.spent`: nothing for a record without a cost; 0 for
   * one whose tool never ran (cancelled after it began); what the tool settled; else
   * `undefined`, which spends the reservation.
   */
  spent(): number | undefined {
    if (this.begun?.cost === undefined) return undefined;
    return this.toolRan ? this.settled : 0;
  }

  /** Refuses the call (nothing recorded by this call): tells the observer, returns the error. */
  refuse(code: ErrorCode, detail?: unknown): ErrorResult {
    return refuse(this.setup, this.runId, this.toolCallId, this.tool.name, code, detail);
  }

  /** Decides an ERROR outcome. @returns `null`, for the step to return. */
  fail(errorCode: ErrorCode, rawJson: string | null, error?: unknown): null {
    this.outcome = { status: "ERROR", errorCode, rawJson };
    if (error !== undefined) this.error = error;
    return null;
  }

  /**
   * The executor threw (or its promise rejected) on its own: EXECUTION_FAILED, and the record
   * keeps what it threw, read once (`readFailure`), for the harness only.
   * @returns `null`, for the step to return.
   */
  threw(error: unknown): null {
    const failure = readFailure(error);
    this.outcome = { status: "ERROR", errorCode: "EXECUTION_FAILED", rawJson: null, failure };
    this.error = error;
    return null;
  }

  /** Whether the caller's signal has aborted (a signal that cannot say counts as aborted). */
  cancelled(): boolean {
    return this.signal !== undefined && isAborted(this.signal);
  }

  /**
   * Starts the tool stage: its clock, its time budget (the tool's timeout, the run deadline,
   * the timer cap) and the signal the executor gets. Called once the call has begun, when the
   * run's context is known.
   */
  startTool(timeoutMs: number): AbortSignal {
    this.toolRan = true;
    this.#settling = true;
    const controller = this.#controller = new AbortController();
    const startedAt = this.#toolStartedAt = this.setup.clock();
    this.#toolBudgetMs = Math.min(timeoutMs, this.run!.deadline - startedAt, MAX_TIMER_MS);
    return controller.signal;
  }

  /**
   * Resolves to {@linkcode STOPPED} when the tool stage runs out of time or the caller's signal
   * aborts, whichever comes first; the executor's signal then fires. Armed on first use, only
   * once the executor or the projector returns a promise: a synchronous one cannot be
   * interrupted, and a timer and a listener cost more than a fast tool call.
   */
  stopped(): Promise<typeof STOPPED> {
    return this.#stopped ??= new Promise<typeof STOPPED>((resolve) => {
      const stop = (code: "TOOL_TIMEOUT" | "CANCELLED", reason: unknown) => {
        if (this.stopCode !== null) return;
        // Set before the abort, which may make the tool reject before this resolves.
        this.stopCode = code;
        this.#controller?.abort(reason);
        resolve(STOPPED);
      };
      const left = this.#toolBudgetMs - (this.setup.clock() - this.#toolStartedAt);
      this.#timer = setTimeout(
        () => stop("TOOL_TIMEOUT", new DOMException("The tool call timed out", "TimeoutError")),
        Math.max(0, left),
      );
      const signal = this.signal;
      if (signal !== undefined) {
        const onAbort = () => stop("CANCELLED", abortReason(signal));
        if (isAborted(signal)) onAbort();
        else this.#onAbort = listen(signal, onAbort);
      }
    });
  }

  /** Ends the tool stage: clears the timer and removes the listener on the caller's signal. */
  disarm(): void {
    this.#settling = false;
    clearTimeout(this.#timer);
    if (this.#onAbort !== undefined) unlisten(this.signal!, this.#onAbort);
  }
}

/**
 * Refuses a call that created no record: tells the observer (with the internal detail), and
 * returns the agent's error with the code's fixed message.
 */
export function refuse(
  setup: Setup,
  runId: string,
  toolCallId: string | null,
  toolName: string | null,
  code: ErrorCode,
  detail?: unknown,
  issues?: InputIssue[],
): ErrorResult {
  const refused = errorResult(toolCallId, code);
  // Schema issues name fields and expected types only, never values: safe for the agent.
  const result = issues === undefined ? refused : { ...refused, issues };
  if (setup.observe !== undefined) {
    emit(setup, {
      type: "call.refused",
      runId,
      toolCallId,
      toolName,
      code,
      result: structuredClone(result),
      ...(detail === undefined ? {} : { error: detail }),
    });
  }
  return result;
}

/** The agent's error: the code and its fixed message, nothing from the call. */
export function errorResult(toolCallId: string | null, code: ErrorCode): ErrorResult {
  return { status: "ERROR", toolCallId, code, message: ERROR_MESSAGES[code] };
}

/** Reads `then` as `await` would; the read may run foreign code and throw. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

// The caller's signal is the harness's object: reading it must never throw past a step, as a
// begun record must still end.

/** Whether the signal has aborted; one that throws when asked counts as aborted. */
export function isAborted(signal: AbortSignal): boolean {
  try {
    return signal.aborted !== false;
  } catch {
    return true;
  }
}

/** The caller's reason, passed on to the executor's signal. */
export function abortReason(signal: AbortSignal): unknown {
  try {
    return signal.reason;
  } catch (error) {
    return error;
  }
}

/** Listens once for the abort; returns the listener to remove, or `undefined` if it failed. */
export function listen(signal: AbortSignal, onAbort: () => void): (() => void) | undefined {
  try {
    signal.addEventListener("abort", onAbort, { once: true });
    return onAbort;
  } catch {
    return undefined;
  }
}

/** Removes a listener {@linkcode listen} added. */
export function unlisten(signal: AbortSignal, onAbort: () => void): void {
  try {
    signal.removeEventListener("abort", onAbort);
  } catch {
    // Nothing to undo.
  }
}
