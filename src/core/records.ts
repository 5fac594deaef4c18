/**
 * Building stored records, shared by every store so they all create the same PROJECTING record.
 *
 * @module
 */
import type { BeginRequest, StoredRecord } from "./store.ts";

/**
 * The PROJECTING record a successful begin creates: the complete request, the exact IDs, no raw
 * response, no agent result, no evidence yet.
 *
 * @param request The begin request.
 * @param expiresAt Epoch ms when the record expires, as the store fixes it at creation.
 * @returns The new record.
 *
 * @example
 * ```ts
 * import { projectingRecord } from "@tool-boundary/core";
 * const record = projectingRecord({
 *   runId: "r1", toolCallId: "call_1", toolName: "t", requestJson: "{}", attemptId: "a1",
 *   ttlMs: 1_000, now: 0,
 * }, 1_000);
 * console.log(record.status, record.expiresAt); // "PROJECTING" 1000
 * ```
 */
export function projectingRecord(request: BeginRequest, expiresAt: number): StoredRecord {
  return {
    runId: request.runId,
    toolCallId: request.toolCallId,
    toolName: request.toolName,
    status: "PROJECTING",
    evidence: null,
    requestJson: request.requestJson,
    rawJson: null,
    agentResultJson: null,
    errorCode: null,
    attemptId: request.attemptId,
    createdAt: request.now,
    updatedAt: request.now,
    expiresAt,
  };
}
