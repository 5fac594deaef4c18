/**
 * The call path of `invoke`, in order: each step a function in its own file of this folder. A
 * newcomer reads this file to know where every rule of a call lives.
 *
 * @module
 */
import type { InvokeOptions } from "../options.ts";
import { ledgerChecked, type Setup } from "../setup.ts";
import type { BoundaryResult, RunContext, RunRef, ToolCallEnvelope } from "../types.ts";
import { authorize } from "./authorize.ts";
import { begin } from "./begin.ts";
import { Call } from "./call.ts";
import { check } from "./check.ts";
import { complete } from "./complete.ts";
import { execute } from "./execute.ts";
import { preflight } from "./preflight.ts";
import { project } from "./project.ts";
import { result } from "./result.ts";

/**
 * Runs one tool call through the steps; `ToolBoundary.invoke` tells what it promises.
 *
 * @returns The bounded READY result, or an ERROR with a safe code. Never raw data.
 * @throws {TypeError} When `run` is neither a run context nor a run reference,
 *   `options.signal` not an AbortSignal, or the boundary's `ledgerKey` not a key pair
 *   (programming errors): nothing is recorded.
 */
export async function invoke(
  setup: Setup,
  run: RunContext | RunRef,
  envelope: ToolCallEnvelope,
  options: InvokeOptions | undefined,
): Promise<BoundaryResult> {
  // A ledger key that cannot sign would lose every outcome: no call begins with one. Once the
  // key proved good, no await.
  const keyChecked = ledgerChecked(setup);
  if (keyChecked !== undefined) await keyChecked;
  const call = preflight(setup, run, envelope, options);
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
