/**
 * Tool calls from durable workflow steps (Cloudflare Workflows, Restate, DBOS, ...) that run the
 * tool at most once however often the engine retries the step.
 *
 * Three parts, all framework-free:
 * - {@linkcode stepToolCallId}: the tool call ID from the step's identity (workflow or
 *   invocation ID, step name or index; never the attempt number), so a retried step reuses it.
 * - {@linkcode invokeOnce}: `invoke` on a boundary made with `onDuplicate: "replay"`; a retried
 *   step whose call completed gets the recorded result (`replayed: true`), and a step that died
 *   while its tool ran (the record still PROJECTING: OUTCOME_UNKNOWN) gets the policy you chose:
 *   a {@linkcode RetryLaterError} for the engine to back off on, or a probe.
 * - {@linkcode probeToolCallId}: the IDs probes run under.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { invokeOnce, stepToolCallId } from "@tool-boundary/durable";
 *
 * let executions = 0;
 * const lookup = defineTool({
 *   name: "lookup",
 *   readOnly: true,
 *   execute: (input) => (executions++, { key: input.key }),
 *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "the table", content: raw.key }),
 * });
 * const boundary = new ToolBoundary({ tools: [lookup], onDuplicate: "replay" });
 * const run = await boundary.startRun({ runId: "wf-42" });
 *
 * // The step body, as the engine runs it on every attempt.
 * const step = async () =>
 *   invokeOnce(boundary, run, {
 *     toolCallId: await stepToolCallId(["wf-42", "lookup-a"]),
 *     runId: run.runId,
 *     toolName: "lookup",
 *     input: { key: "a" },
 *   }, { onUnknown: "retry" });
 *
 * const first = await step();
 * const retried = await step(); // the engine lost the step's result and ran it again
 * assert.deepEqual(retried, { ...first, replayed: true });
 * assert.equal(executions, 1);
 * ```
 *
 * @module
 */
import type { BoundaryResult, RunContext, ToolCallEnvelope } from "@tool-boundary/core";
import type { CanonicalRecord } from "@tool-boundary/core/harness";
import { requireCapability, type Store } from "@tool-boundary/core/store";

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364); these
// aliases name them for the docs.
/**
 * `RunContext` of `@tool-boundary/core`: the run every call belongs to.
 * @internal
 */
type Run = RunContext;
/**
 * `ToolCallEnvelope` of `@tool-boundary/core`: the call as the step makes it.
 * @internal
 */
type Envelope = ToolCallEnvelope;
/**
 * `BoundaryResult` of `@tool-boundary/core`: what `invoke` returned.
 * @internal
 */
type Result = BoundaryResult;
/**
 * `CanonicalRecord` of `@tool-boundary/core`: what `inspect` returned.
 * @internal
 */
type Recorded = CanonicalRecord;
/**
 * `Store` of `@tool-boundary/core/store`: the boundary's store.
 * @internal
 */
type Durable = Store;

/** One part of a joined ID: the core's allow-list without `:`, the separator. */
const PART = /^[A-Za-z0-9_.-]+$/;

/** Longest ID {@linkcode stepToolCallId} returns: the core's 256, less room for `::p<n>`. */
export const MAX_STEP_TOOL_CALL_ID_LENGTH = 248;

/** Most probes {@linkcode invokeOnce} runs for one call. */
export const MAX_PROBES = 99;

/** Characters of the readable prefix a hashed ID keeps. */
const PREFIX_LENGTH = 96;

/**
 * The tool call ID of a workflow step's call, from the step's identity: the same parts give the
 * same ID on every attempt, different parts different IDs. Parts of `A-Z a-z 0-9 _ . -` joined by
 * `:` are the ID when they fit (at most {@linkcode MAX_STEP_TOOL_CALL_ID_LENGTH} characters);
 * otherwise the ID is a readable prefix, `::`, and the SHA-256 (base64url) of the parts as JSON.
 * A joined ID never holds `::`, so the two forms never meet. Pass the workflow (or invocation) ID
 * and the step's name or index, never the attempt number: a retry must reuse the ID.
 *
 * @param parts The step's identity, outermost first; at least one, each a string, read once.
 * @returns An ID within the core's allow-list (`TOOL_CALL_ID_PATTERN`), never one another
 *   identity gives, nor a probe's ({@linkcode probeToolCallId}) of another.
 * @throws {TypeError} When `parts` is not an array, is empty, has a hole (`["a", , "b"]`) or
 *   holds something other than a string.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stepToolCallId } from "@tool-boundary/durable";
 *
 * assert.equal(await stepToolCallId(["wf-42", "lookup", "0"]), "wf-42:lookup:0");
 * const hashed = await stepToolCallId(["wf-42", "look up: the invoice"]);
 * assert.match(hashed, /^wf-42:look_up__the_invoice::[A-Za-z0-9_-]{43}$/);
 * assert.equal(await stepToolCallId(["wf-42", "look up: the invoice"]), hashed);
 * assert.notEqual(await stepToolCallId(["wf-42", "look up? the invoice"]), hashed);
 * ```
 */
export async function stepToolCallId(parts: readonly string[]): Promise<string> {
  const own = ownParts(parts);
  const joined = own.join(":");
  if (
    own.every((part) => PART.test(part)) && joined.length <= MAX_STEP_TOOL_CALL_ID_LENGTH &&
    !/^\.+$/.test(joined)
  ) {
    return joined;
  }
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(JSON.stringify(own)),
  );
  const prefix = own.map((part) => part.replace(/[^A-Za-z0-9_.-]/g, "_")).join(":")
    .slice(0, PREFIX_LENGTH);
  return `${prefix}::${base64url(new Uint8Array(digest))}`;
}

/**
 * The parts as a plain array of their own, each read once: a hole (which `join` makes an empty
 * part, `"a::b"` like a hashed or probe ID), a getter or Proxy that answers twice, or a `toJSON`
 * of the array's own could otherwise give two identities one ID.
 */
function ownParts(parts: unknown): string[] {
  const refuse = () =>
    new TypeError(
      "Cannot derive a tool call ID: parts must be a non-empty array of strings, without holes",
    );
  const own: string[] = [];
  try {
    if (!Array.isArray(parts)) throw refuse();
    const length = parts.length;
    if (length === 0) throw refuse();
    for (let i = 0; i < length; i++) {
      if (!Object.hasOwn(parts, i)) throw refuse();
      const part: unknown = parts[i];
      if (typeof part !== "string") throw refuse();
      own.push(part);
    }
  } catch {
    // A revoked Proxy, or a getter that threw: not a step identity either.
    throw refuse();
  }
  return own;
}

/**
 * The ID probe `n` of a call runs under: the call's ID and `::p<n>`. No ID from
 * {@linkcode stepToolCallId} ends so, and an ID of at most
 * {@linkcode MAX_STEP_TOOL_CALL_ID_LENGTH} characters stays within the core's 256 with it.
 *
 * @param toolCallId The call's ID.
 * @param n The probe's number, 1 to {@linkcode MAX_PROBES}.
 * @returns The probe's ID.
 * @throws {RangeError} When `n` is not an integer from 1 to {@linkcode MAX_PROBES}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeToolCallId } from "@tool-boundary/durable";
 * assert.equal(probeToolCallId("wf-42:lookup:0", 1), "wf-42:lookup:0::p1");
 * ```
 */
export function probeToolCallId(toolCallId: string, n: number): string {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_PROBES) {
    throw new RangeError(`Invalid probe number: expected an integer from 1 to ${MAX_PROBES}`);
  }
  return `${toolCallId}::p${n}`;
}

/**
 * Thrown by {@linkcode invokeOnce} when the step should be tried again later, by the engine's
 * own retries: the call's outcome is unknown (its record is still PROJECTING: the first attempt
 * is still running, or died while its tool ran) or the store could not be reached. A plain
 * `Error` subclass, so Cloudflare Workflows, Restate (`ctx.run`) and DBOS (steps with
 * `retriesAllowed`) retry it; none of them retries it forever, so a call that never settles ends
 * as a failed step, for a person to look at.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RetryLaterError } from "@tool-boundary/durable";
 * const error = new RetryLaterError("OUTCOME_UNKNOWN", "wf-42:lookup:0");
 * assert.ok(error instanceof Error);
 * assert.equal(error.name, "RetryLaterError");
 * assert.equal(error.code, "OUTCOME_UNKNOWN");
 * assert.equal(error.toolCallId, "wf-42:lookup:0");
 * ```
 */
export class RetryLaterError extends Error {
  /** Why: the outcome is unknown, or the store was unavailable. */
  readonly code: "OUTCOME_UNKNOWN" | "STORE_UNAVAILABLE";
  /** The call's tool call ID. */
  readonly toolCallId: string;

  /**
   * Makes the error for a call.
   *
   * @param code Why the step should be retried.
   * @param toolCallId The call's tool call ID.
   */
  constructor(code: "OUTCOME_UNKNOWN" | "STORE_UNAVAILABLE", toolCallId: string) {
    super(
      code === "OUTCOME_UNKNOWN"
        ? `The outcome of tool call ${toolCallId} is not recorded yet; retry the step later`
        : `The store was unavailable for tool call ${toolCallId}; retry the step later`,
    );
    this.name = "RetryLaterError";
    this.code = code;
    this.toolCallId = toolCallId;
  }
}

/** What {@linkcode invokeOnce} needs of a boundary: a `ToolBoundary` has all of it. */
export interface Invoker {
  /**
   * `ToolBoundary.store`: when given, {@linkcode invokeOnce} checks before anything else that it
   * has the `CallIndex` capability, which `recall` needs.
   */
  readonly store?: Durable;
  /** `ToolBoundary.invoke`, on a boundary made with `onDuplicate: "replay"`. */
  invoke(
    run: Run,
    envelope: Envelope,
    options?: { signal?: AbortSignal },
  ): Promise<Result>;
  /** `ToolBoundary.inspect`; used only with `probeAfterMs`. */
  inspect(runId: string, toolCallId: string): Promise<Recorded | null>;
  /**
   * `ToolBoundary.recall`; used only when the run refuses the call (RUN_INACTIVE,
   * DEADLINE_EXCEEDED), to give a call begun before the recorded outcome all the same.
   */
  recall(run: Run, envelope: Envelope): Promise<Result>;
}

/** What happened to a call whose outcome was unknown, for the harness's logs and tests. */
export interface UnknownOutcome {
  /** The ID whose record was still PROJECTING (the call's, or a probe's). */
  toolCallId: string;
  /** What `invokeOnce` does about it: throw a {@linkcode RetryLaterError}, or run a probe. */
  action: "retry" | "probe";
}

/** Options of {@linkcode invokeOnce}. */
export interface InvokeOnceOptions {
  /**
   * What a call whose record is still PROJECTING (OUTCOME_UNKNOWN) gets:
   * - `"retry"`: a {@linkcode RetryLaterError}, so the engine backs off and retries the step;
   *   once the first attempt's complete lands, the retry gets the recorded result. For a first
   *   attempt that may still be running (its process lives on), or for a tool that must not be
   *   asked twice.
   * - `"probe"`: the tool is asked again under a new ID ({@linkcode probeToolCallId}: `::p1`,
   *   then `::p2` if that one died too, ...), and its outcome is the step's. Each probe is a call
   *   of its own, run at most once. Sound only when asking again is harmless and the answer
   *   of now is as good as the lost one: the tool is read-only (every boundary tool is), has no
   *   side effect that counts (no "mark as read", no per-call charge that matters), and nobody
   *   saw the first answer (nobody did: it was never recorded).
   */
  onUnknown: "retry" | "probe";
  /**
   * With `"probe"`: probe only once the record has been PROJECTING this long (from its
   * `createdAt`, by `clock`); before that, a {@linkcode RetryLaterError}. Set it above the
   * tool's timeout, plus time for one store write, and a first attempt that is still running
   * finishes (or times out) before anything is asked again. @default 0 (probe at once)
   */
  probeAfterMs?: number;
  /** Most probes for one call, 1 to {@linkcode MAX_PROBES}. @default 3 */
  maxProbes?: number;
  /** Passed to `invoke`. */
  signal?: AbortSignal;
  /** Told before each retry or probe an unknown outcome causes; its errors propagate. */
  onOutcomeUnknown?: (unknown: UnknownOutcome) => void | Promise<void>;
  /** Epoch ms clock for `probeAfterMs`. @default Date.now */
  clock?: () => number;
}

/**
 * Invokes a tool from a durable step so that it runs at most once however often the engine
 * retries the step. Give it the same envelope on every attempt (the ID from
 * {@linkcode stepToolCallId}) and a boundary made with `onDuplicate: "replay"`, over a store
 * that outlives the step's process (an `UpstashStore`; a `MemoryStore` only where the process
 * survives the step's failure). Returns what the step should return:
 * - the call's result: READY, or an ERROR the record holds (`replayed: true` on a retry);
 *   also once the run has ended or passed its deadline: a call begun before gets what
 *   `recall` gives (its recorded result, or RECORD_EXPIRED once the record is gone), and only a
 *   call never begun gets the run's refusal (RUN_INACTIVE, DEADLINE_EXCEEDED);
 * - a refusal that recorded nothing (INVALID_INPUT, BUDGET_EXCEEDED, ...): the same on a retry;
 * - for OUTCOME_UNKNOWN, the policy of `options.onUnknown`.
 *
 * @param invoker The boundary.
 * @param run The run context.
 * @param envelope The call, the same on every attempt.
 * @param options The OUTCOME_UNKNOWN policy and the rest.
 * @returns The result to give back from the step.
 * @throws {RetryLaterError} OUTCOME_UNKNOWN under `"retry"` (or before `probeAfterMs`, or once
 *   `maxProbes` probes all died), or STORE_UNAVAILABLE: retry the step later.
 * @throws {TypeError} When the boundary answers DUPLICATE_TOOL_CALL: it was not made with
 *   `onDuplicate: "replay"`, and a retried step would never get its result; or its store has no
 *   `CallIndex` (a call begun before the run refused new ones could not be recalled).
 * @throws {RangeError} When `maxProbes` or `probeAfterMs` is out of range.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { MemoryStore } from "@tool-boundary/core/memory";
 * import { invokeOnce, probeToolCallId, RetryLaterError } from "@tool-boundary/durable";
 *
 * let executions = 0;
 * let hang = true;
 * const lookup = defineTool({
 *   name: "lookup",
 *   readOnly: true,
 *   execute: () => (executions++, hang ? new Promise<never>(() => {}) : { total: 42 }),
 *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "billing", content: raw.total }),
 * });
 * const store = new MemoryStore();
 * const boundary = new ToolBoundary({ store, tools: [lookup], onDuplicate: "replay" });
 * const run = await boundary.startRun({ runId: "wf-7" });
 * const envelope = { toolCallId: "wf-7:total", runId: run.runId, toolName: "lookup", input: {} };
 *
 * // The first attempt's process dies while the tool runs: its record stays PROJECTING.
 * void boundary.invoke(run, envelope);
 * await new Promise((resolve) => setTimeout(resolve, 10));
 * hang = false;
 *
 * // "retry": the engine is told to come back later; nothing runs.
 * await assert.rejects(
 *   invokeOnce(boundary, run, envelope, { onUnknown: "retry" }),
 *   (error) => error instanceof RetryLaterError && error.code === "OUTCOME_UNKNOWN",
 * );
 * // "probe": the read-only tool is asked again, once, under a new ID.
 * const probed = await invokeOnce(boundary, run, envelope, { onUnknown: "probe" });
 * assert.equal(probed.status === "READY" && probed.content, 42);
 * assert.equal(probed.toolCallId, probeToolCallId("wf-7:total", 1));
 * const again = await invokeOnce(boundary, run, envelope, { onUnknown: "probe" });
 * assert.deepEqual(again, { ...probed, replayed: true });
 * assert.equal(executions, 2); // the call that died, and its probe
 * ```
 */
export async function invokeOnce(
  invoker: Invoker,
  run: Run,
  envelope: Envelope,
  options: InvokeOnceOptions,
): Promise<Result> {
  const { onUnknown, probeAfterMs = 0, maxProbes = 3, signal, onOutcomeUnknown } = options;
  if (onUnknown !== "retry" && onUnknown !== "probe") {
    throw new TypeError('Cannot invoke once: onUnknown must be "retry" or "probe"');
  }
  if (!Number.isSafeInteger(maxProbes) || maxProbes < 1 || maxProbes > MAX_PROBES) {
    throw new RangeError(`Invalid maxProbes: expected an integer from 1 to ${MAX_PROBES}`);
  }
  if (typeof probeAfterMs !== "number" || !(probeAfterMs >= 0)) {
    throw new RangeError("Invalid probeAfterMs: expected a number of at least 0");
  }
  // Checked at the first call, not only once a run refuses one and recall is needed.
  if (invoker.store !== undefined) requireCapability(invoker.store, "CallIndex", "invoke once");
  const clock = options.clock ?? Date.now;
  const invokeOptions = signal === undefined ? undefined : { signal };
  // Each field read once: every attempt and probe sends the same values.
  const { toolCallId: callId, runId, toolName, input } = envelope;
  for (let probe = 0;; probe++) {
    const toolCallId = probe === 0 ? callId : probeToolCallId(String(callId), probe);
    const attempt = { toolCallId, runId, toolName, input };
    let result = await invoker.invoke(run, attempt, invokeOptions);
    if (
      result.status === "ERROR" &&
      (result.code === "RUN_INACTIVE" || result.code === "DEADLINE_EXCEEDED")
    ) {
      // The run refuses new calls, not the outcome of one it began: that stays the step's.
      const recalled = await invoker.recall(run, attempt);
      if (recalled.status === "READY" || recalled.code !== "RECORD_NOT_FOUND") result = recalled;
    }
    if (result.status === "READY") return result;
    // STORE_UNAVAILABLE and OUTCOME_UNKNOWN come only for an ID preflight accepted.
    const id = String(toolCallId);
    if (result.code === "DUPLICATE_TOOL_CALL") {
      throw new TypeError(
        'Cannot invoke once: the boundary refuses duplicates; create it with onDuplicate: "replay"',
      );
    }
    if (result.code === "STORE_UNAVAILABLE") {
      throw new RetryLaterError("STORE_UNAVAILABLE", id);
    }
    if (result.code !== "OUTCOME_UNKNOWN") return result;
    let action: UnknownOutcome["action"] = onUnknown;
    if (
      action === "probe" &&
      (probe === maxProbes || !await settled(invoker, run, id, probeAfterMs, clock))
    ) {
      action = "retry";
    }
    await onOutcomeUnknown?.({ toolCallId: id, action });
    if (action === "retry") throw new RetryLaterError("OUTCOME_UNKNOWN", id);
  }
}

/** Whether a PROJECTING record is old enough to probe (always, when `probeAfterMs` is 0). */
async function settled(
  invoker: Invoker,
  run: Run,
  toolCallId: string,
  probeAfterMs: number,
  clock: () => number,
): Promise<boolean> {
  if (probeAfterMs === 0) return true;
  let record;
  try {
    record = await invoker.inspect(run.runId, toolCallId);
  } catch {
    throw new RetryLaterError("STORE_UNAVAILABLE", toolCallId);
  }
  // A record that completed or expired since is read again by the next retry.
  return record !== null && record.status === "PROJECTING" &&
    clock() - record.createdAt >= probeAfterMs;
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
