/**
 * Step 4 of `invoke`: runs the tool, under the tool stage's one stop (its time limit, the run
 * deadline, the caller's signal), and reads what it returned once.
 *
 * @module
 */
import { type JsonSnapshot, snapshotJson } from "../json.ts";
import { DEFAULT_TOOL_TIMEOUT_MS } from "../limits.ts";
import { isToolError, type ToolError } from "../tool.ts";
import { type Call, isThenable, STOPPED } from "./call.ts";

/**
 * Executes the tool with the recorded request, awaits it when it returns a promise, and reads
 * the value once. A thrown or rejected executor is EXECUTION_FAILED, its record keeping what it
 * threw as `failure` (TOOL_TIMEOUT or CANCELLED, with no failure, when the stage was stopped); `toolError(raw)` gives the snapshot of its `raw`, marked for
 * `check` to fail the call with.
 *
 * @returns The raw response read once (maybe refused: `check` decides), or `null` when the
 *   call's outcome is decided; a promise of either only when the executor returned one.
 */
export function execute(call: Call): JsonSnapshot | null | Promise<JsonSnapshot | null> {
  const { rawDepth, rawBytes } = call.setup.limits;
  const signal = call.startTool(call.tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS);
  let raw: unknown;
  try {
    raw = call.tool.execute(call.input, { signal, run: call.run!, toolCallId: call.toolCallId });
  } catch (error) {
    return call.threw(error);
  }
  if (isToolError(raw)) return failedWith(call, raw);
  // Plain data is read once, by the snapshot; only what it refuses is asked whether it is a
  // promise (its `then` read, as `await` would), and then awaited and read once.
  const snapshot = snapshotJson(raw, rawDepth, rawBytes);
  if (!("problem" in snapshot)) return snapshot;
  let thenable = false;
  try {
    thenable = isThenable(raw);
  } catch (error) {
    return call.fail("SERIALIZATION_FAILED", null, error); // a `then` getter or trap threw
  }
  return thenable ? settle(call, raw as PromiseLike<unknown>) : snapshot;
}

/** Awaits the executor's promise until the stage is stopped, and reads its value once. */
async function settle(call: Call, pending: PromiseLike<unknown>): Promise<JsonSnapshot | null> {
  let raw: unknown;
  try {
    const running = Promise.resolve(pending);
    running.catch(() => {}); // a late rejection after a stop is not unhandled
    raw = await Promise.race([running, call.stopped()]);
  } catch (error) {
    // Rejected after a stop: the stop decides, and what the tool threw then is not its failure.
    return call.stopCode === null ? call.threw(error) : call.fail(call.stopCode, null, error);
  }
  if (raw === STOPPED) return call.fail(call.stopCode!, null);
  if (isToolError(raw)) return failedWith(call, raw);
  const { rawDepth, rawBytes } = call.setup.limits;
  return snapshotJson(raw, rawDepth, rawBytes);
}

/** The tool failed and said so: its raw response is read once, and the call fails in `check`. */
function failedWith(call: Call, failure: ToolError): JsonSnapshot {
  call.toolFailed = true;
  // A frozen object of the boundary's own: reading `raw` runs no foreign code.
  const { rawDepth, rawBytes } = call.setup.limits;
  return snapshotJson(failure.raw, rawDepth, rawBytes);
}
