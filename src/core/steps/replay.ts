/**
 * The recorded result of a call, given again: by `invoke` when the boundary replays duplicates
 * (`onDuplicate: "replay"`, from the begin step) and by `recall`. Nothing runs, nothing is
 * written, no budget is used.
 *
 * @module
 */
import type { StoredRecord } from "../store.ts";
import type { BoundaryResult, Projection } from "../types.ts";
import { errorResult } from "./call.ts";

/**
 * What the first call returned, from its record, with `replayed: true`: READY with the recorded
 * projection, or ERROR with the recorded code. A record still PROJECTING gives OUTCOME_UNKNOWN
 * (the first call may still be running, or died before its outcome was written); a record gone
 * gives RECORD_EXPIRED. Neither of these two is marked replayed: no recorded result was given.
 *
 * @param toolCallId The key, as the caller sent it.
 * @param record The key's record, or `null` once it expired.
 */
export function replayResult(toolCallId: string, record: StoredRecord | null): BoundaryResult {
  if (record === null) return errorResult(toolCallId, "RECORD_EXPIRED");
  if (record.status === "READY" && record.agentResultJson !== null) {
    // Exactly the text the first result was parsed from, so the agent gets the same value.
    const { evidence, scope, content } = JSON.parse(record.agentResultJson) as Projection;
    return { status: "READY", toolCallId, evidence, scope, content, replayed: true };
  }
  if (record.status === "ERROR" && record.errorCode !== null) {
    return { ...errorResult(toolCallId, record.errorCode), replayed: true };
  }
  return errorResult(toolCallId, "OUTCOME_UNKNOWN");
}
