/**
 * `recall`: the recorded result of one call, for a harness resuming after a crash. The checks of
 * preflight, then one store read; nothing runs, nothing is written, no budget is used.
 *
 * @module
 */
import { requestDigest } from "../digest.ts";
import type { Setup } from "../setup.ts";
import type { BoundaryResult, RunContext, RunRef, ToolCallEnvelope } from "../types.ts";
import { Call, errorResult } from "./call.ts";
import { preflight } from "./preflight.ts";
import { replayResult } from "./replay.ts";

/**
 * Gives back the recorded result of the run's begun call under the envelope's ID, when its
 * request is the envelope's (and the run is the instance asked for, when one is named);
 * `ToolBoundary.recall` tells every answer.
 *
 * @returns The recorded result, or an ERROR with a safe code.
 * @throws {TypeError} When `run` is neither a run context nor a run reference (a programming
 *   error).
 */
export async function recall(
  setup: Setup,
  run: RunContext | RunRef,
  envelope: ToolCallEnvelope,
): Promise<BoundaryResult> {
  // The checks of invoke, without its events: a recall is no tool call.
  const call = preflight({ ...setup, observe: undefined }, run, envelope, undefined);
  if (!(call instanceof Call)) return call;
  const { runId, instance, toolCallId } = call;
  let found;
  try {
    const digest = await requestDigest(call.tool.name, call.input);
    found = await setup.store.lookupCall(runId, toolCallId, instance);
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
