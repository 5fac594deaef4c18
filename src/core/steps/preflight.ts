/**
 * Step 1 of `invoke`, in process and without I/O: the run (a context or a reference), the
 * caller's options, the envelope's fields (each read once), the tool, and the input, read once
 * into the request that is recorded.
 *
 * @module
 */
import * as v from "valibot";
import type { InvokeOptions } from "../options.ts";
import type { ErrorCode } from "../errors.ts";
import { isSafeRunId, isSafeToolCallId } from "../ids.ts";
import { toInputIssues } from "../issues.ts";
import {
  type JsonObject,
  type JsonSnapshot,
  snapshotJson,
  type SnapshotProblem,
  snapshotText,
} from "../json.ts";
import type { AnyToolDefinition } from "../tool.ts";
import { checkCost, checkEpochMs } from "../limits.ts";
import type { ErrorResult, InputIssue, RunContext, RunRef, ToolCallEnvelope } from "../types.ts";
import { utf8ByteLength } from "../utf8.ts";
import type { Setup } from "../setup.ts";
import { Call, type GivenRun, isAborted, refuse } from "./call.ts";

/**
 * Checks the call itself, in order: the tool call ID, the run, the tool, then (unless the
 * caller has already given up: CANCELLED) the input and, for a tool with a `cost`, the call's
 * cost (INVALID_COST when its function throws or gives no cost).
 *
 * @returns The call, or the refusal (nothing is recorded).
 * @throws {TypeError} When `run` is neither a run context nor a run reference, or
 *   `options.signal` not an AbortSignal (programming errors).
 */
export function preflight(
  setup: Setup,
  given: RunContext | RunRef,
  envelope: unknown,
  options: InvokeOptions | undefined,
): Call | ErrorResult {
  const run = givenRun(given, setup.ledger !== undefined);
  const signal = callerSignal(options);
  // Only the observer's durationMs needs the start time.
  const startedAt = setup.observe === undefined ? 0 : setup.clock();
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
    return refuse(setup, run.runId, null, null, "INVALID_TOOL_CALL_ID", failed(0));
  }
  if (read < 2 || runId !== run.runId) {
    return refuse(setup, run.runId, toolCallId, null, "RUN_MISMATCH", failed(1));
  }
  const tool = read >= 3 && typeof toolName === "string" ? setup.tools.get(toolName) : undefined;
  if (tool === undefined) {
    return refuse(setup, run.runId, toolCallId, null, "UNKNOWN_TOOL", failed(2));
  }
  if (signal !== undefined && isAborted(signal)) {
    return refuse(setup, run.runId, toolCallId, tool.name, "CANCELLED");
  }
  if (read < 4) return refuse(setup, run.runId, toolCallId, tool.name, "INVALID_INPUT", failed(3));

  const parsed = parseInput(setup, tool, input);
  if ("code" in parsed) {
    const { code, error, issues } = parsed;
    return refuse(setup, run.runId, toolCallId, tool.name, code, error, issues);
  }
  const call = new Call(setup, run, tool, toolCallId, parsed, signal, startedAt);
  const priced = setup.costs.get(tool.name);
  if (priced !== undefined) {
    const cost = costOf(priced, parsed.requestJson);
    if (typeof cost !== "number") {
      return refuse(setup, run.runId, toolCallId, tool.name, "INVALID_COST", cost.error);
    }
    call.cost = cost;
  }
  return call;
}

/**
 * The call's cost: the tool's number (checked by the boundary's setup), or what its function
 * returns for a copy of the recorded request (so that nothing it does reaches what the tool
 * receives), if that is a cost.
 */
function costOf(
  cost: number | ((input: JsonObject) => unknown),
  requestJson: string,
): number | { error: unknown } {
  if (typeof cost === "number") return cost;
  try {
    return checkCost("cost", cost(JSON.parse(requestJson)));
  } catch (error) {
    return { error };
  }
}

/**
 * The run `invoke` was given, each field read once: a {@linkcode RunContext} (it has a numeric
 * `deadline`) or a {@linkcode RunRef}; either may name its instance by `startedAt`, and a context
 * must when records are signed (`signed`).
 *
 * @throws {TypeError} For anything else (a programming error).
 */
function givenRun(given: RunContext | RunRef, signed: boolean): GivenRun {
  let runId: unknown;
  let deadline: unknown;
  let startedAt: unknown;
  try {
    if (typeof given === "object" && given !== null) {
      runId = given.runId;
      deadline = (given as Partial<RunContext>).deadline;
      startedAt = given.startedAt;
    }
  } catch {
    runId = undefined; // a getter threw: not a run
  }
  const context = typeof deadline === "number";
  if (
    !isSafeRunId(runId) || !isInstance(startedAt) ||
    // A signed record names its run instance: the run's start, which a context always carries.
    (signed && context && startedAt === undefined)
  ) {
    throw new TypeError(
      "Cannot invoke: run must be the RunContext returned by startRun() or a { runId, startedAt? }",
    );
  }
  return {
    runId,
    startedAt,
    context: context ? given as RunContext : null,
  };
}

/** Absent, or an integer epoch ms (a run's `startedAt`). */
function isInstance(value: unknown): value is number | undefined {
  if (value === undefined) return true;
  try {
    checkEpochMs("startedAt", value);
    return true;
  } catch {
    return false;
  }
}

/** The caller's signal, read once. */
function callerSignal(options: InvokeOptions | undefined): AbortSignal | undefined {
  const signal = options?.signal;
  if (signal === undefined) return undefined;
  if (
    typeof signal !== "object" || signal === null || typeof signal.aborted !== "boolean" ||
    typeof signal.addEventListener !== "function"
  ) {
    throw new TypeError("Cannot invoke: options.signal must be an AbortSignal");
  }
  return signal;
}

function parseInput(
  setup: Setup,
  tool: AnyToolDefinition,
  raw: unknown,
):
  | { input: JsonObject; requestJson: string; requestBytes: number }
  | { code: ErrorCode; issues?: InputIssue[]; error?: unknown } {
  const { requestBytes, inputDepth } = setup.limits;
  // Stored JSON is never much larger than its text (and a schema may drop keys), so input
  // whose JSON is certain to pass four times the limit is refused without reading further.
  const maxLength = requestBytes * 4;
  let snapshot;
  if (typeof raw === "string") {
    if (raw.length > maxLength) return { code: "REQUEST_TOO_LARGE" };
    // The boundary's own parse: plain data no one else holds, read without a copy.
    snapshot = objectOf(snapshotText(raw, inputDepth));
  } else {
    snapshot = snapshotObject(raw, inputDepth, maxLength);
  }
  if (tool.input !== undefined && "value" in snapshot) {
    // The schema only ever sees plain data of the boundary's own; its output is read once
    // again, as it may hold anything a transform returned.
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

/** A snapshot of the input, which must be a JSON object. */
function snapshotObject(
  value: unknown,
  maxDepth: number,
  maxLength: number,
): { json: string; value: JsonObject } | { problem: SnapshotProblem; error?: unknown } {
  return objectOf(snapshotJson(value, maxDepth, maxLength));
}

/** The snapshot when it is of a JSON object, else NOT_JSON. */
function objectOf(
  snapshot: JsonSnapshot,
): { json: string; value: JsonObject } | { problem: SnapshotProblem; error?: unknown } {
  if ("problem" in snapshot) return snapshot;
  const copy = snapshot.value;
  // The copy is the boundary's own plain data: these checks run no foreign code.
  if (typeof copy !== "object" || copy === null || Array.isArray(copy)) {
    return { problem: "NOT_JSON" };
  }
  return { json: snapshot.json, value: copy };
}
