/**
 * `endRun`: the run ended in the store (no call may begin after it), then its READY records
 * read back and projected into bounded observed facts.
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import { isSafeRunId } from "../ids.ts";
import { rowsToFacts } from "../progress.ts";
import { emit, type Setup } from "../setup.ts";
import type { RunContext, RunEnd } from "../types.ts";
import { storeCall } from "./store_call.ts";

/**
 * Ends a run and reports its facts, within `limits.factCount` and `limits.factBytes`, and how
 * many READY records the caps left out. Ending twice gives the same facts while the records live.
 *
 * @returns The facts and the number omitted.
 * @throws {BoundaryError} RUN_NOT_FOUND, INVALID_RUN_ID or STORE_UNAVAILABLE.
 */
export async function endRun(setup: Setup, run: RunContext | string): Promise<RunEnd> {
  const runId = typeof run === "string" ? run : run?.runId;
  if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
  const ended = await storeCall(() => setup.store.endRun({ runId, now: setup.clock() }));
  if (!ended.ok) throw new BoundaryError(ended.code);
  // This boundary refuses the run's later calls before it asks the store.
  if (typeof run !== "string") setup.ended.add(run);
  const { factCount, factBytes } = setup.limits;
  const read = await storeCall(() =>
    setup.store.readFacts({
      runId,
      identities: ended.toolCallIds.map((toolCallId) => ({ runId, toolCallId })),
      maxFacts: factCount,
      maxBytes: factBytes,
    })
  );
  const { facts, omitted } = rowsToFacts(runId, read.rows, {
    maxFacts: factCount,
    maxBytes: factBytes,
  });
  const report = { facts, omitted: omitted + read.omitted };
  emit(setup, { type: "run.ended", runId, facts: facts.length, omitted: report.omitted });
  return report;
}
