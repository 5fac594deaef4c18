/**
 * Step 7 of `invoke`: the record ends READY or ERROR, in one atomic store operation, and the
 * observer hears how the call finished.
 *
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import type { CompleteOutcome } from "../store.ts";
import { emit } from "../setup.ts";
import type { Call } from "./call.ts";
import { result } from "./result.ts";

/** Not expected: every step decides an outcome, or the catch-all in `invoke` does. */
const UNDECIDED: CompleteOutcome = {
  status: "ERROR",
  errorCode: "EXECUTION_FAILED",
  rawJson: null,
};

/**
 * Completes the record with the call's outcome, for the attempt that began it.
 *
 * @returns `null` when the record is READY, else the code the agent gets: the outcome's, or the
 *   store's (RECORD_EXPIRED, ILLEGAL_TRANSITION, STORE_UNAVAILABLE) when it could not be written.
 */
export async function complete(call: Call): Promise<ErrorCode | null> {
  const { setup, run, toolCallId } = call;
  const outcome = call.outcome ?? UNDECIDED;
  let code: ErrorCode | null = outcome.status === "ERROR" ? outcome.errorCode : null;
  let failure = call.error;
  try {
    const completed = await setup.store.complete({
      runId: run.runId,
      toolCallId,
      attemptId: call.attemptId,
      outcome,
      now: setup.clock(),
    });
    if (!completed.ok) code = completed.code;
  } catch (thrown) {
    code = "STORE_UNAVAILABLE";
    failure = thrown;
  }
  if (setup.observe !== undefined) {
    // The observer's own copy of the agent's result: nothing it does can change that.
    const agentResult = result(call, code);
    emit(setup, {
      type: "call.finished",
      runId: run.runId,
      toolCallId,
      toolName: call.tool.name,
      status: agentResult.status,
      code: agentResult.status === "ERROR" ? agentResult.code : null,
      durationMs: setup.clock() - call.startedAt,
      result: structuredClone(agentResult),
      ...(failure === undefined ? {} : { error: failure }),
    });
  }
  return code;
}
