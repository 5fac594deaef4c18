/**
 * Building stored records, shared by every store so they all create the same PROJECTING record.
 *
 * @module
 */
import type { BeginRequest, FactRow, StoredRecord } from "./store.ts";

/**
 * The PROJECTING record a successful begin creates: the complete request, the exact IDs, no raw
 * response, no agent result, no evidence yet; and, for a begin with a `cost`, that cost reserved
 * (`cost: { reserved, spent: null }`).
 *
 * @param request The begin request.
 * @param expiresAt Epoch ms when the record expires, as the store fixes it at creation.
 * @param seq The call's position in its run (the run's `used.calls` after this begin).
 * @returns The new record.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { projectingRecord } from "@tool-boundary/core/store";
 * const record = projectingRecord({
 *   runId: "r1", toolCallId: "call_1", toolName: "t", requestJson: "{}", requestDigest: "d",
 *   attemptId: "a1", ttlMs: 1_000, now: 0,
 * }, 1_000, 1);
 * assert.equal(record.status, "PROJECTING");
 * assert.equal(record.seq, 1);
 * assert.equal(record.expiresAt, 1_000);
 * ```
 */
export function projectingRecord(
  request: BeginRequest,
  expiresAt: number,
  seq: number,
): StoredRecord {
  const record: StoredRecord = {
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
    seq,
    createdAt: request.now,
    updatedAt: request.now,
    expiresAt,
  };
  if (request.cost !== undefined) record.cost = { reserved: request.cost, spent: null };
  return record;
}

/**
 * The fact row of a record that may become a fact: READY, with an agent result and evidence
 * EVIDENCE_FOUND or NO_EVIDENCE. The row has no request and no raw response, as
 * `Store.readFacts` returns it.
 *
 * @param record A record, or nothing.
 * @returns The fact row, or `null` when the record may not become a fact.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { factRowOf, projectingRecord } from "@tool-boundary/core/store";
 * const projecting = projectingRecord({
 *   runId: "r1", toolCallId: "call_1", toolName: "t", requestJson: "{}", requestDigest: "d",
 *   attemptId: "a1", ttlMs: 1_000, now: 0,
 * }, 1_000, 1);
 * assert.equal(factRowOf(projecting), null);
 * const ready = {
 *   ...projecting,
 *   status: "READY" as const,
 *   evidence: "NO_EVIDENCE" as const,
 *   agentResultJson: '{"evidence":"NO_EVIDENCE","scope":"s","content":null}',
 * };
 * assert.equal(factRowOf(ready)?.toolCallId, "call_1");
 * ```
 */
export function factRowOf(record: StoredRecord | null | undefined): FactRow | null {
  if (
    record == null || record.status !== "READY" || record.agentResultJson === null ||
    (record.evidence !== "EVIDENCE_FOUND" && record.evidence !== "NO_EVIDENCE")
  ) {
    return null;
  }
  return {
    runId: record.runId,
    toolCallId: record.toolCallId,
    toolName: record.toolName,
    status: record.status,
    evidence: record.evidence,
    agentResultJson: record.agentResultJson,
    updatedAt: record.updatedAt,
  };
}
