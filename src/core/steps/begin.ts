/**
 * Step 3 of `invoke`: the run accepts the call. Checked here first (ended by this boundary,
 * past its deadline, the caller gave up), then atomically by the store, which creates the
 * PROJECTING record.
 *
 * @module
 */
import type { ErrorResult } from "../types.ts";
import type { Call } from "./call.ts";

/**
 * Begins the call: one atomic store operation that checks the run, the deadline, the key and
 * the budgets and creates the record, or refuses and writes nothing.
 *
 * @returns `null` once the record exists, else the refusal (nothing is recorded). When the
 *   caller aborted while the store was asked, the call's outcome is already ERROR CANCELLED:
 *   the tool never runs and complete ends the record so.
 */
export async function begin(call: Call): Promise<ErrorResult | null> {
  const { setup, run, tool, toolCallId } = call;
  if (setup.ended.has(run)) return call.refuse("RUN_INACTIVE");
  const now = setup.clock();
  if (now >= run.deadline) return call.refuse("DEADLINE_EXCEEDED");
  if (call.cancelled()) return call.refuse("CANCELLED");
  const attemptId = call.attemptId = crypto.randomUUID();
  let begun;
  try {
    begun = await setup.store.begin({
      runId: run.runId,
      toolCallId,
      toolName: tool.name,
      requestJson: call.requestJson,
      attemptId,
      ttlMs: setup.recordTtlMs,
      now,
    });
  } catch (error) {
    return call.refuse("STORE_UNAVAILABLE", error);
  }
  if (!begun.ok) return call.refuse(begun.code);
  if (call.cancelled()) call.fail("CANCELLED", null);
  return null;
}
