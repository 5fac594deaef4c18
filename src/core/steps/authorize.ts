/**
 * Step 2 of `invoke`: may this tool be called with this input? The `authorize` hook, bounded in
 * time, then the read-only rule.
 *
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import { MAX_TIMER_MS } from "../limits.ts";
import type { ErrorResult } from "../types.ts";
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
  const refusal = await ask(call);
  return refusal === null ? readOnly(call) : call.refuse(refusal.code, refusal.error);
}

function readOnly(call: Call): ErrorResult | null {
  return call.tool.readOnly === true ? null : call.refuse("NOT_READ_ONLY");
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
async function ask(call: Call): Promise<{ code: ErrorCode; error?: unknown } | null> {
  const { setup, run, signal } = call;
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
