/**
 * `checkCitations`: whether the run's records back the tool call IDs a final answer cites, from
 * one store read over all of them.
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import { isSafeRunId, isSafeToolCallId } from "../ids.ts";
import { MAX_CITATIONS } from "../limits.ts";
import type { Setup } from "../setup.ts";
import type { Citation, RunContext } from "../types.ts";
import { storeCall } from "./store_call.ts";

/**
 * One verdict per cited ID; `ToolBoundary.checkCitations` tells the verdicts.
 *
 * @returns The verdicts, in the order given (a repeated ID gets the same verdict again).
 * @throws {BoundaryError} INVALID_RUN_ID or STORE_UNAVAILABLE.
 * @throws {TypeError} When `toolCallIds` is not an array of strings.
 * @throws {RangeError} When it holds more than {@linkcode MAX_CITATIONS} IDs.
 */
export async function checkCitations(
  setup: Setup,
  run: RunContext | string,
  toolCallIds: readonly string[],
): Promise<Citation[]> {
  const runId = typeof run === "string" ? run : run?.runId;
  if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
  if (!Array.isArray(toolCallIds) || !toolCallIds.every((id) => typeof id === "string")) {
    throw new TypeError("Cannot check citations: toolCallIds must be an array of strings");
  }
  if (toolCallIds.length > MAX_CITATIONS) {
    throw new RangeError(`Cannot check citations: more than ${MAX_CITATIONS} tool call IDs`);
  }
  const ids = [...new Set(toolCallIds.filter(isSafeToolCallId))];
  const found = new Map<string, Citation>();
  if (ids.length > 0) {
    const read = await storeCall(() =>
      setup.store.readFacts({
        runId,
        identities: ids.map((toolCallId) => ({ runId, toolCallId })),
        maxFacts: ids.length,
        maxBytes: Infinity,
      })
    );
    for (const row of read.rows) {
      if (row.runId !== runId || row.status !== "READY") continue;
      if (row.evidence === "EVIDENCE_FOUND") {
        found.set(row.toolCallId, { toolCallId: row.toolCallId, verdict: "EVIDENCE" });
      } else if (row.evidence === "NO_EVIDENCE") {
        const { scope } = JSON.parse(row.agentResultJson) as { scope: string };
        found.set(row.toolCallId, {
          toolCallId: row.toolCallId,
          verdict: "NEGATIVE_OBSERVATION",
          scope,
        });
      }
    }
  }
  return toolCallIds.map((toolCallId) =>
    found.has(toolCallId) ? { ...found.get(toolCallId)! } : { toolCallId, verdict: "NOT_EVIDENCE" }
  );
}
