/**
 * Step 2 of `invoke`: may this tool be called with this input? The `authorize` hook, bounded in
 * time, then the read-only rule. The hook is asked with the run's context: given only a run
 * reference, the call reads the run first (one more store read, only with a hook).
 *
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import { MAX_TIMER_MS } from "../limits.ts";
import { toRunContext } from "../run/start_run.ts";
import type { ErrorResult, RunContext } from "../types.ts";
import { abortReason, type Call, isAborted, isThenable, listen, unlisten } from "./call.ts";

/**
 * Asks `authorize` (when the boundary has one), then refuses a writable tool.
 *
 * @returns `null` when the call may go on, else the refusal (nothing is recorded); a promise of
 *   either only when the boundary has an `authorize` hook.
 */
export function authorize(call: Call): ErrorResult | null | Promise<ErrorResult | null> {
  return call.setup.authorize === undefined ? readOnly(call) : askThenCheck(call);
}

async function askThenCheck(call: Call): Promise<ErrorResult | null> {
  const run = call.given ?? await loadRun(call);
  const refusal = "code" in run ? run : await ask(call, run);
  return refusal === null ? readOnly(call) : call.refuse(refusal.code, refusal.error);
}

function readOnly(call: Call): ErrorResult | null {
  return call.tool.readOnly === true ? null : call.refuse("NOT_READ_ONLY");
}

/**
 * Reads the context of a call given a run reference, for the hook: the run, when it is the
 * instance the reference names (it becomes the call's run). The store's begin checks it again.
 *
 * @returns The context, else the refusal.
 */
async function loadRun(
  call: Call,
): Promise<RunContext | { code: ErrorCode; error?: unknown }> {
  let state;
  try {
    state = await call.setup.store.getRun(call.runId);
  } catch (error) {
    return { code: "STORE_UNAVAILABLE", error };
  }
  if (state === null || (call.instance !== undefined && state.startedAt !== call.instance)) {
    return { code: "RUN_NOT_FOUND" };
  }
  return call.run = toRunContext(state);
}

const TIMED_OUT: unique symbol = Symbol("timed out");
const CANCELLED: unique symbol = Symbol("cancelled");

/**
 * Asks `authorize`, bounded by the run deadline and `authorizeTimeoutMs`, and cut short by the
 * caller's signal. It gets its own copy of the recorded request, so nothing it does can change
 * what the tool receives.
 *
 * @returns `null` when allowed, else the refusal: UNAUTHORIZED for anything but `true`, a throw
 *   or the timeout; DEADLINE_EXCEEDED when the deadline came first; CANCELLED when the caller
 *   aborted while it was asked.
 */
async function ask(
  call: Call,
  run: RunContext,
): Promise<{ code: ErrorCode; error?: unknown } | null> {
  const { setup, signal } = call;
  const untilDeadline = run.deadline - setup.clock();
  const deadlineFirst = untilDeadline <= setup.authorizeTimeoutMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  let allowed: unknown;
  try {
    allowed = setup.authorize!(run, {
      toolCallId: call.toolCallId,
      tool: call.tool,
      input: JSON.parse(call.requestJson),
    });
    if (isThenable(allowed)) {
      const asking = Promise.resolve(allowed);
      asking.catch(() => {}); // a late rejection after the timeout is not unhandled
      const waitMs = Math.min(setup.authorizeTimeoutMs, Math.max(0, untilDeadline), MAX_TIMER_MS);
      allowed = await Promise.race([
        asking,
        new Promise<typeof TIMED_OUT | typeof CANCELLED>((resolve) => {
          timer = setTimeout(() => resolve(TIMED_OUT), waitMs);
          if (signal === undefined) return;
          if (isAborted(signal)) resolve(CANCELLED);
          else onAbort = listen(signal, () => resolve(CANCELLED));
        }),
      ]);
    }
  } catch (error) {
    return { code: "UNAUTHORIZED", error };
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) unlisten(signal!, onAbort);
  }
  if (allowed === TIMED_OUT) {
    return { code: deadlineFirst ? "DEADLINE_EXCEEDED" : "UNAUTHORIZED" };
  }
  if (allowed === CANCELLED) return { code: "CANCELLED", error: abortReason(signal!) };
  return allowed === true ? null : { code: "UNAUTHORIZED" };
}
